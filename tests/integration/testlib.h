/*
 * testlib.h - what the test programs that call the driver by its exports
 * share: a device's primary context made current, the live bytes the guard
 * and the simulated driver count, a VMM allocation's properties. Static
 * functions only, so that each program is still built from its own file.
 */
#ifndef GMG_TESTLIB_H
#define GMG_TESTLIB_H

#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sim/sim.h" /* struct sim_stats, simGetStats */

/* A driver call the test needs failed: nothing after it means anything. */
#define TL_CHECK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { \
    printf("FAIL %s:%d: %s = %d\n", __FILE__, __LINE__, #x, (int)r_); fflush(stdout); exit(1); } } while (0)

/* Device dev's primary context, retained and made current. */
static inline CUcontext tl_setup(int dev)
{
    CUdevice d;
    CUcontext c;
    TL_CHECK(cuInit(0));
    TL_CHECK(cuDeviceGet(&d, dev));
    TL_CHECK(cuDevicePrimaryCtxRetain(&c, d));
    TL_CHECK(cuCtxSetCurrent(c));
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

#endif
