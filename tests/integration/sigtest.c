/*
 * sigtest.c - the dump signal.
 *   sigtest threads before|after   8 threads allocate while SIGUSR1 arrives 5
 *                                  times; the program's own handler (set
 *                                  before or after the guard arms) must see all
 *   sigtest growth DIR             dump, allocate 3 from grow_site, dump again
 *   sigtest devfree DIR            1 MiB on device 0, 2 MiB on device 1 (two
 *                                  simulated devices), a dump (DIR/dump.1),
 *                                  then exit with device 0's context current
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static CUcontext ctx;
static int got;   /* atomics: the handler runs on any thread */
static int stop;

static void handler(int s) { (void)s; __atomic_fetch_add(&got, 1, __ATOMIC_RELAXED); }

static void install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sigaction(SIGUSR1, &sa, NULL);
}

static void *worker(void *arg)
{
    (void)arg;
    cuCtxSetCurrent(ctx);
    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
        CUdeviceptr p;
        if (cuMemAlloc_v2(&p, 4096) == CUDA_SUCCESS)
            cuMemFree_v2(p);
    }
    return NULL;
}

__attribute__((noinline)) static void grow_site(void)
{
    CUdeviceptr p;
    cuMemAlloc_v2(&p, 300000);
}

__attribute__((noinline)) static void old_site(void)
{
    CUdeviceptr p;
    cuMemAlloc_v2(&p, 100000);
}

static void wait_for(const char *path)
{
    struct stat st;
    for (int i = 0; i < 500 && stat(path, &st) != 0; i++)
        usleep(10000);
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    int before = strcmp(argv[2], "before") == 0;
    if (before)
        install();
    cuInit(0);
    cuDevicePrimaryCtxRetain(&ctx, 0);
    cuCtxSetCurrent(ctx);
    if (strcmp(argv[1], "threads") == 0) {
        CUdeviceptr p;
        cuMemAlloc_v2(&p, 1 << 20); /* the guard is armed now */
        if (!before)
            install();
        pthread_t t[8];
        for (int i = 0; i < 8; i++)
            pthread_create(&t[i], NULL, worker, NULL);
        for (int i = 0; i < 5; i++) {
            kill(getpid(), SIGUSR1);
            usleep(100000);
        }
        __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
        for (int i = 0; i < 8; i++)
            pthread_join(t[i], NULL);
        printf("handler saw %d of 5\n", __atomic_load_n(&got, __ATOMIC_RELAXED));
        return 0;
    }
    /* growth and devfree: reports in DIR/dump.N (GPUMEM_REPORT=DIR/dump.%n) */
    char path[512];
    if (strcmp(argv[1], "devfree") == 0) {
        CUcontext ctx1;
        CUdeviceptr p0, p1;
        cuDevicePrimaryCtxRetain(&ctx1, 1);
        cuMemAlloc_v2(&p0, 1 << 20);
        cuCtxSetCurrent(ctx1);
        cuMemAlloc_v2(&p1, 2 << 20);
        cuCtxSetCurrent(ctx);
        kill(getpid(), SIGUSR1);
        snprintf(path, sizeof path, "%s/dump.1", argv[2]);
        wait_for(path);
        printf("done\n");
        return 0;
    }
    old_site();
    kill(getpid(), SIGUSR1);
    snprintf(path, sizeof path, "%s/dump.1", argv[2]);
    wait_for(path);
    for (volatile int i = 0; i < 3; i++) /* one call site, not unrolled */
        grow_site();
    kill(getpid(), SIGUSR1);
    snprintf(path, sizeof path, "%s/dump.2", argv[2]);
    wait_for(path);
    printf("done\n");
    return 0;
}
