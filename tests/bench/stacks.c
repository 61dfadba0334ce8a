/*
 * stacks.c - many live allocations in many distinct call stacks, then one
 * report through the public API (gpumemguard_dump, found with dlsym), in
 * whatever format GPUMEM_REPORT_FORMAT asks for. For the HTML page's size
 * and speed (scripts/bench.sh) and its folding of small groups (tests).
 *
 *   stacks LIVE STACKS
 *       holds LIVE allocations of 512 bytes, allocation i made through
 *       call stack i % STACKS (STACKS distinct stacks: the digits of the
 *       stack's number, base 10, pick one of ten functions at each of
 *       ceil(log10 STACKS) levels); prints "SECONDS": the report's time
 *       ("-" without the guard).
 *   stacks LIVE STACKS reset
 *       the same, then resets the device's primary context: the exit
 *       report lists them all reclaimed by context teardown.
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int levels;

static void descend(int level, unsigned idx);

#define STEP(k)                                                                                                        \
    static __attribute__((noinline)) void step##k(int level, unsigned idx)                                             \
    {                                                                                                                  \
        descend(level + 1, idx);                                                                                       \
        __asm__ volatile("" ::: "memory"); /* a call, not a tail call: this frame stays */                             \
    }
STEP(0) STEP(1) STEP(2) STEP(3) STEP(4) STEP(5) STEP(6) STEP(7) STEP(8) STEP(9)
static void (*const steps[10])(int, unsigned) = { step0, step1, step2, step3, step4,
                                                  step5, step6, step7, step8, step9 };

static __attribute__((noinline)) void descend(int level, unsigned idx)
{
    if (level == levels) {
        CUdeviceptr p;
        if (cuMemAlloc_v2(&p, 512) != CUDA_SUCCESS)
            abort();
        return;
    }
    unsigned digit = idx;
    for (int i = 0; i < level; i++)
        digit /= 10;
    steps[digit % 10](level, idx);
    __asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
    if (argc != 3 && !(argc == 4 && strcmp(argv[3], "reset") == 0)) {
        fprintf(stderr, "usage: stacks LIVE STACKS [reset]\n");
        return 2;
    }
    long live = atol(argv[1]), stacks = atol(argv[2]);
    if (live < 1 || stacks < 1) {
        fprintf(stderr, "stacks: LIVE and STACKS must be positive\n");
        return 2;
    }
    for (long s = 1; s < stacks; s *= 10)
        levels++;
    CUcontext ctx;
    cuInit(0);
    cuDevicePrimaryCtxRetain(&ctx, 0);
    cuCtxSetCurrent(ctx);
    for (long i = 0; i < live; i++)
        descend(0, (unsigned)(i % stacks));
    int (*dump)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "gpumemguard_dump");
    if (!dump) {
        printf("-\n");
        return 0;
    }
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    dump();
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("%.3f\n", (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9);
    if (argc == 4)
        cuDevicePrimaryCtxReset(0);
    return 0;
}
