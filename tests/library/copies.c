/*
 * copies.c - 1 MiB allocated, then the public API asked through another copy
 * of the guard, opened by path (LIB), as a program that dlopens its own copy
 * does.
 *
 *   guard_copies LIB
 */
#define _GNU_SOURCE
#include "../integration/testlib.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: guard_copies LIB\n");
        return 2;
    }
    CUdeviceptr p;
    tl_setup(0);
    cuMemAlloc(&p, 1 << 20);
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    unsigned long long (*f)(int) = h ? (unsigned long long (*)(int))dlsym(h, "gpumemguard_live_bytes") : NULL;
    printf("copy: live %llu\n", f ? f(0) : 0ull);
    return 0;
}
