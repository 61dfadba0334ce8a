/*
 * mempool.c - see mempool.h. An open-addressed table of pool handles: a
 * slot is claimed by compare-and-swap, filled, then published by a release
 * store of the handle; a reader that finds the handle reads what was filled
 * before it. A destroyed pool's slot becomes a tombstone, which a new pool
 * may take. No probe goes further than PROBES slots from a handle's home,
 * so that tombstones left by many pools made and destroyed never make the
 * allocation path's lookup walk the table; a pool that finds no slot so
 * near (hundreds live) stays unknown, said once.
 */
#include "hooks/mempool.h"

#include "base/log.h"
#include "hooks/intercept.h"

#include <stdint.h>

#define SLOTS 1024 /* a power of two */
_Static_assert(SLOTS + 64 <= GMG_MEMPOOLS_MAX, "a report lists every pool remembered and each device's");
#define PROBES 64
#define EMPTY ((uintptr_t)0)
#define TOMB ((uintptr_t)1)  /* a destroyed pool's slot: probing goes on */
#define BUSY ((uintptr_t)2)  /* being filled */

struct slot {
    uintptr_t pool;
    int32_t dev;
    int32_t kind;
};
static struct slot slots[SLOTS];
static int full_said;

static unsigned home(uintptr_t p)
{
    return (unsigned)(((uint64_t)p * 0x9e3779b97f4a7c15ull) >> 54) & (SLOTS - 1);
}

enum gmg_mempool_kind gmg_mempool_lookup(CUmemoryPool pool, int *dev)
{
    uintptr_t p = (uintptr_t)pool;
    *dev = -1;
    if (p <= BUSY)
        return GMG_MEMPOOL_UNKNOWN;
    for (unsigned i = 0, k = home(p); i < PROBES; i++, k = (k + 1) & (SLOTS - 1)) {
        uintptr_t v = __atomic_load_n(&slots[k].pool, __ATOMIC_ACQUIRE);
        if (v == EMPTY)
            break;
        if (v == p) { /* relaxed, then the handle read again (acquire): a slot reused
                         meanwhile (its pool destroyed while allocated from, which the
                         driver refuses anyway) gives no other pool's device */
            int d = __atomic_load_n(&slots[k].dev, __ATOMIC_RELAXED);
            int kind = __atomic_load_n(&slots[k].kind, __ATOMIC_RELAXED);
            __atomic_thread_fence(__ATOMIC_ACQUIRE);
            if (__atomic_load_n(&slots[k].pool, __ATOMIC_RELAXED) != p)
                return GMG_MEMPOOL_UNKNOWN;
            *dev = d;
            return (enum gmg_mempool_kind)kind;
        }
    }
    return GMG_MEMPOOL_UNKNOWN;
}

void gmg_mempool_each(void (*fn)(CUmemoryPool pool, enum gmg_mempool_kind kind, int dev, void *arg), void *arg)
{
    for (unsigned k = 0; k < SLOTS; k++) {
        uintptr_t v = __atomic_load_n(&slots[k].pool, __ATOMIC_ACQUIRE);
        if (v <= BUSY)
            continue;
        int d = __atomic_load_n(&slots[k].dev, __ATOMIC_RELAXED);
        int kind = __atomic_load_n(&slots[k].kind, __ATOMIC_RELAXED);
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (__atomic_load_n(&slots[k].pool, __ATOMIC_RELAXED) == v)
            fn((CUmemoryPool)v, (enum gmg_mempool_kind)kind, d, arg);
    }
}

static void forget(uintptr_t p)
{
    for (unsigned i = 0, k = home(p); i < PROBES; i++, k = (k + 1) & (SLOTS - 1)) {
        uintptr_t v = __atomic_load_n(&slots[k].pool, __ATOMIC_ACQUIRE);
        if (v == EMPTY)
            break;
        if (v == p) /* every copy: two threads may have named the same pool at once */
            __atomic_compare_exchange_n(&slots[k].pool, &v, TOMB, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED);
    }
}

void gmg_mempool_atfork_child(void)
{
    for (unsigned k = 0; k < SLOTS; k++)
        slots[k].pool = EMPTY; /* the only thread now */
}

static void remember(CUmemoryPool pool, enum gmg_mempool_kind kind, int dev)
{
    uintptr_t p = (uintptr_t)pool;
    int known;
    if (p <= BUSY || (gmg_mempool_lookup(pool, &known) == kind && known == dev))
        return; /* the default pool is asked for again and again */
    forget(p); /* a handle the driver reused for a new pool */
    for (unsigned i = 0, k = home(p); i < PROBES; i++, k = (k + 1) & (SLOTS - 1)) {
        uintptr_t v = __atomic_load_n(&slots[k].pool, __ATOMIC_RELAXED);
        if ((v == EMPTY || v == TOMB) &&
            __atomic_compare_exchange_n(&slots[k].pool, &v, BUSY, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
            __atomic_store_n(&slots[k].dev, dev, __ATOMIC_RELAXED);
            __atomic_store_n(&slots[k].kind, (int32_t)kind, __ATOMIC_RELAXED);
            __atomic_store_n(&slots[k].pool, p, __ATOMIC_RELEASE);
            return;
        }
    }
    if (!__atomic_exchange_n(&full_said, 1, __ATOMIC_RELAXED))
        gmg_notice("too many memory pools to remember (hundreds live): allocations from the others count "
                   "against the calling thread's device");
}

/* A pool of this allocation type at this location (cuMemPoolCreate's
 * properties, or CUDA 13's lookups by location). */
static void remember_at(CUmemoryPool pool, CUmemAllocationType type, const CUmemLocation *loc)
{
    int dev = gmg_location_device(loc);
    if (type == CU_MEM_ALLOCATION_TYPE_MANAGED)
        remember(pool, GMG_MEMPOOL_MANAGED, dev);
    else if (dev >= 0)
        remember(pool, GMG_MEMPOOL_DEVICE, dev);
    else if (loc->type == CU_MEM_LOCATION_TYPE_HOST || loc->type == CU_MEM_LOCATION_TYPE_HOST_NUMA ||
             loc->type == CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT)
        remember(pool, GMG_MEMPOOL_HOST, -1);
}

GMG_EXPORT CUresult CUDAAPI cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *poolProps)
{
    gmg_enter(H_cuMemPoolCreate);
    CUresult r = CALL_REAL(cuMemPoolCreate, pool, poolProps);
    if (r == CUDA_SUCCESS && pool && poolProps)
        remember_at(*pool, poolProps->allocType, &poolProps->location);
    return r;
}

GMG_EXPORT CUresult CUDAAPI cuMemPoolDestroy(CUmemoryPool pool)
{
    gmg_enter(H_cuMemPoolDestroy);
    CUresult r = CALL_REAL(cuMemPoolDestroy, pool);
    if (r == CUDA_SUCCESS)
        forget((uintptr_t)pool);
    return r;
}

GMG_EXPORT CUresult CUDAAPI cuDeviceGetDefaultMemPool(CUmemoryPool *pool_out, CUdevice dev)
{
    gmg_enter(H_cuDeviceGetDefaultMemPool);
    CUresult r = CALL_REAL(cuDeviceGetDefaultMemPool, pool_out, dev);
    if (r == CUDA_SUCCESS && pool_out && dev >= 0)
        remember(*pool_out, GMG_MEMPOOL_DEVICE, dev);
    return r;
}

/* The device's current pool: its default, or one made for it (a pool of
 * another device cannot be made current, cuDeviceSetMemPool). */
GMG_EXPORT CUresult CUDAAPI cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev)
{
    gmg_enter(H_cuDeviceGetMemPool);
    CUresult r = CALL_REAL(cuDeviceGetMemPool, pool, dev);
    int known;
    if (r == CUDA_SUCCESS && pool && dev >= 0 && gmg_mempool_lookup(*pool, &known) == GMG_MEMPOOL_UNKNOWN)
        remember(*pool, GMG_MEMPOOL_DEVICE, dev);
    return r;
}

/* CUDA 13 names pools by location and allocation type, the host's and
 * managed memory's too (cudaMemGetDefaultMemPool, cudaMemGetMemPool): the
 * pool is that location's, whichever context is current. */
GMG_EXPORT CUresult CUDAAPI cuMemGetDefaultMemPool(CUmemoryPool *pool_out, CUmemLocation *location,
                                                   CUmemAllocationType type)
{
    gmg_enter(H_cuMemGetDefaultMemPool);
    CUresult r = CALL_REAL(cuMemGetDefaultMemPool, pool_out, location, type);
    if (r == CUDA_SUCCESS && pool_out && location)
        remember_at(*pool_out, type, location);
    return r;
}

GMG_EXPORT CUresult CUDAAPI cuMemGetMemPool(CUmemoryPool *pool, CUmemLocation *location, CUmemAllocationType type)
{
    gmg_enter(H_cuMemGetMemPool);
    CUresult r = CALL_REAL(cuMemGetMemPool, pool, location, type);
    if (r == CUDA_SUCCESS && pool && location)
        remember_at(*pool, type, location);
    return r;
}
