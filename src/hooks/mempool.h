/*
 * mempool.h - where a memory pool's allocations live (hooks layer). A pool
 * made with cuMemPoolCreate, or a device's default or current pool asked
 * for with cuDeviceGetDefaultMemPool / cuDeviceGetMemPool, or a location's
 * with CUDA 13's cuMemGetDefaultMemPool / cuMemGetMemPool, is remembered by
 * its handle until cuMemPoolDestroy, so that cuMemAllocFromPoolAsync counts
 * against the pool's device (SPEC §2), not the calling thread's current
 * one: a thread may allocate from another device's pool, or have no
 * context current at all. Lock-free: read on the allocation path, written
 * when pools are made or named, safe across fork (no lock to inherit).
 */
#ifndef GMG_HOOKS_MEMPOOL_H
#define GMG_HOOKS_MEMPOOL_H

#include "driver/real.h"

enum gmg_mempool_kind {
    GMG_MEMPOOL_UNKNOWN = 0, /* never seen (or the table was full): the current device's */
    GMG_MEMPOOL_DEVICE,      /* pinned device memory of `dev` */
    GMG_MEMPOOL_HOST,        /* pinned host memory (a host or NUMA location): no device's quota */
    GMG_MEMPOOL_MANAGED,     /* managed memory (CUDA 13 managed pools), preferring `dev` if >= 0 */
};

/* The device a memory location names (CU_MEM_LOCATION_TYPE_DEVICE), or -1:
 * a pool's or a graph memory node's. */
static inline int gmg_location_device(const CUmemLocation *loc)
{
    return loc->type == CU_MEM_LOCATION_TYPE_DEVICE && loc->id >= 0 ? loc->id : -1;
}

/* What the pool is, and its device (-1 when it has none). */
enum gmg_mempool_kind gmg_mempool_lookup(CUmemoryPool pool, int *dev);

/* Every pool remembered now, with its kind and device (reports). */
void gmg_mempool_each(void (*fn)(CUmemoryPool pool, enum gmg_mempool_kind kind, int dev, void *arg), void *arg);

/* The stream-ordered pools of the devices seen (each one's current pool,
 * and every device pool remembered) as the driver sees them now, into
 * out[0..max); how many. For the report side's device interface. */
#include "core/heaps.h"
size_t gmg_mempools_use(struct gmg_mempool_use *out, size_t max);

/* Under GPUMEM_LIMIT: give back what the pools of `dev` retain beyond what
 * is in use (cuMemPoolTrimTo 0), when the bytes counted plus `want` plus
 * what they may retain would pass `limit`. A hint kept per device says
 * whether any memory was freed into a pool since the last trim, so that
 * this costs one load when none was. */
extern int gmg_mempool_hint;
void gmg_mempool_freed(int dev, uint64_t bytes);

/* A fork child of a process that used the driver: the pools are its
 * parent's, in a driver the child cannot use (CUDA does not survive
 * fork). It forgets them and their hints, and its reports ask the driver
 * about no pool. `parent_used` 0: nothing to forget, the child may use
 * the driver itself. */
void gmg_mempool_atfork_child(void);
void gmg_mempools_atfork_child(int parent_used);
void gmg_mempool_trim_for(int dev, uint64_t want);
/* What the wrappers call for it: gmg_mempool_trim_for, installed by guard.c
 * (a pointer, so that the wrappers' steps call no file that calls back). */
extern void (*gmg_mempool_trim)(int dev, uint64_t want);

#endif
