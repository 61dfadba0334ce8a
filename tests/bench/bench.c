/*
 * bench.c - cost of the allocation path: alloc+free pairs against the
 * simulated driver, timed in one process. Run the same binary with and
 * without the guard (scripts/bench.sh) and compare as ratios.
 *   bench PAIRS LIVE THREADS   ns per pair, with LIVE allocations held live
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static CUcontext ctx;
static long pairs;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *run(void *arg)
{
    (void)arg;
    cuCtxSetCurrent(ctx);
    for (long i = 0; i < pairs; i++) {
        CUdeviceptr p;
        if (cuMemAlloc_v2(&p, 4096) != CUDA_SUCCESS)
            abort();
        cuMemFree_v2(p);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    pairs = argc > 1 ? atol(argv[1]) : 200000;
    long live = argc > 2 ? atol(argv[2]) : 0;
    int threads = argc > 3 ? atoi(argv[3]) : 1;
    cuInit(0);
    cuDevicePrimaryCtxRetain(&ctx, 0);
    cuCtxSetCurrent(ctx);
    for (long i = 0; i < live; i++) {
        CUdeviceptr p;
        if (cuMemAlloc_v2(&p, 512) != CUDA_SUCCESS)
            abort();
    }
    pthread_t t[64];
    double t0 = now();
    for (int i = 0; i < threads; i++)
        pthread_create(&t[i], NULL, run, NULL);
    for (int i = 0; i < threads; i++)
        pthread_join(t[i], NULL);
    double dt = now() - t0;
    printf("%.1f\n", dt * 1e9 / (double)(pairs * threads));
    return 0;
}
