/*
 * reset_reads.c - gpumemguard_peak() read without a pause while another
 * thread resets the window every 200 us and a third allocates and frees
 * alone (so that the device's peak word is its own, given back between
 * resets): 1 MiB stays live throughout, so no window's peak is below it,
 * and no reading may be. Prints "reset reads: N readings, none below the
 * live 1 MiB" and exits 0, or says how many were below and exits 1.
 * Usage: reset_reads SECONDS
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define CK(x) do { if ((x) != CUDA_SUCCESS) { printf("FAIL: %s\n", #x); exit(1); } } while (0)

static void (*peak_reset)(void);
static unsigned long long (*peak_of)(int);
static CUcontext ctx;
static int stop;

static void *churn(void *arg)
{
    (void)arg;
    CK(cuCtxSetCurrent(ctx));
    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
        CUdeviceptr p;
        CK(cuMemAlloc_v2(&p, 4096));
        CK(cuMemFree_v2(p));
    }
    return NULL;
}

static void *resets(void *arg)
{
    (void)arg;
    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
        peak_reset();
        usleep(200);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int secs = argc > 1 ? atoi(argv[1]) : 1;
    *(void **)&peak_reset = dlsym(RTLD_DEFAULT, "gpumemguard_peak_reset");
    *(void **)&peak_of = dlsym(RTLD_DEFAULT, "gpumemguard_peak");
    if (!peak_reset || !peak_of) {
        printf("FAIL: the guard's API is not loaded\n");
        return 1;
    }
    CUdevice d;
    CK(cuInit(0));
    CK(cuDeviceGet(&d, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, d));
    CK(cuCtxSetCurrent(ctx));
    CUdeviceptr held;
    CK(cuMemAlloc_v2(&held, 1u << 20));
    pthread_t c, r;
    pthread_create(&c, NULL, churn, NULL);
    pthread_create(&r, NULL, resets, NULL);
    long readings = 0, below = 0;
    unsigned long long lowest = ~0ull;
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        for (int i = 0; i < 1000; i++, readings++) {
            unsigned long long p = peak_of(0);
            if (p < (1u << 20)) {
                below++;
                lowest = p < lowest ? p : lowest;
            }
        }
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while (t.tv_sec - t0.tv_sec < secs);
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    pthread_join(c, NULL);
    pthread_join(r, NULL);
    CK(cuMemFree_v2(held));
    if (below) {
        printf("FAIL: %ld of %ld readings below the live 1 MiB (lowest %llu)\n", below, readings, lowest);
        return 1;
    }
    printf("reset reads: %ld readings, none below the live 1 MiB\n", readings);
    return 0;
}
