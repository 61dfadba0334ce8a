/*
 * track.h - the table of live allocations (core layer).
 *
 * Sharded by key so that threads allocating different pointers never take
 * the same lock; each shard is a uthash table under its own mutex, keyed by
 * the 9 bytes (value, space) of each record. Records are allocated by the
 * caller before any lock is taken and freed after. Every record entering or
 * leaving the table moves the live totals (gmg_track_live_each) with it.
 * Records of memory a context teardown reclaimed move to a separate list:
 * they no longer count, but they were never freed by the program.
 */
#ifndef GMG_CORE_TRACK_H
#define GMG_CORE_TRACK_H

#include "core/record.h"

#include <stddef.h>

/* Insert a filled record. If the key was live already (the driver reused
 * an address whose free we never saw), the stale record is returned for the
 * caller to release; otherwise NULL. A stale record that is being freed is
 * detached instead and left to its freeing thread. */
struct gmg_alloc *gmg_track_insert(struct gmg_alloc *a);

/* Remove and return the record for a key, or NULL. */
struct gmg_alloc *gmg_track_remove(enum gmg_space space, uint64_t value);

/*
 * Frees, in three steps around the driver call, so that two threads freeing
 * one pointer at once leave neither a phantom record nor a double release:
 *   free_begin   marks the record as being freed by the caller (it stays in
 *                the table) and returns it; NULL if not live, and then
 *                *racing_seq is the sequence number of the record another
 *                thread is freeing (0 if none)
 *   free_end     by the thread that began: returns the record to drop (the
 *                driver freed it, or a racing free did), or NULL when it is
 *                live again (the driver refused and nobody else freed it).
 *                *reclaimed is set when the record is to go to the reclaimed
 *                list instead (its context was torn down meanwhile); the
 *                caller releases its quota and hands it to track_reclaimed_add
 *   free_racing  by a racing thread whose driver call succeeded: returns the
 *                record of that sequence number to drop, or NULL (a newer
 *                record at the same key is never touched)
 * A VMM handle whose free succeeds while it is still mapped stays, released.
 */
struct gmg_alloc *gmg_track_free_begin(enum gmg_space space, uint64_t value, uint64_t *racing_seq);
struct gmg_alloc *gmg_track_free_end(struct gmg_alloc *a, int freed, int *reclaimed);
struct gmg_alloc *gmg_track_free_racing(enum gmg_space space, uint64_t value, uint64_t seq);
void gmg_track_reclaimed_add(struct gmg_alloc *a);

/* VMM handles (GMG_SPACE_VMM): a mapping made or removed; a handle released
 * by the program. A released handle stays live until its last mapping goes;
 * each returns the handle's record once the caller must drop it, else NULL.
 * vmm_mapped returns nothing to drop; vmm_is_mapped is a hint, unlocked. */
void gmg_track_vmm_mapped(uint64_t handle);
int gmg_track_vmm_is_mapped(uint64_t handle);
struct gmg_alloc *gmg_track_vmm_unmapped(uint64_t handle);
struct gmg_alloc *gmg_track_vmm_released(uint64_t handle);

/* Copy of the record for a key, without removing it; 0 if not live. */
int gmg_track_lookup(enum gmg_space space, uint64_t value, struct gmg_alloc *out);

/* Remove every record with `space` whose value lies in [lo, lo + len). The
 * callback gets each removed record and owns it. Returns how many. */
size_t gmg_track_remove_range(enum gmg_space space, uint64_t lo, uint64_t len,
                              void (*fn)(struct gmg_alloc *, void *), void *arg);

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
void gmg_track_reclaimed_walk(gmg_walk_fn fn, void *arg);

/* Live totals per (stack, device, family), in O(stacks): the depot's per
 * stack, and stack 0's (stacks off) kept per shard. Only pairs with live
 * allocations are passed; each is read as it is at that moment. */
void gmg_track_live_each(void (*fn)(uint32_t stack, int device, int family, uint64_t bytes, uint64_t count,
                                    void *arg),
                         void *arg);

size_t gmg_track_count(void);

/* fork child: an empty table, fresh locks (see track.c for why nothing is
 * locked across fork). */
void gmg_track_atfork_child(void);

#endif
