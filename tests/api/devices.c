/*
 * devices.c - the public API asked about devices that do not exist (-1, 64)
 * and about device 0, with 1 MiB allocated on it.
 *
 *   api_devices [early]   early: the limits asked first, before any CUDA
 *                         use, and of a device the process does not see (5)
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include "../integration/testlib.h"

static void api(void)
{
    unsigned long long (*limit)(int) = (unsigned long long (*)(int))dlsym(RTLD_DEFAULT, "gpumemguard_limit");
    CUdeviceptr p;
    CHECK(cuMemAlloc_v2(&p, 1 << 20));
    if (!limit) {
        printf("api: no guard\n");
        return;
    }
    printf("api: limit -1 %llu, 0 %llu, 64 %llu; live -1 %llu, 0 %llu, 64 %llu\n", limit(-1), limit(0), limit(64),
           tl_guard_live(-1), tl_guard_live(0), tl_guard_live(64));
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "early") == 0) {
        unsigned long long (*limit)(int) = (unsigned long long (*)(int))dlsym(RTLD_DEFAULT, "gpumemguard_limit");
        if (!limit)
            return 1;
        unsigned long long before = limit(0);
        tl_setup(0);
        printf("api early: limit 0 before %llu, 0 after %llu, 5 %llu\n", before, limit(0), limit(5));
        return 0;
    }
    tl_setup(0);
    api();
    fflush(stdout);
    return 0;
}
