/*
 * poolstats.c - what stream-ordered memory pools retain (hooks layer): the
 * driver's own numbers for reports (CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT
 * less USED_MEM_CURRENT: freed memory a pool keeps, up to its release
 * threshold, which PyTorch and RMM set high), and, under GPUMEM_LIMIT, the
 * trim that keeps it within the limit.
 *
 * The quota counts what is asked for: a cuMemFreeAsync gives its bytes
 * back to the quota, while the pool may keep them from the device. So each
 * device keeps a hint, the bytes freed into its pools since their last
 * trim (one atomic add per asynchronous free). A counted reservation that
 * finds a hint, and that would bring the bytes counted plus the request
 * plus the hint past the limit, first trims the device's pools to what is
 * in use (cuMemPoolTrimTo 0), and the managed pools whose memory it may
 * count (GPUMEM_COUNT_MANAGED): requests and what pools retain then stay
 * within the limit. What a pool keeps of frees still pending on a stream
 * is released by the driver at that stream's next synchronisation.
 */
#define _GNU_SOURCE
#include "hooks/mempool.h"

#include "core/quota.h"
#include "driver/real.h"

#include <stdint.h>
#include <string.h>

#define MAXDEV 64

static uint64_t freed_hint[MAXDEV];   /* bytes freed into the device's pools since the last trim */
int gmg_mempool_hint;                 /* any device's hint is not 0 */
void (*gmg_mempool_trim)(int dev, uint64_t want);

void gmg_mempool_freed(int dev, uint64_t bytes)
{
    if (dev < 0 || dev >= MAXDEV || !bytes)
        return;
    __atomic_add_fetch(&freed_hint[dev], bytes, __ATOMIC_RELAXED);
    if (!__atomic_load_n(&gmg_mempool_hint, __ATOMIC_RELAXED))
        __atomic_store_n(&gmg_mempool_hint, 1, __ATOMIC_RELAXED);
}

static int inherited; /* a fork child of a process that used the driver */

void gmg_mempools_atfork_child(int parent_used)
{
    memset(freed_hint, 0, sizeof freed_hint);
    gmg_mempool_hint = 0;
    if (parent_used)
        inherited = 1;
}

struct list {
    struct gmg_mempool_use *v;
    size_t n, max;
    int dev;                 /* only this device's (trims), or -1 */
};

static void add(struct list *l, CUmemoryPool p, int dev, int memory)
{
    if (!p || (dev < 0 && memory == GMG_POOL_DEVICE_MEMORY) || (l->dev >= 0 && dev != l->dev))
        return;
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i].pool == (uint64_t)(uintptr_t)p)
            return;
    if (l->n == l->max)
        return;
    memset(&l->v[l->n], 0, sizeof l->v[l->n]);
    l->v[l->n].pool = (uint64_t)(uintptr_t)p;
    l->v[l->n].device = dev;
    l->v[l->n].memory = memory;
    l->n++;
}

static void add_known(CUmemoryPool p, enum gmg_mempool_kind kind, int dev, void *arg)
{
    if (kind == GMG_MEMPOOL_DEVICE)
        add(arg, p, dev, GMG_POOL_DEVICE_MEMORY);
    else if (kind == GMG_MEMPOOL_HOST)
        add(arg, p, -1, GMG_POOL_HOST_MEMORY);
    else if (kind == GMG_MEMPOOL_MANAGED)
        add(arg, p, dev, GMG_POOL_MANAGED_MEMORY);
}

/* The pools: each device's current one, and those remembered (device,
 * pinned host and managed memory). */
static void pools_of(struct list *l)
{
    int ndev = gmg_quota_devices_seen();
    for (int d = 0; d < ndev; d++) {
        CUmemoryPool p = NULL;
        if ((l->dev < 0 || d == l->dev) && REAL(cuDeviceGetMemPool) && REAL(cuDeviceGetMemPool)(&p, d) == CUDA_SUCCESS)
            add(l, p, d, GMG_POOL_DEVICE_MEMORY);
    }
    gmg_mempool_each(add_known, l);
}

size_t gmg_mempools_use(struct gmg_mempool_use *out, size_t max)
{
    struct list l = { out, 0, max, -1 };
    if (!REAL(cuMemPoolGetAttribute) || inherited)
        return 0;
    pools_of(&l);
    size_t k = 0;
    for (size_t i = 0; i < l.n; i++) {
        CUmemoryPool p = (CUmemoryPool)(uintptr_t)out[i].pool;
        cuuint64_t res = 0, used = 0, thr = 0;
        if (REAL(cuMemPoolGetAttribute)(p, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &res) != CUDA_SUCCESS ||
            REAL(cuMemPoolGetAttribute)(p, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &used) != CUDA_SUCCESS)
            continue; /* a pool destroyed meanwhile, or a driver shutting down */
        REAL(cuMemPoolGetAttribute)(p, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &thr);
        if (!res)
            continue;
        out[k] = out[i];
        out[k].reserved = res;
        out[k].used = used;
        out[k].threshold = thr;
        k++;
    }
    return k;
}

/* A device's pools, and the managed pools that prefer it or no device
 * (their memory counts against the device it was allocated on). */
static void trim_known(CUmemoryPool p, enum gmg_mempool_kind kind, int dev, void *arg)
{
    if (p && ((kind == GMG_MEMPOOL_DEVICE && dev == *(int *)arg) ||
              (kind == GMG_MEMPOOL_MANAGED && (dev < 0 || dev == *(int *)arg))))
        REAL(cuMemPoolTrimTo)(p, 0);
}

void gmg_mempool_trim_for(int dev, uint64_t want)
{
    if (dev < 0 || dev >= MAXDEV)
        return;
    uint64_t hint = __atomic_load_n(&freed_hint[dev], __ATOMIC_RELAXED), limit = gmg_quota_limit(dev);
    if (!hint || !limit || gmg_quota_charged(dev) + want + hint <= limit || !REAL(cuMemPoolTrimTo) || inherited)
        return;
    __atomic_sub_fetch(&freed_hint[dev], hint, __ATOMIC_RELAXED); /* frees meanwhile keep theirs */
    /* every pool of the device, however many: the current one, then each
     * remembered (trimming one twice costs a call, nothing more) */
    CUmemoryPool p = NULL;
    if (REAL(cuDeviceGetMemPool) && REAL(cuDeviceGetMemPool)(&p, dev) == CUDA_SUCCESS && p)
        REAL(cuMemPoolTrimTo)(p, 0);
    gmg_mempool_each(trim_known, &dev);
}
