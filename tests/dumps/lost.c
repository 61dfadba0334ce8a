/*
 * lost.c - a dump that cannot be written (its directory removed; the test
 * sends stderr to /dev/full), then one that can: its growth is both
 * allocations.
 *
 *   dump_lost DIR
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include "../integration/testlib.h"

#include <sys/stat.h>
#include <unistd.h>

static void dumplost(const char *dir)
{
    int (*dump)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "gpumemguard_dump");
    CUdeviceptr a, b;
    CHECK(cuMemAlloc_v2(&a, 1 << 20));
    rmdir(dir); /* empty: nothing has been written there */
    if (dump)
        dump();
    mkdir(dir, 0700);
    CHECK(cuMemAlloc_v2(&b, 2 << 20));
    if (dump)
        dump();
    CHECK(cuMemFree_v2(a));
    CHECK(cuMemFree_v2(b));
    printf("dumplost: %s\n", dump ? "two dumps" : "no guard");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: dump_lost DIR\n");
        return 2;
    }
    tl_setup(0);
    dumplost(argv[1]);
    fflush(stdout);
    return 0;
}
