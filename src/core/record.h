/*
 * record.h - one allocation as the guard remembers it (core layer): what a
 * key means, the API families, the record itself, where records come from
 * (pools: one per shard of the table, used under its lock), the contexts
 * records point to (an index, not a pointer) and the process-wide counters.
 */
#ifndef GMG_CORE_RECORD_H
#define GMG_CORE_RECORD_H

#include <stdint.h>

#include "base/hashtab.h" /* uthash, non-fatal out of memory */

/* What a key means: the same number can be a device pointer and a handle. */
enum gmg_space {
    GMG_SPACE_DEVPTR = 1,  /* linear, pitch, managed, async, IPC mappings,
                              graph memory nodes                          */
    GMG_SPACE_VMM,         /* cuMemCreate handles                         */
    GMG_SPACE_MAP,         /* cuMemMap ranges                             */
    GMG_SPACE_VA,          /* cuMemAddressReserve ranges                  */
    GMG_SPACE_ARRAY,       /* CUarray and CUmipmappedArray                */
    GMG_SPACE_HOST,        /* pinned host memory                          */
    GMG_SPACE_DEVPTR_V1,   /* legacy 32-bit pointers: value = ptr | (device + 1) << 32,
                              since two devices can hand out the same 32 bits */
    GMG_SPACE_NVTX,        /* NVTX memory regions inside a pool's segment
                              (core/heaps.h): the region's address         */
    GMG_SPACE_NVTX_UNDER,  /* a region an inner heap's region at its address
                              covers (heaps nested): back in GMG_SPACE_NVTX
                              when that one goes (hooks/nvtx.c)            */
};

enum gmg_family {
    GMG_FAM_LINEAR, GMG_FAM_PITCH, GMG_FAM_MANAGED, GMG_FAM_ASYNC, GMG_FAM_VMM,
    GMG_FAM_VMM_MAP, GMG_FAM_VA, GMG_FAM_ARRAY, GMG_FAM_MIPMAP, GMG_FAM_HOST,
    GMG_FAM_HOST_REGISTER, GMG_FAM_IPC, GMG_FAM_GRAPH,
    GMG_FAM_VMM_HOST,      /* a cuMemCreate handle in host memory: on no device's quota */
    GMG_FAM_POOL_IMPORT,   /* a pool allocation imported from another process: never counted */
    GMG_FAM_NVTX_REGION,   /* a sub-allocation a pool registered (nvtxMemRegionsRegister): never
                              counted, its segment is */
    GMG_FAM_COUNT
};

/* Pinned host memory, on no device's quota: its out of memory is no device's. */
static inline int gmg_family_host(int family)
{
    return family == GMG_FAM_HOST || family == GMG_FAM_HOST_REGISTER || family == GMG_FAM_VMM_HOST;
}

/* The table's key: the value and its space, 9 contiguous bytes from
 * `value` (GMG_KEY_LEN), hashed and compared as they lie in the record. */
#define GMG_KEY_LEN 9

/*
 * One live allocation: 32 bytes of its own and the uthash handle (56), 88 in
 * all. Only the records that need a ninth word have one (`aux`, 96 bytes):
 * a VMM handle (its live mappings), a cuMemMap mapping (the physical handle
 * it maps) and an allocation whose granted size differs from what was asked
 * (pitch: what the caller asked for) and an NVTX region (its heap's
 * handle, core/heaps.h). Every other record asked for `size`.
 * The flag bits are read and written under the record's shard lock, or by
 * the one thread that owns a record out of the table.
 */
struct gmg_alloc {
    uint64_t value;       /* the key: a pointer, a handle ...            */
    uint8_t space;        /* ... and what it means (enum gmg_space)      */
    int8_t device;        /* -1 when unknown (or above 127)              */
    uint8_t family;
    uint8_t counted : 1;  /* its size is reserved in the quota           */
    uint8_t released : 1; /* VMM handle released by the program while still
                             mapped: it counts until the last unmap      */
    uint8_t freeing : 1;  /* a free is in flight; the freeing thread owns it */
    uint8_t freed_by_other : 1; /* a racing free of the same key succeeded */
    uint8_t detached : 1; /* taken out of the table while being freed (the
                             address was reused); the freeing thread drops it */
    uint8_t torn_down : 1; /* its context was torn down while it was being
                             freed: if the free fails, it was reclaimed  */
    uint8_t seen : 1;     /* a signal or API dump has listed it: not growth */
    uint8_t has_aux : 1;  /* the record has `aux` (96 bytes, not 88)     */
    uint32_t ctx;         /* the context current at allocation: an index
                             (gmg_ctx_index), 0 when none               */
    uint64_t size;        /* bytes: counted against the quota if `counted` */
    uint32_t stack;       /* stack depot id, 0 when stacks are off       */
    uint32_t seq;         /* per shard, never 0: tells a record from a newer
                             one at the same key (racing frees)          */
    UT_hash_handle hh;
    uint64_t aux[];       /* [0]: see above, only when has_aux           */
};

_Static_assert(sizeof(struct gmg_alloc) == 88, "a record is 88 bytes (96 with aux)");
_Static_assert(__builtin_offsetof(struct gmg_alloc, space) == 8, "the key is 9 contiguous bytes");

/* Bytes the caller asked for (a VMM handle's, a mapping's and an NVTX
 * region's ninth word is no size: their mapping count, handle and heap). */
static inline uint64_t gmg_alloc_requested(const struct gmg_alloc *a)
{
    return a->has_aux && a->space != GMG_SPACE_VMM && a->space != GMG_SPACE_MAP && a->space != GMG_SPACE_NVTX &&
                   a->space != GMG_SPACE_NVTX_UNDER
               ? a->aux[0]
               : a->size;
}

/* A lookup key laid out as in a record. */
struct gmg_key {
    uint64_t value;
    uint8_t space;
};

const char *gmg_family_name(int family);   /* e.g. "cuMemAlloc" */

/* What is left of a record once it is out of the table for good: what its
 * dropper needs (release its quota, count its free, a mapping's handle). */
struct gmg_gone {
    uint64_t value, size;
    uint64_t aux;         /* aux[0] when the record had one, else 0 */
    uint32_t stack;
    uint32_t seq;         /* the record's: with value, which record it was */
    int device, family, space, counted;
};
void gmg_gone_of(const struct gmg_alloc *a, struct gmg_gone *g);

/* A pool of records (see record.c); its user serialises get and put (the
 * shard's lock). get: a record, not zeroed but for has_aux (aux: with the
 * ninth word); the calling thread's spare first; NULL when out of memory.
 * put: back for reuse. give_back: a record the caller owns, out of every
 * table, returned with no lock held: it becomes the thread's spare, or goes
 * on the pool's `returned` stack (one compare-and-swap) for a later get. */
struct gmg_pool {
    char *free[2];
    char *bump, *end;
    size_t next_chunk;
    char *returned[2];    /* lock-free stacks: give_back pushes, get takes all */
};
struct gmg_alloc *gmg_pool_get(struct gmg_pool *p, int aux);
void gmg_pool_put(struct gmg_pool *p, struct gmg_alloc *a);
void gmg_pool_give_back(struct gmg_pool *p, struct gmg_alloc *a);

/* The index of a context for records (the same handle, the same index);
 * 0 for none, or when the table cannot grow. `add` 0: look only. */
uint32_t gmg_ctx_index(uintptr_t ctx, int add);
/* How many times a context was given index 0 because the table could not
 * take it (out of memory; an allocation in such a context asks again):
 * their allocations are not reclaimed at teardown. */
uint64_t gmg_ctx_unindexed(void);

/* A free of a pointer the guard never saw (it is passed to the driver). */
void gmg_record_unknown_free(void);
uint64_t gmg_record_unknown_frees(void);

/* A record was made on `dev` (counted per thread, core/quota.h; records
 * without a device the quota knows on a counter of their own). */
void gmg_record_made(int dev);
/* How many records were ever made. */
uint64_t gmg_record_total(void);

/* fork child: its counters start at zero (the table starts empty). */
void gmg_record_atfork_child(void);

#endif
