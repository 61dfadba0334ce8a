/*
 * marks.c - the timeline's marks against the counts (tests/oom/marks.sh).
 *
 *   marks fill   fill the device with 8 MiB blocks until the driver says
 *                out of memory, free them all: the peak, reached just
 *                before the out-of-memory, is marked before it
 *   marks storm  a thread asks for 100 GiB over and over, from 28 call
 *                sites, while main returns: the exit report's counts hold
 *                every out-of-memory it marks
 *   marks inflight  main holds 1 MiB and returns while a thread's call for
 *                100 GiB is under way (GPUSIM_OOM_DELAY_US): the exit
 *                report's and the metrics' bytes in use are the 1 MiB
 */
#include <cuda.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static CUcontext ctx;

__attribute__((noinline)) static CUresult site(int depth)
{
    CUdeviceptr p;
    if (depth)
        return site(depth - 1) + 0 * getpid(); /* (not a tail call: a frame each) */
    return cuMemAlloc(&p, 100ull << 30);
}

static void *big(void *arg)
{
    (void)arg;
    CUdeviceptr p;
    cuCtxSetCurrent(ctx);
    cuMemAlloc(&p, 100ull << 30);
    return NULL;
}

static void *storm(void *arg)
{
    (void)arg;
    cuCtxSetCurrent(ctx);
    for (int i = 0;; i++)
        site(i % 28);
    return NULL;
}

int main(int argc, char **argv)
{
    CUdevice dev;
    cuInit(0);
    cuDeviceGet(&dev, 0);
    cuDevicePrimaryCtxRetain(&ctx, dev);
    cuCtxSetCurrent(ctx);
    if (argc > 1 && strcmp(argv[1], "fill") == 0) {
        usleep(25000);
        CUdeviceptr p[256];
        int n = 0;
        while (n < 256 && cuMemAlloc(&p[n], 8 << 20) == CUDA_SUCCESS)
            n++;
        for (int i = 0; i < n; i++)
            cuMemFree(p[i]);
        usleep(25000);
        printf("filled %d blocks\n", n);
        return 0;
    }
    int is_storm = argc > 1 && strcmp(argv[1], "storm") == 0;
    if (is_storm || (argc > 1 && strcmp(argv[1], "inflight") == 0)) {
        /* 1 MiB held, a thread asking for 100 GiB, and main returns meanwhile */
        CUdeviceptr keep;
        cuMemAlloc(&keep, 1 << 20);
        pthread_t t;
        pthread_create(&t, NULL, is_storm ? storm : big, NULL);
        usleep(is_storm ? 3000 : 300000);
        return 0;
    }
    fprintf(stderr, "usage: marks fill|storm|inflight\n");
    return 2;
}
