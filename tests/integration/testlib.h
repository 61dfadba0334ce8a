/*
 * testlib.h - what the test programs that call the driver by its exports
 * share: a device's primary context made current, the live bytes the guard
 * and the simulated driver count, a VMM allocation's properties, a leak of a
 * known size from a known function, a refused call timed, a thread that
 * allocates and frees until told to stop. Static functions only, so that
 * each program is still built from its own file; several of those files are
 * also built together as one program (tests/stress/stress.c includes them
 * with TL_NO_MAIN defined, which leaves their main out).
 */
#ifndef GMG_TESTLIB_H
#define GMG_TESTLIB_H

#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../sim/sim.h" /* struct sim_stats, simGetStats */

#define NOINLINE __attribute__((noinline))

/* A driver call the test needs failed: nothing after it means anything.
 * CHECK says so on stderr, TL_CHECK on stdout (beside what the case prints). */
#define CHECK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { \
    fprintf(stderr, "%s:%d: %s = %d\n", __FILE__, __LINE__, #x, (int)r_); exit(1); } } while (0)
#define TL_CHECK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { \
    printf("FAIL %s:%d: %s = %d\n", __FILE__, __LINE__, #x, (int)r_); fflush(stdout); exit(1); } } while (0)

/* The context tl_setup made current last: a case's threads make it theirs. */
static CUcontext tl_ctx __attribute__((unused));
/* Set once by a case's main thread, read by its workers: time to stop. */
static int tl_stop __attribute__((unused));

/* Device dev's primary context, retained and made current (also tl_ctx). */
static inline CUcontext tl_setup(int dev)
{
    CUdevice d;
    CUcontext c;
    TL_CHECK(cuInit(0));
    TL_CHECK(cuDeviceGet(&d, dev));
    TL_CHECK(cuDevicePrimaryCtxRetain(&c, d));
    TL_CHECK(cuCtxSetCurrent(c));
    tl_ctx = c;
    return c;
}

/* The bytes the guard counts against dev's quota (0 without the guard). */
static inline unsigned long long tl_guard_live(int dev)
{
    unsigned long long (*f)(int) = (unsigned long long (*)(int))dlsym(RTLD_DEFAULT, "gpumemguard_live_bytes");
    return f ? f(dev) : 0;
}

/* The limit the guard holds dev to (0 without the guard or a limit). */
static inline unsigned long long tl_guard_limit(int dev)
{
    unsigned long long (*f)(int) = (unsigned long long (*)(int))dlsym(RTLD_DEFAULT, "gpumemguard_limit");
    return f ? f(dev) : 0;
}

/* What the simulated driver says of dev. */
static inline struct sim_stats tl_sim(int dev)
{
    struct sim_stats s;
    memset(&s, 0, sizeof s);
    simGetStats(dev, &s);
    return s;
}

/* The bytes the simulated driver holds on dev. */
static inline unsigned long long tl_sim_live(int dev) { return (unsigned long long)tl_sim(dev).live; }

/* A pinned cuMemCreate allocation on device dev. */
static inline CUmemAllocationProp tl_vmm_prop(int dev)
{
    CUmemAllocationProp p;
    memset(&p, 0, sizeof p);
    p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    p.location.id = dev;
    return p;
}

/* A graph memory-allocation node of `bytes` on device dev (cuGraphAddMemAllocNode). */
static inline CUDA_MEM_ALLOC_NODE_PARAMS tl_graph_params(size_t bytes, int dev)
{
    CUDA_MEM_ALLOC_NODE_PARAMS a;
    memset(&a, 0, sizeof a);
    a.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    a.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    a.poolProps.location.id = dev;
    a.bytesize = bytes;
    return a;
}

/* 197520 bytes from one call site, never freed: the leak of the programs
 * whose reports the tests read (its name and size are in their checks). */
static NOINLINE __attribute__((unused)) void leak_before_exit(void) { CUdeviceptr d; CHECK(cuMemAlloc_v2(&d, 12345 * 16)); }

/* A refused call, timed: its result and whether it came back in under
 * `ms`, on stderr (where the guard's lines go, so that their order shows).
 * dprintf: one write(2) that no stdio buffer holds back. */
static __attribute__((unused)) void tl_timed_refusal(const char *what, CUresult (*call)(void), long ms)
{
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    CUresult r = call();
    clock_gettime(CLOCK_MONOTONIC, &t1);
    long took = (long)(t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
    dprintf(2, "%s: the refused call returned %d in %s %ld ms\n", what, (int)r, took < ms ? "under" : "over", ms);
}

/* A thread (pthread_create's start routine) that allocates and frees 4 KiB
 * in tl_ctx until tl_stop is set. */
static inline void *tl_churn(void *arg)
{
    (void)arg;
    CHECK(cuCtxSetCurrent(tl_ctx));
    while (!__atomic_load_n(&tl_stop, __ATOMIC_ACQUIRE)) {
        CUdeviceptr d;
        if (cuMemAlloc_v2(&d, 4096) == CUDA_SUCCESS)
            cuMemFree_v2(d);
    }
    return NULL;
}

#endif
