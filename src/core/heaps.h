/*
 * heaps.h - memory heaps a sub-allocator declared with the NVTX memory API
 * (core layer): nvtxMemHeapRegister's ranges, their segment, and the bytes
 * their registered regions hold. The regions themselves are records of the
 * table (GMG_SPACE_NVTX, family GMG_FAM_NVTX_REGION), uncounted: their
 * segment is counted already. hooks/nvtx.c keeps this registry; reports
 * read it (a heap's segment is a pool's, its unregistered bytes retained).
 * The region calls (get, regions_add, regions_clear) take no lock: they
 * are on a sub-allocator's path, every thread's; adding, removing, naming
 * and listing heaps take one.
 */
#ifndef GMG_CORE_HEAPS_H
#define GMG_CORE_HEAPS_H

#include <stdint.h>

struct gmg_heap_info {
    uint64_t lo, size;        /* the heap's range */
    int device;
    uint32_t ctx;             /* its segment's context index, 0 when untracked */
    uint32_t seg_stack;       /* its segment's stack id, 0 when untracked */
    int seg_family;           /* its segment's family, -1 when untracked */
    uint64_t seg_size;        /* its segment's bytes, 0 when untracked */
    uint64_t seg_value;       /* its segment's record: key value and sequence number */
    uint32_t seg_seq;
    uint64_t region_bytes;    /* bytes of its live regions */
    const char *name;         /* the heap's NVTX message, or NULL; lives for ever */
    uint64_t serial;          /* out only: the order of registration (1, 2, ...) */
};

/* Whether a heap lies in an allocation the guard tracks (its segment). */
static inline int gmg_heap_tracked(const struct gmg_heap_info *h) { return h->seg_family >= 0; }

/* A new heap; its handle (never 0), or 0 when out of memory. */
uintptr_t gmg_heap_add(const struct gmg_heap_info *h);
/* The heap of a handle: 1 and *out, or 0 when no such heap is live. */
int gmg_heap_get(uintptr_t handle, struct gmg_heap_info *out);
/* The handle of the live heap that starts at address lo (NVTX names a
 * virtual-address heap by its address): the latest registered of those
 * that do, or 0 when none does; *out its description as gmg_heap_get
 * gives it, but for region_bytes and the seg_ fields, which may be older
 * (a region's path reads neither). No lock: memoised per thread while no
 * heap comes or goes, else found in an index by address (O(1)). */
uintptr_t gmg_heap_at(uint64_t lo, struct gmg_heap_info *out);
/* The same, the latest of those that also hold [ptr, ptr + size): of two
 * heaps at one address (a layout inside a sub-allocator's), the one a
 * region fits. 0 when none does. */
uintptr_t gmg_heap_at_holding(uint64_t lo, uint64_t ptr, uint64_t size);
/* Forget a heap: 1, or 0 when no such heap is live. */
int gmg_heap_remove(uintptr_t handle);
/* Move a heap's region bytes by delta (nothing when it is gone). */
void gmg_heap_regions_add(uintptr_t handle, int64_t delta);
/* Set every heap's region bytes (handle 0) or one's to 0 (a reset). */
void gmg_heap_regions_clear(uintptr_t handle);
/* A tracked allocation was freed (its record's value and sequence number):
 * a heap still registered over it keeps its regions (registered, they stay
 * leaks) but has no segment any more; said once. By the record, not by
 * address: another thread may have the address again already, and a heap
 * over it. */
void gmg_heaps_segment_gone(uint64_t value, uint32_t seq);
/* [lo, lo + size) was unmapped: a heap registered in it whose segment is a
 * physical allocation mapped there has none any more; said once. */
void gmg_heaps_unmapped(uint64_t lo, uint64_t size);
/* How many heaps are live (a hint, no lock). */
unsigned gmg_heaps_live(void);
/* Every live heap, under the lock (fn must not call back in). */
void gmg_heaps_each(void (*fn)(const struct gmg_heap_info *, void *), void *arg);
/* Intern a heap's name for the life of the process (NULL when out of memory). */
const char *gmg_heap_name(const char *s, unsigned maxlen);
void gmg_heaps_atfork_child(void);

/* The most stream-ordered pools a report lists: every pool the hooks
 * remember (hooks/mempool.c) and each device's current one. */
#define GMG_MEMPOOLS_MAX (1024 + 64)

/* A stream-ordered memory pool as the driver sees it at a report
 * (cuMemPoolGetAttribute): what it reserves from the device, what of that
 * is in use, and its release threshold. reserved - used is what the pool
 * retains. */
enum gmg_mempool_memory { GMG_POOL_DEVICE_MEMORY, GMG_POOL_HOST_MEMORY, GMG_POOL_MANAGED_MEMORY };
struct gmg_mempool_use {
    uint64_t pool;
    int device;          /* -1: pinned host memory, or managed memory with no preferred device */
    int memory;          /* enum gmg_mempool_memory */
    uint64_t reserved, used, threshold;
};

#endif
