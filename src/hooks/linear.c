/*
 * hooks_linear.c - wrappers of linear, pitched, managed and stream-ordered
 * device memory (SPEC §2): each legacy, _v2 and _ptsz ABI.
 */
#include "base/config.h"
#include "hooks/graph.h"
#include "hooks/intercept.h"
#include "hooks/mempool.h"
#include "hooks/refusal.h"

#define PITCH_ALIGN 512u

/* dev < 0: the current context's device */
static CUresult linear_on(CUdeviceptr *dptr, size_t bytes, int family, int dev, int counted,
                          CUresult (*call)(CUdeviceptr *, size_t, void *), void *arg)
{
    struct gmg_op op;
    if (!dptr)
        return call(dptr, bytes, arg);
    CUresult r = gmg_begin(&op, family, dev, bytes, counted);
    if (r != CUDA_SUCCESS)
        return r;
    r = call(dptr, bytes, arg);
    gmg_end(&op, r, GMG_SPACE_DEVPTR, r == CUDA_SUCCESS ? *dptr : 0, bytes, bytes);
    return r;
}

static CUresult linear(CUdeviceptr *dptr, size_t bytes, int family, int counted,
                       CUresult (*call)(CUdeviceptr *, size_t, void *), void *arg)
{
    return linear_on(dptr, bytes, family, -1, counted, call, arg);
}

static CUresult call_alloc_v2(CUdeviceptr *d, size_t b, void *arg)
{
    (void)arg;
    return CALL_REAL(cuMemAlloc_v2, d, b);
}

GMG_EXPORT CUresult CUDAAPI cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
    gmg_enter(H_cuMemAlloc_v2);
    return linear(dptr, bytesize, GMG_FAM_LINEAR, 1, call_alloc_v2, NULL);
}

GMG_EXPORT CUresult CUDAAPI cuMemAlloc(CUdeviceptr_v1 *dptr, unsigned int bytesize)
{
    gmg_enter(H_cuMemAlloc);
    struct gmg_op op;
    if (!dptr)
        return CALL_REAL(cuMemAlloc, dptr, bytesize);
    CUresult r = gmg_begin(&op, GMG_FAM_LINEAR, -1, bytesize, 1);
    if (r != CUDA_SUCCESS)
        return r;
    r = CALL_REAL(cuMemAlloc, dptr, bytesize);
    gmg_end(&op, r, GMG_SPACE_DEVPTR_V1, r == CUDA_SUCCESS ? gmg_key_v1(*dptr, op.dev) : 0, bytesize, bytesize);
    return r;
}

static CUresult call_managed(CUdeviceptr *d, size_t b, void *arg)
{
    return CALL_REAL(cuMemAllocManaged, d, b, *(unsigned *)arg);
}

GMG_EXPORT CUresult CUDAAPI cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
    gmg_enter(H_cuMemAllocManaged);
    return linear(dptr, bytesize, GMG_FAM_MANAGED, gmg_cfg.count_managed, call_managed, &flags);
}

/* a * b, or UINT64_MAX when that overflows (then no limit can hold it) */
static uint64_t mul_sat(uint64_t a, uint64_t b)
{
    uint64_t v;
    return __builtin_mul_overflow(a, b, &v) ? UINT64_MAX : v;
}

/* Pitch: the driver picks the pitch. Reserve the usual alignment up front,
 * then settle on what the driver granted (pitch x height). A driver whose
 * pitch is finer than the usual alignment may grant less than that: when
 * the estimate does not fit the limit, the least any pitch can take (width
 * x height) is reserved instead, and the grant decides (SPEC §2: actual
 * pitch x height). That lets the driver make an allocation the grant of
 * which may not fit, freed at once, but for that moment past the limit: so
 * only until a grant has shown the driver's pitch. One no finer than the
 * estimate (the real driver's is the estimate, docs/gpu-validation.md)
 * stops it; one finer keeps it. */
enum { PITCH_UNKNOWN, PITCH_AS_ESTIMATED, PITCH_FINER };
static int pitch_rule;

static uint64_t pitch_estimate(size_t width, size_t height)
{
    uint64_t row = width > UINT64_MAX - PITCH_ALIGN ? UINT64_MAX : (width + PITCH_ALIGN - 1) / PITCH_ALIGN * PITCH_ALIGN;
    return mul_sat(row, height);
}

static CUresult pitch_begin(struct gmg_op *op, size_t width, size_t height)
{
    uint64_t estimate = pitch_estimate(width, height);
    int finer_possible = __atomic_load_n(&pitch_rule, __ATOMIC_RELAXED) != PITCH_AS_ESTIMATED;
    return gmg_begin_least(op, GMG_FAM_PITCH, -1, estimate, finer_possible ? mul_sat(width, height) : estimate, 1);
}

static CUresult pitch_end(struct gmg_op *op, CUresult r, enum gmg_space space, CUdeviceptr p, uint64_t pitch,
                          size_t width, size_t height)
{
    uint64_t granted = mul_sat(pitch, height);
    /* only a width the estimate rounds up shows the driver's alignment (a
     * width of 1024 is 1024 rows on any driver) */
    if (r == CUDA_SUCCESS && height && width % PITCH_ALIGN) {
        if (granted < pitch_estimate(width, height))
            __atomic_store_n(&pitch_rule, PITCH_FINER, __ATOMIC_RELAXED);
        else if (__atomic_load_n(&pitch_rule, __ATOMIC_RELAXED) == PITCH_UNKNOWN)
            __atomic_store_n(&pitch_rule, PITCH_AS_ESTIMATED, __ATOMIC_RELAXED);
    }
    if (r == CUDA_SUCCESS && !gmg_adjust(op, granted)) {
        if (space == GMG_SPACE_DEVPTR_V1)
            CALL_REAL(cuMemFree, (CUdeviceptr_v1)p);
        else
            CALL_REAL(cuMemFree_v2, p);
        gmg_end(op, CUDA_ERROR_OUT_OF_MEMORY, space, 0, 0, 0);
        return gmg_refuse(op, granted);
    }
    gmg_end(op, r, space, space == GMG_SPACE_DEVPTR_V1 ? gmg_key_v1(p, op->dev) : p, granted, mul_sat(width, height));
    return r;
}

GMG_EXPORT CUresult CUDAAPI cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes, size_t Height,
                                               unsigned int ElementSizeBytes)
{
    gmg_enter(H_cuMemAllocPitch_v2);
    struct gmg_op op;
    if (!dptr || !pPitch)
        return CALL_REAL(cuMemAllocPitch_v2, dptr, pPitch, WidthInBytes, Height, ElementSizeBytes);
    CUresult r = pitch_begin(&op, WidthInBytes, Height);
    if (r != CUDA_SUCCESS)
        return r;
    r = CALL_REAL(cuMemAllocPitch_v2, dptr, pPitch, WidthInBytes, Height, ElementSizeBytes);
    return pitch_end(&op, r, GMG_SPACE_DEVPTR, r == CUDA_SUCCESS ? *dptr : 0, r == CUDA_SUCCESS ? *pPitch : 0, WidthInBytes, Height);
}

GMG_EXPORT CUresult CUDAAPI cuMemAllocPitch(CUdeviceptr_v1 *dptr, unsigned int *pPitch, unsigned int WidthInBytes,
                                            unsigned int Height, unsigned int ElementSizeBytes)
{
    gmg_enter(H_cuMemAllocPitch);
    struct gmg_op op;
    if (!dptr || !pPitch)
        return CALL_REAL(cuMemAllocPitch, dptr, pPitch, WidthInBytes, Height, ElementSizeBytes);
    CUresult r = pitch_begin(&op, WidthInBytes, Height);
    if (r != CUDA_SUCCESS)
        return r;
    r = CALL_REAL(cuMemAllocPitch, dptr, pPitch, WidthInBytes, Height, ElementSizeBytes);
    return pitch_end(&op, r, GMG_SPACE_DEVPTR_V1, r == CUDA_SUCCESS ? *dptr : 0, r == CUDA_SUCCESS ? *pPitch : 0, WidthInBytes, Height);
}

/* A stream-ordered allocation freed, by either free, goes back to its pool,
 * which may keep it: the trim before a refusal hears of it (poolstats.c).
 * Managed memory counted by the quota may come from a managed pool (the
 * record does not say; a hint after cuMemAllocManaged's free costs at most
 * one needless trim, near the limit). */
static inline void to_pool(const struct gmg_free *f, uint64_t *bytes, int *dev)
{
    *bytes = f->fr.a && (f->fr.a->family == GMG_FAM_ASYNC || (f->fr.a->family == GMG_FAM_MANAGED && f->fr.a->counted))
                 ? f->fr.a->size
                 : 0;
    *dev = f->fr.a ? f->fr.a->device : -1;
}

GMG_EXPORT CUresult CUDAAPI cuMemFree_v2(CUdeviceptr dptr)
{
    gmg_enter(H_cuMemFree_v2);
    struct gmg_free f;
    gmg_free_take_devptr(&f, dptr, 0);
    uint64_t pooled;
    int dev;
    to_pool(&f, &pooled, &dev);
    CUresult r = CALL_REAL(cuMemFree_v2, dptr);
    gmg_free_done(&f, r);
    if (__builtin_expect(pooled != 0, 0) && r == CUDA_SUCCESS)
        gmg_mempool_freed(dev, pooled);
    return r;
}

GMG_EXPORT CUresult CUDAAPI cuMemFree(CUdeviceptr_v1 dptr)
{
    gmg_enter(H_cuMemFree);
    struct gmg_free f;
    gmg_free_take_devptr(&f, dptr, 1);
    uint64_t pooled;
    int dev;
    to_pool(&f, &pooled, &dev);
    CUresult r = CALL_REAL(cuMemFree, dptr);
    gmg_free_done(&f, r);
    if (__builtin_expect(pooled != 0, 0) && r == CUDA_SUCCESS)
        gmg_mempool_freed(dev, pooled);
    return r;
}

/* ------------------------------------------------------ stream-ordered */

struct async_args { CUstream s; CUmemoryPool pool; int ptsz; };

static CUresult call_async(CUdeviceptr *d, size_t b, void *arg)
{
    struct async_args *a = arg;
    return a->ptsz ? CALL_REAL(cuMemAllocAsync_ptsz, d, b, a->s) : CALL_REAL(cuMemAllocAsync, d, b, a->s);
}

static CUresult call_pool(CUdeviceptr *d, size_t b, void *arg)
{
    struct async_args *a = arg;
    return a->ptsz ? CALL_REAL(cuMemAllocFromPoolAsync_ptsz, d, b, a->pool, a->s)
                   : CALL_REAL(cuMemAllocFromPoolAsync, d, b, a->pool, a->s);
}

/* From the current device's pool; while its stream captures, a graph's
 * allocation node (hooks/graph.h), reported and never counted. */
static CUresult async_current(CUdeviceptr *dptr, size_t bytesize, struct async_args *a)
{
    if (gmg_captured(a->s, a->ptsz))
        return linear(dptr, bytesize, GMG_FAM_GRAPH, 0, call_async, a);
    return linear(dptr, bytesize, GMG_FAM_ASYNC, 1, call_async, a);
}

GMG_EXPORT CUresult CUDAAPI cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
    gmg_enter(H_cuMemAllocAsync);
    struct async_args a = { hStream, NULL, 0 };
    return async_current(dptr, bytesize, &a);
}

GMG_EXPORT CUresult CUDAAPI cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
    gmg_enter(H_cuMemAllocAsync_ptsz);
    struct async_args a = { hStream, NULL, 1 };
    return async_current(dptr, bytesize, &a);
}

/* From the pool's device, whichever context is current (hooks/mempool.h);
 * a host pool's memory counts against no device, a managed pool's as
 * cuMemAllocManaged's does. */
static CUresult from_pool(CUdeviceptr *dptr, size_t bytesize, struct async_args *a)
{
    int dev;
    enum gmg_mempool_kind kind = gmg_mempool_lookup(a->pool, &dev);
    if (gmg_captured(a->s, a->ptsz)) /* a graph's node: no memory until a launch */
        return linear_on(dptr, bytesize, GMG_FAM_GRAPH, kind == GMG_MEMPOOL_DEVICE ? dev : -1, 0, call_pool, a);
    switch (kind) {
    case GMG_MEMPOOL_DEVICE: return linear_on(dptr, bytesize, GMG_FAM_ASYNC, dev, 1, call_pool, a);
    case GMG_MEMPOOL_HOST: /* pinned host memory, as cuMemHostAlloc's: on no device's quota,
                              in no refusal's list of what holds it, untouched by teardown */
        return linear_on(dptr, bytesize, GMG_FAM_HOST, -1, 0, call_pool, a);
    case GMG_MEMPOOL_MANAGED:
        return linear_on(dptr, bytesize, GMG_FAM_MANAGED, dev, gmg_cfg.count_managed, call_pool, a);
    default: return linear(dptr, bytesize, GMG_FAM_ASYNC, 1, call_pool, a);
    }
}

GMG_EXPORT CUresult CUDAAPI cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
                                                    CUstream hStream)
{
    gmg_enter(H_cuMemAllocFromPoolAsync);
    struct async_args a = { hStream, pool, 0 };
    return from_pool(dptr, bytesize, &a);
}

GMG_EXPORT CUresult CUDAAPI cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
                                                         CUstream hStream)
{
    gmg_enter(H_cuMemAllocFromPoolAsync_ptsz);
    struct async_args a = { hStream, pool, 1 };
    return from_pool(dptr, bytesize, &a);
}

GMG_EXPORT CUresult CUDAAPI cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream)
{
    gmg_enter(H_cuMemFreeAsync);
    struct gmg_free f;
    gmg_free_take_devptr(&f, dptr, 0);
    uint64_t pooled;
    int dev;
    to_pool(&f, &pooled, &dev);
    CUresult r = CALL_REAL(cuMemFreeAsync, dptr, hStream);
    gmg_free_done(&f, r);
    if (pooled && r == CUDA_SUCCESS)
        gmg_mempool_freed(dev, pooled);
    return r;
}

GMG_EXPORT CUresult CUDAAPI cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream)
{
    gmg_enter(H_cuMemFreeAsync_ptsz);
    struct gmg_free f;
    gmg_free_take_devptr(&f, dptr, 0);
    uint64_t pooled;
    int dev;
    to_pool(&f, &pooled, &dev);
    CUresult r = CALL_REAL(cuMemFreeAsync_ptsz, dptr, hStream);
    gmg_free_done(&f, r);
    if (pooled && r == CUDA_SUCCESS)
        gmg_mempool_freed(dev, pooled);
    return r;
}
