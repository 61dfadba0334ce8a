/*
 * hooks_ctx.c - context teardown and the memory-size queries.
 *
 * Teardown (cuCtxDestroy, cuDevicePrimaryCtxReset, the last
 * cuDevicePrimaryCtxRelease) frees a context's memory inside the driver: its
 * records stop counting against the quota and move to the "reclaimed by
 * context teardown" list, since the program never freed them.
 *
 * Under a limit, cuMemGetInfo and cuDeviceTotalMem describe the capped
 * device: total = min(limit, real), free = min(real free, limit - used),
 * never below 0. Under GPUMEM_GROUP the limit is the group's budget and
 * `used` the group's bytes.
 */
#include "base/limit_parse.h"
#include "base/log.h"
#include "core/quota.h"
#include "hooks/intercept.h"

static void release_reclaimed(const struct gmg_alloc *a, void *arg)
{
    (void)arg;
    if (a->counted)
        gmg_quota_release(a->device, a->size);
}

static void reclaim(uintptr_t ctx, const char *why)
{
    gmg_contexts_changed();
    uint32_t index = gmg_ctx_index(ctx, 0); /* 0: no record ever had it */
    if (!index)
        return;
    size_t n = gmg_track_reclaim_ctx(index, release_reclaimed, NULL);
    if (n)
        gmg_debug("%s reclaimed %zu allocation(s) of context %#lx", why, n, (unsigned long)ctx);
}

GMG_EXPORT CUresult CUDAAPI cuCtxDestroy_v2(CUcontext ctx)
{
    gmg_enter(H_cuCtxDestroy_v2);
    CUresult r = CALL_REAL(cuCtxDestroy_v2, ctx);
    if (r == CUDA_SUCCESS)
        reclaim((uintptr_t)ctx, "cuCtxDestroy");
    return r;
}

GMG_EXPORT CUresult CUDAAPI cuCtxDestroy(CUcontext ctx)
{
    gmg_enter(H_cuCtxDestroy);
    CUresult r = CALL_REAL(cuCtxDestroy, ctx);
    if (r == CUDA_SUCCESS)
        reclaim((uintptr_t)ctx, "cuCtxDestroy");
    return r;
}

/* What the program's own retains and releases of each device's primary
 * context say, for a driver whose cuDevicePrimaryCtxGetState is missing or
 * cannot answer: the context handle, and how many retains are held. */
static uintptr_t primary_seen[GMG_MAX_DEVICES];
static long primary_refs[GMG_MAX_DEVICES];

static int dev_ok(CUdevice dev) { return dev >= 0 && dev < GMG_MAX_DEVICES; }

/* 1 active, 0 inactive, -1 the driver cannot say. */
static int primary_state(CUdevice dev)
{
    unsigned flags = 0;
    int active = 0;
    if (!REAL(cuDevicePrimaryCtxGetState) || REAL(cuDevicePrimaryCtxGetState)(dev, &flags, &active) != CUDA_SUCCESS)
        return -1;
    return active != 0;
}

/* The primary context of a device, if active, without changing its
 * reference count in the end. */
static uintptr_t primary_of(CUdevice dev)
{
    int state = primary_state(dev);
    if (state < 0)
        return dev_ok(dev) ? __atomic_load_n(&primary_seen[dev], __ATOMIC_ACQUIRE) : 0;
    if (!state)
        return 0;
    CUcontext c = NULL;
    if (!REAL(cuDevicePrimaryCtxRetain) || REAL(cuDevicePrimaryCtxRetain)(&c, dev) != CUDA_SUCCESS)
        return 0;
    if (REAL(cuDevicePrimaryCtxRelease_v2))
        REAL(cuDevicePrimaryCtxRelease_v2)(dev);
    else
        CALL_REAL(cuDevicePrimaryCtxRelease, dev);
    return (uintptr_t)c;
}

static int still_active(CUdevice dev)
{
    int state = primary_state(dev);
    if (state >= 0)
        return state;
    return dev_ok(dev) && __atomic_load_n(&primary_refs[dev], __ATOMIC_ACQUIRE) > 0;
}

static void note_release(CUdevice dev)
{
    if (!dev_ok(dev))
        return;
    long cur = __atomic_load_n(&primary_refs[dev], __ATOMIC_RELAXED);
    while (cur > 0 && !__atomic_compare_exchange_n(&primary_refs[dev], &cur, cur - 1, 1, __ATOMIC_ACQ_REL,
                                                   __ATOMIC_RELAXED))
        ;
}

GMG_EXPORT CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    gmg_enter(H_cuDevicePrimaryCtxRetain);
    CUresult r = CALL_REAL(cuDevicePrimaryCtxRetain, pctx, dev);
    if (r == CUDA_SUCCESS && pctx && dev_ok(dev)) {
        __atomic_store_n(&primary_seen[dev], (uintptr_t)*pctx, __ATOMIC_RELEASE);
        __atomic_fetch_add(&primary_refs[dev], 1, __ATOMIC_ACQ_REL);
    }
    return r;
}

/* Both ABIs of reset and release share one body: `call` is the real one. */
static CUresult reset(CUdevice dev, CUresult (*call)(CUdevice))
{
    uintptr_t ctx = primary_of(dev);
    CUresult r = call ? call(dev) : CUDA_ERROR_NOT_FOUND;
    if (r == CUDA_SUCCESS) /* the retain count stays: the driver needs as many releases after
                              a reset as retains were held (docs/gpu-validation.md) */
        reclaim(ctx, "cuDevicePrimaryCtxReset");
    return r;
}

static CUresult release(CUdevice dev, CUresult (*call)(CUdevice))
{
    uintptr_t ctx = primary_of(dev);
    CUresult r = call ? call(dev) : CUDA_ERROR_NOT_FOUND;
    if (r == CUDA_SUCCESS)
        note_release(dev);
    if (r == CUDA_SUCCESS && ctx && !still_active(dev))
        reclaim(ctx, "last cuDevicePrimaryCtxRelease");
    return r;
}

GMG_EXPORT CUresult CUDAAPI cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
    gmg_enter(H_cuDevicePrimaryCtxReset_v2);
    return reset(dev, REAL(cuDevicePrimaryCtxReset_v2));
}

GMG_EXPORT CUresult CUDAAPI cuDevicePrimaryCtxReset(CUdevice dev)
{
    gmg_enter(H_cuDevicePrimaryCtxReset);
    return reset(dev, REAL(cuDevicePrimaryCtxReset));
}

GMG_EXPORT CUresult CUDAAPI cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
    gmg_enter(H_cuDevicePrimaryCtxRelease_v2);
    return release(dev, REAL(cuDevicePrimaryCtxRelease_v2));
}

GMG_EXPORT CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice dev)
{
    gmg_enter(H_cuDevicePrimaryCtxRelease);
    return release(dev, REAL(cuDevicePrimaryCtxRelease));
}

/* ------------------------------------------------------------- queries */

static uint64_t limit_of(int dev)
{
    gmg_prepare_limit(dev);
    return gmg_quota_limit(dev);
}

static void cap_info(int dev, size_t *freeb, size_t *total)
{
    uint64_t limit = limit_of(dev);
    if (!limit)
        return;
    gmg_quota_refresh(); /* GPUMEM_GROUP: a dead member's share is not in use */
    uint64_t used = gmg_quota_charged(dev); /* the group's under GPUMEM_GROUP */
    uint64_t room = used >= limit ? 0 : limit - used;
    if (*total > limit)
        *total = limit;
    if (*freeb > room)
        *freeb = room;
}

GMG_EXPORT CUresult CUDAAPI cuMemGetInfo_v2(size_t *freeb, size_t *total)
{
    gmg_enter(H_cuMemGetInfo_v2);
    int dev = gmg_current_device(NULL);
    if (dev < 0 || !freeb || !total || !limit_of(dev)) /* NULLs: the driver's own error */
        return CALL_REAL(cuMemGetInfo_v2, freeb, total);
    size_t f = 0, t = 0;
    CUresult r = CALL_REAL(cuMemGetInfo_v2, &f, &t);
    if (r != CUDA_SUCCESS)
        return r;
    cap_info(dev, &f, &t);
    *freeb = f;
    *total = t;
    return r;
}

static unsigned clamp32(size_t v) { return v > 0xffffffffu ? 0xffffffffu : (unsigned)v; }

GMG_EXPORT CUresult CUDAAPI cuMemGetInfo(unsigned int *freeb, unsigned int *total)
{
    gmg_enter(H_cuMemGetInfo);
    int dev = gmg_current_device(NULL);
    if (dev < 0 || !freeb || !total || !limit_of(dev))
        return CALL_REAL(cuMemGetInfo, freeb, total);
    unsigned f32 = 0, t32 = 0;
    CUresult r = CALL_REAL(cuMemGetInfo, &f32, &t32);
    if (r != CUDA_SUCCESS)
        return r;
    size_t f = f32, t = t32;
    size_t rf, rt; /* prefer the 64-bit truth before clamping */
    if (REAL(cuMemGetInfo_v2) && REAL(cuMemGetInfo_v2)(&rf, &rt) == CUDA_SUCCESS) {
        f = rf;
        t = rt;
    }
    cap_info(dev, &f, &t);
    *freeb = clamp32(f);
    *total = clamp32(t);
    return r;
}

GMG_EXPORT CUresult CUDAAPI cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
    gmg_enter(H_cuDeviceTotalMem_v2);
    uint64_t limit = bytes ? limit_of(dev) : 0;
    if (!limit)
        return CALL_REAL(cuDeviceTotalMem_v2, bytes, dev);
    size_t t = 0;
    CUresult r = CALL_REAL(cuDeviceTotalMem_v2, &t, dev);
    if (r == CUDA_SUCCESS)
        *bytes = t < limit ? t : limit;
    return r;
}

GMG_EXPORT CUresult CUDAAPI cuDeviceTotalMem(unsigned int *bytes, CUdevice dev)
{
    gmg_enter(H_cuDeviceTotalMem);
    uint64_t limit = bytes ? limit_of(dev) : 0;
    if (!limit)
        return CALL_REAL(cuDeviceTotalMem, bytes, dev);
    size_t t = 0;
    CUresult r = CALL_REAL(cuDeviceTotalMem_v2, &t, dev);
    if (r == CUDA_SUCCESS)
        *bytes = clamp32(t < limit ? t : limit);
    return r;
}
