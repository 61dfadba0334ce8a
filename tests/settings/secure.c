/*
 * secure.c - a program in secure-execution mode (setgid, linked with the
 * guard: the loader ignores LD_PRELOAD there): it says whether the kernel
 * set AT_SECURE, and leaks 1 MiB.
 *
 *   secure    (built by tests/settings/secure.sh, made setgid there)
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include "../integration/testlib.h"

#include <sys/auxv.h>

NOINLINE static void secure_leak(void)
{
    CUdeviceptr p;
    TL_CHECK(cuMemAlloc_v2(&p, 1 << 20));
}

int main(void)
{
    printf("secure: AT_SECURE %lu\n", getauxval(AT_SECURE));
    fflush(stdout);
    tl_setup(0);
    secure_leak();
    return 0;
}
