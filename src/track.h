/*
 * track.h - the table of live allocations.
 *
 * Sharded by key so that threads allocating different pointers never take
 * the same lock; each shard is a uthash table under its own mutex. Records
 * are allocated by the caller before any lock is taken and freed after.
 * Records of memory a context teardown reclaimed move to a separate list:
 * they no longer count, but they were never freed by the program.
 */
#ifndef GMG_TRACK_H
#define GMG_TRACK_H

#include <stddef.h>
#include <stdint.h>
#include <uthash.h>

/* What a key means: the same number can be a device pointer and a handle. */
enum gmg_space {
    GMG_SPACE_DEVPTR = 1,  /* linear, pitch, managed, async, IPC mappings */
    GMG_SPACE_VMM,         /* cuMemCreate handles                         */
    GMG_SPACE_MAP,         /* cuMemMap ranges                             */
    GMG_SPACE_VA,          /* cuMemAddressReserve ranges                  */
    GMG_SPACE_ARRAY,       /* CUarray and CUmipmappedArray                */
    GMG_SPACE_HOST,        /* pinned host memory                          */
};

enum gmg_family {
    GMG_FAM_LINEAR, GMG_FAM_PITCH, GMG_FAM_MANAGED, GMG_FAM_ASYNC, GMG_FAM_VMM,
    GMG_FAM_VMM_MAP, GMG_FAM_VA, GMG_FAM_ARRAY, GMG_FAM_MIPMAP, GMG_FAM_HOST,
    GMG_FAM_HOST_REGISTER, GMG_FAM_IPC, GMG_FAM_COUNT
};

const char *gmg_family_name(int family);   /* e.g. "cuMemAlloc" */

struct gmg_key {
    uint64_t value;
    uint64_t space;
};

struct gmg_alloc {
    struct gmg_key key;
    uint64_t size;        /* bytes: counted against the quota if `counted` */
    uint64_t requested;   /* bytes the caller asked for                    */
    uint64_t seq;         /* allocation order, process-wide                */
    uint64_t time_ns;     /* CLOCK_MONOTONIC at allocation                 */
    uintptr_t ctx;        /* the context current at allocation             */
    uint32_t stack;       /* stack depot id, 0 when stacks are off         */
    uint32_t tid;
    int16_t device;       /* -1 when unknown                               */
    uint8_t family;
    uint8_t counted;      /* 1: its size is reserved in the quota          */
    UT_hash_handle hh;
};

/* Insert a filled record. If the key was live already (the driver reused
 * an address whose free we never saw), the stale record is returned for the
 * caller to release; otherwise NULL. */
struct gmg_alloc *gmg_track_insert(struct gmg_alloc *a);

/* Remove and return the record for a key, or NULL. */
struct gmg_alloc *gmg_track_remove(enum gmg_space space, uint64_t value);

/* Copy of the record for a key, without removing it; 0 if not live. */
int gmg_track_lookup(enum gmg_space space, uint64_t value, struct gmg_alloc *out);

/* Remove every record with `space` whose value lies in [lo, lo + len). The
 * callback gets each removed record and owns it. Returns how many. */
size_t gmg_track_remove_range(enum gmg_space space, uint64_t lo, uint64_t len,
                              void (*fn)(struct gmg_alloc *, void *), void *arg);

/* Move every record made in context `ctx` (device-memory families) to the
 * reclaimed list; the callback sees each one first (to release its quota). */
size_t gmg_track_reclaim_ctx(uintptr_t ctx, void (*fn)(const struct gmg_alloc *, void *), void *arg);

/* A copy of every live record (and, separately, every reclaimed one),
 * malloc'd; the caller frees. Shards are locked one at a time. */
struct gmg_alloc *gmg_track_snapshot(size_t *n);
struct gmg_alloc *gmg_track_reclaimed(size_t *n);

size_t gmg_track_count(void);

/* fork: lock every shard in the parent, unlock after; the child starts with
 * an empty table. */
void gmg_track_atfork_prepare(void);
void gmg_track_atfork_parent(void);
void gmg_track_atfork_child(void);

#endif
