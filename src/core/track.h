/*
 * track.h - the table of live allocations (core layer).
 *
 * Sharded by key so that threads allocating different pointers never take
 * the same lock; each shard is a uthash table under its own lock
 * (base/lock.h), keyed by the 9 bytes (value, space) of each record, with
 * its own pool of records (made and dropped under the lock the operation
 * takes anyway, but for frees settled without it, see free_end). Every
 * record entering or leaving the table moves the live totals
 * (gmg_track_live_each) with it.
 * Records of memory a context teardown reclaimed move to a separate list:
 * they no longer count, but they were never freed by the program.
 */
#ifndef GMG_CORE_TRACK_H
#define GMG_CORE_TRACK_H

#include "core/record.h"

#include <stddef.h>

/* Records live in the table's own pools (one per shard, record.h): insert
 * makes one from a template, and whatever takes a record out for good gives
 * the caller what is left of it (struct gmg_gone) to drop. */

/* Insert a record made from `t` (its header: key, size, context, stack,
 * device, family, counted; has_aux says whether it has the ninth word,
 * which is set to `aux`). 0: inserted. 1: inserted, and the key was live
 * already (the driver reused an address whose free we never saw): *stale is
 * the stale record, for the caller to release. A stale record that is
 * being freed is detached instead and left to its freeing thread. -1: out
 * of memory, nothing inserted; GMG_INSERT_FAILED_STALE: nothing inserted,
 * but a stale record was taken out (*stale, as for 1). A record not
 * inserted is untracked: its bytes stay reserved in the quota
 * (core/quota.h), which thus never counts too few, and the guard says so
 * once on stderr. */
int gmg_track_insert(const struct gmg_alloc *t, uint64_t aux, struct gmg_gone *stale);
#define GMG_INSERT_FAILED_STALE (-2) /* not inserted (out of memory), and *stale is as for 1 */

/* Remove the record for a key: 1 and *out, or 0 if not live. */
int gmg_track_remove(enum gmg_space space, uint64_t value, struct gmg_gone *out);

/*
 * Frees, in three steps around the driver call, so that two threads freeing
 * one pointer at once leave neither a phantom record nor a double release:
 *   free_begin   takes the record out of the table and notes the free as in
 *                flight in its shard (see track.c), or, when the shard has
 *                no free slot and for VMM handles, marks it as being freed
 *                in the table; f->a is the record, owned by the caller. Not
 *                live: f->a NULL, and f->racing is the sequence number of
 *                the record another thread is freeing (0 if none)
 *   free_end     by the thread that began: GMG_FREE_DROPPED when the record
 *                is gone (the driver freed it, or a racing free did): *out
 *                is what is left of it, to drop; GMG_FREE_KEPT when it is
 *                live again (the driver refused and nobody else freed it);
 *                GMG_FREE_RECLAIMED when it is to go to the reclaimed list
 *                instead (its context was torn down meanwhile): *out too,
 *                and the caller releases its quota, then hands the record
 *                to track_reclaimed_add. A free the driver did, of a free
 *                in flight, takes no lock.
 *   free_racing  by a racing thread whose driver call succeeded: 1 and *out
 *                when the record of that sequence number is gone, for the
 *                caller to drop, or 0 (its owner is told and drops it; a
 *                newer record at the same key is touched only once the
 *                driver says nothing is at its address: below)
 * A VMM handle whose free succeeds while it is still mapped stays, released.
 */
enum { GMG_FREE_KEPT, GMG_FREE_DROPPED, GMG_FREE_RECLAIMED };
struct gmg_freeing {
    struct gmg_alloc *a;  /* the record this thread frees, or NULL */
    uint64_t racing;      /* another thread frees the key: its record's seq, else 0 */
    int flight;           /* the flight slot of a, or of the racing free; -1: marked in the table */
    uint32_t shard;
};
void gmg_track_free_begin(enum gmg_space space, uint64_t value, struct gmg_freeing *f);
int gmg_track_free_end(struct gmg_freeing *f, int freed, struct gmg_gone *out);
/* A free that raced another of the same key and that the driver did: 1
 * when it dropped the record (out), 0 when nothing is to be done, and
 * GMG_RACING_CHECK when the raced free was done too, so that this one freed
 * a newer allocation at that address, and the record at the key now
 * (*suspect, its seq) may be that one, or one made since: the caller asks
 * the driver whether anything is at the address now, and only if nothing
 * is, calls gmg_track_drop_dead (1 when it dropped the record), which
 * drops it only if it is of context `ctx`, the one the driver was asked in
 * (another context's allocation may not be known there). */
#define GMG_RACING_CHECK 2
int gmg_track_free_racing(enum gmg_space space, uint64_t value, const struct gmg_freeing *f, struct gmg_gone *out,
                          uint32_t *suspect);
int gmg_track_drop_dead(enum gmg_space space, uint64_t value, uint32_t seq, uint32_t ctx, struct gmg_gone *out);
void gmg_track_reclaimed_add(struct gmg_alloc *a);

/* VMM handles (GMG_SPACE_VMM): a mapping made or removed, a reference taken
 * (cuMemRetainAllocationHandle); a handle released by the program. Its
 * ninth word counts the references beyond the handle's own: mappings and
 * retains, which the driver counts alike. The first release gives back the
 * handle's own reference (released), each later one a retain's; the record
 * goes with the last reference. unmapped and released return 1 and *out
 * once the caller must drop the handle's record, else 0. vmm_is_mapped
 * (any reference beyond its own) is a hint, unlocked. vmm_mapped's extent
 * (offset + size of a mapping) sizes an uncounted handle (an import), whose
 * size the driver never says; it returns 0 when the handle has no record. */
int gmg_track_vmm_mapped(uint64_t handle, uint64_t extent);
int gmg_track_vmm_is_mapped(uint64_t handle);
int gmg_track_vmm_unmapped(uint64_t handle, struct gmg_gone *out);
int gmg_track_vmm_released(uint64_t handle, struct gmg_gone *out);

/* Copy of the record for a key (without its ninth word: *aux gets that,
 * or 0 when it has none; aux may be NULL), without removing it; 0 if not
 * live. */
int gmg_track_lookup(enum gmg_space space, uint64_t value, struct gmg_alloc *out, uint64_t *aux);

/* Remove every record with `space` whose value lies in [lo, lo + len) and,
 * when `aux` is not NULL, whose ninth word is *aux. The callback gets what
 * is left of each, with no lock held. Returns how many. */
size_t gmg_track_remove_range(enum gmg_space space, uint64_t lo, uint64_t len, const uint64_t *aux,
                              void (*fn)(const struct gmg_gone *, void *), void *arg);

/* Move every record made in context `ctx` (an index, gmg_ctx_index;
 * device-memory families) to the reclaimed list; the callback sees each
 * one first (to release its quota). */
size_t gmg_track_reclaim_ctx(uint32_t ctx, void (*fn)(const struct gmg_alloc *, void *), void *arg);

/* Reports read the table in place, never copying it: walk calls fn on every
 * live record, shards locked one at a time (fn must not call the table or
 * the driver). `fresh`: no signal or API dump has listed the record yet;
 * with `mark` (such a dump) it is listed now. reclaimed_walk: every record
 * a context teardown reclaimed (fresh is 0), under the list's lock. */
typedef void (*gmg_walk_fn)(const struct gmg_alloc *a, int fresh, void *arg);
void gmg_track_walk(int mark, gmg_walk_fn fn, void *arg);
/* After a walk with `mark`: keep its marks (its dump was delivered), or
 * undo them (it was not: what it found fresh is fresh again for the next
 * dump). Records are told apart by their shard's sequence numbers: those
 * made after the last kept walk and before this one. The caller keeps
 * marking walks apart (the reports' lock). */
/* A point in the sequence of records each shard numbers (the public API's
 * marks): walk_since calls fn on every live record made after it, shards
 * locked one at a time, as walk does (fresh as there, nothing marked). A
 * record whose free failed and that came back keeps its number. A fork
 * child's shards number from 0 again: a parent's mark means nothing there. */
#define GMG_TRACK_SHARDS 256
struct gmg_track_mark { uint32_t seq[GMG_TRACK_SHARDS]; };
void gmg_track_mark(struct gmg_track_mark *m);
void gmg_track_walk_since(const struct gmg_track_mark *m, gmg_walk_fn fn, void *arg);
void gmg_track_marks_keep(void);
void gmg_track_marks_undo(void);
void gmg_track_reclaimed_walk(gmg_walk_fn fn, void *arg);

/* Live totals per (stack, device, family), in O(stacks): the depot's per
 * stack, and stack 0's (stacks off) kept per shard. Only pairs with live
 * allocations are passed; each is read as it is at that moment. */
void gmg_track_live_each(void (*fn)(uint32_t stack, int device, int family, uint64_t bytes, uint64_t count,
                                    void *arg),
                         void *arg);

/* What was live at the peak of generation `gen` on `device` (its latest:
 * the caller holds gmg_peak_lock, core/peak.h), per (stack, family),
 * counted allocations only, in O(stacks + shards). */
void gmg_track_peak_each(int device, uint64_t gen,
                         void (*fn)(uint32_t stack, int device, int family, uint64_t bytes, uint64_t count,
                                    void *arg),
                         void *arg);

size_t gmg_track_count(void);

/* What out of memory kept from reports since start-up (or fork):
 * allocations whose records could not be added (untracked: not in reports),
 * of every family, and of their bytes those counted against the quota
 * (which stay counted); the same count by family (enum gmg_family), since
 * reserved ranges and mappings are no leaks; and allocations reclaimed by
 * a context teardown that could not be listed, with their sizes
 * (released). */
struct gmg_track_lost {
    uint64_t untracked_allocs, untracked_bytes, unlisted_allocs, unlisted_bytes;
    uint64_t untracked_by_family[GMG_FAM_COUNT];
};
void gmg_track_lost(struct gmg_track_lost *out);

/* fork child: an empty table, fresh locks (see track.c for why nothing is
 * locked across fork). */
void gmg_track_atfork_child(void);

#endif
