/*
 * failed_peak.c - a peak is memory that was in use, so an allocation the
 * driver fails never raises it.
 *
 *   failed_peak BYTES    an allocation the driver fails (more than the
 *                        device has), then 1 MiB
 *   failed_peak race N   2 threads ask for 1 GiB, N times each (failed by a
 *                        64 MiB device), while 2 others allocate 4 blocks of
 *                        1 MiB and free them, N times each: never more than
 *                        8 MiB made at once
 */
#define _GNU_SOURCE
#include "../integration/testlib.h"

#include <dlfcn.h>
#include <pthread.h>

static long rounds;

static void *ask_huge(void *arg)
{
    long *failed = arg;
    cuCtxSetCurrent(tl_ctx);
    for (long i = 0; i < rounds; i++) {
        CUdeviceptr p;
        *failed += cuMemAlloc_v2(&p, 1ull << 30) == CUDA_ERROR_OUT_OF_MEMORY;
    }
    return NULL;
}

static void *cycle_small(void *arg)
{
    (void)arg;
    cuCtxSetCurrent(tl_ctx);
    for (long i = 0; i < rounds; i++) {
        CUdeviceptr p[4];
        for (int k = 0; k < 4; k++)
            CHECK(cuMemAlloc_v2(&p[k], 1 << 20));
        for (int k = 0; k < 4; k++)
            CHECK(cuMemFree_v2(p[k]));
    }
    return NULL;
}

static void race(long n)
{
    rounds = n;
    pthread_t t[4];
    long failed[2] = { 0, 0 };
    pthread_create(&t[0], NULL, ask_huge, &failed[0]);
    pthread_create(&t[1], NULL, ask_huge, &failed[1]);
    pthread_create(&t[2], NULL, cycle_small, NULL);
    pthread_create(&t[3], NULL, cycle_small, NULL);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    /* the public API's peak (a test harness's): of allocations made too */
    unsigned long long (*api_peak)(int) = (unsigned long long (*)(int))dlsym(RTLD_DEFAULT, "gpumemguard_peak");
    printf("race: %ld of %ld failed; api peak %llu\n", failed[0] + failed[1], 2 * n, api_peak ? api_peak(0) : 0ull);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: failed_peak BYTES | race N\n");
        return 2;
    }
    tl_setup(0);
    if (!strcmp(argv[1], "race") && argc > 2) {
        race(atol(argv[2]));
        return 0;
    }
    CUdeviceptr p;
    CUresult r1 = cuMemAlloc(&p, strtoull(argv[1], NULL, 0));
    CUresult r2 = cuMemAlloc(&p, 1 << 20);
    printf("oom: %d, then 1 MiB: %d\n", (int)r1, (int)r2);
    return 0;
}
