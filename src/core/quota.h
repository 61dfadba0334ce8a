/*
 * quota.h - per-device byte accounting and the GPUMEM_LIMIT reservation
 * (core layer).
 *
 * Bytes are reserved with a compare-and-swap on the device's counter before
 * the driver is called (without a limit or a group no counter is kept:
 * gmg_quota_counting), so concurrent threads can never take the process
 * past its limit, not by one byte; a failed driver call rolls back. No lock
 * on the way. A free leaves its bytes in the counter as credit in a slot
 * of its CPU's, which the next reservation there spends without writing
 * the counter (quota.c says how used, refusals and peaks stay exact): a
 * thread that allocates and frees in turn writes no shared line.
 * A lock is taken only to move credit back into the counter (before a
 * refusal, and past 64 MiB of credit in one slot) and for a reading of the
 * bytes in use that found the credits changing four times in a row.
 */
#ifndef GMG_CORE_QUOTA_H
#define GMG_CORE_QUOTA_H

#include "base/limit_parse.h"

#include <stdint.h>

/* Reserve bytes on a device. 1: reserved. 0: refused by the limit (nothing
 * reserved). -1: not reserved, not refused: the sum overflows (no device
 * holds it) and there is no limit to refuse it (or warn): the caller lets
 * the driver refuse it, uncounted. Under GPUMEM_ON_LIMIT=warn an over-limit
 * request is reserved anyway and *over is set. */
static inline int gmg_quota_reserve(int dev, uint64_t bytes, int *over); /* below */
void gmg_quota_release(int dev, uint64_t bytes);
/* Whether the devices' counters are kept: under a limit or a group only.
 * Without either nothing can be refused, and what is in use is the
 * tracked bytes (core/peak.h), so reserve and release then touch nothing
 * shared: two atomic operations fewer a pair. Decided once, at start-up,
 * before the program runs (gmg_quota_settle_counting); counters are kept
 * until then, and bytes counted then stay in them, shown nowhere. A
 * build without peak tracking (GMG_NO_PEAK) always keeps them: its figures
 * are the quota's. */
void gmg_quota_settle_counting(void);
int gmg_quota_counting(void);
/*
 * Peaks. A reservation that takes the device's counter above its peak
 * leaves the new high in the reserving thread's `pending` instead of
 * raising the peak at once: the driver may fail the call (more than the
 * device has) or grant less (a pitch), and a reservation rolled back or
 * settled lower must never raise a peak. The caller then commits (the
 * driver made it: the peak, this process's and the group's, takes it in)
 * or lowers (settled lower by `bytes`). Most reservations raise nothing,
 * and commit is then one thread-local read: no second touch of the
 * counter's line, which other threads write.
 */
struct gmg_quota_pending {
    uint64_t high;   /* the counter after this thread's reservation, above the peak then; 0: none */
    int dev;
    int group;       /* a group's reservation: its peak too */
};
extern __thread struct gmg_quota_pending gmg_quota_pending_tl __attribute__((tls_model("initial-exec")));
void gmg_quota_commit_slow(void);
static inline void gmg_quota_commit(void)
{
    if (__builtin_expect(gmg_quota_pending_tl.high != 0 || gmg_quota_pending_tl.group, 0))
        gmg_quota_commit_slow();
}
/* Devices 0 .. gmg_quota_free_below - 1 reserve with nothing to count: with
 * no counters kept, each device once seen (quota.c keeps it; 0 while
 * counters are kept). The usual reservation is then this inline test and
 * two thread-local stores, no call. */
extern int gmg_quota_free_below;
int gmg_quota_reserve_counted(int dev, uint64_t bytes, int *over);
static inline int gmg_quota_reserve(int dev, uint64_t bytes, int *over)
{
    if (__builtin_expect((unsigned)dev < (unsigned)__atomic_load_n(&gmg_quota_free_below, __ATOMIC_RELAXED), 1)) {
        if (over)
            *over = 0;
        gmg_quota_pending_tl.high = 0;
        gmg_quota_pending_tl.group = 0;
        return 1;
    }
    return gmg_quota_reserve_counted(dev, bytes, over);
}
static inline void gmg_quota_pending_lower(uint64_t bytes)
{
    struct gmg_quota_pending *p = &gmg_quota_pending_tl;
    p->high = p->high > bytes ? p->high - bytes : 0;
}

uint64_t gmg_quota_limit(int dev);   /* 0: no limit; the group's budget under GPUMEM_GROUP */
/* The same, but 0 while a percentage cannot be resolved (the device's total
 * not known yet), where gmg_quota_limit gives 1: reservations are refused
 * then, yet the limit itself is not known (the public API's answer). */
uint64_t gmg_quota_limit_known(int dev);
uint64_t gmg_quota_used(int dev);    /* the bytes in use: the counter less every credit (no lock) */
uint64_t gmg_quota_counter(int dev); /* the counter itself, credits and all (tests) */
uint64_t gmg_quota_peak(int dev);
uint64_t gmg_quota_refused(int dev);
void gmg_quota_count_refusal(int dev);
/* The driver's own CUDA_ERROR_OUT_OF_MEMORY on an allocation of dev's. */
void gmg_quota_count_driver_oom(int dev);
uint64_t gmg_quota_driver_oom(int dev);
/* The same for pinned host memory, which is no device's. */
void gmg_quota_count_host_driver_oom(void);
uint64_t gmg_quota_host_driver_oom(void);
/* Allocations and frees made on a device (core/counts.h; count_alloc also
 * notes the highest device seen). allocs(-1): on every device. */
void gmg_quota_count_alloc(int dev);
void gmg_quota_count_free(int dev);
uint64_t gmg_quota_allocs(int dev);
uint64_t gmg_quota_frees(int dev);
int gmg_quota_devices_seen(void);    /* 1 + the highest device used */

/* A percent limit needs the device's memory, which the quota never asks
 * the driver for: the hooks see wants_total and hand it in with
 * learn_total before reserving. Until then a percent limit refuses. */
int gmg_quota_wants_total(int dev);
void gmg_quota_learn_total(int dev, uint64_t total);

/* fork child: nothing of the parent's is in use. */
void gmg_quota_reset(void);

/*
 * A budget shared with other processes (GPUMEM_GROUP, SPEC §9). The group
 * lives in the cluster layer (cluster/group.c); guard.c installs its
 * functions here at start-up, so the quota never calls upward. With a pool
 * installed, GPUMEM_LIMIT is the group's budget per device: the pool
 * reserves against it across processes, and this file keeps only the
 * process's own counters (used, peak: its share of the group's bytes).
 */
#define GMG_QUOTA_UNKNOWN UINT64_MAX   /* "mine": a percent limit whose total is not known */
struct gmg_quota_pool {
    /* As gmg_quota_reserve, against the group's budget. `mine` is this
     * process's resolved GPUMEM_LIMIT for dev (0: none, or
     * GMG_QUOTA_UNKNOWN); the group's budget may differ (its first member
     * set it). `warn`: GPUMEM_ON_LIMIT=warn. */
    int (*reserve)(int dev, uint64_t bytes, uint64_t mine, int warn, int *over);
    void (*release)(int dev, uint64_t bytes);
    /* The group's budget for dev (0: none); before any member set it, `mine`. */
    uint64_t (*budget)(int dev, uint64_t mine);
    uint64_t (*used)(int dev);    /* the group's bytes, all members */
    uint64_t (*peak)(int dev);    /* the most the group held at once since it started clean */
    void (*commit)(int dev);      /* an allocation was made: the group's peak takes in its bytes */
    unsigned (*members)(void);    /* processes of the group now */
    /* Give dead members' reservations back now (before numbers are shown). */
    void (*refresh)(void);
};
void gmg_quota_set_pool(const struct gmg_quota_pool *pool);  /* NULL: none */
int gmg_quota_pooled(void);

/* Bytes counted against gmg_quota_limit(dev): the group's under
 * GPUMEM_GROUP, otherwise this process's (gmg_quota_used). */
uint64_t gmg_quota_charged(int dev);
/* The group's peak and members (0 without a group). */
uint64_t gmg_quota_group_peak(int dev);
/* gmg_quota_devices_seen, and under GPUMEM_GROUP at least 1 + the highest
 * device any member holds memory on or held the group's peak on (another
 * member's devices too): the devices a report of the group shows. */
int gmg_quota_devices_with_group(void);
unsigned gmg_quota_group_members(void);
/* Under GPUMEM_GROUP, before showing the numbers above: the shares of
 * members that died go back to the group first. */
void gmg_quota_refresh(void);

#endif
