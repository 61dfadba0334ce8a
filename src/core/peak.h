/*
 * peak.h - each device's peak of tracked in-use bytes, and the generation
 * that lets the live totals say what was live at it (core layer).
 *
 * Every counted record that enters or leaves the table moves its device's
 * total here (gmg_peak_slot_move: one compare-and-swap on the device's
 * word, which gives the move its generation, the number of peaks set
 * before it; only a move that sets a new peak takes the device's lock).
 * The live totals (core/livetotals.c per stack, core/track.c for stack 0) keep,
 * beside each total, its value at the last peak and the generation it was
 * caught up to (memray's scheme): O(1) per allocation and free, no
 * snapshot. peak.c states why the result is exact under threads.
 */
#ifndef GMG_CORE_PEAK_H
#define GMG_CORE_PEAK_H

#include "base/bias.h"

#include <stdint.h>

/* Records of this size or more are left out of the peak's make-up (the
 * device's word keeps 48 bits of bytes). */
#define GMG_PEAK_MAX_RECORD (1ull << 44)

/* What one live total (a stack's, on one device, of one family) was at the
 * latest peak, kept as the total moves (see peak.c), under its own small
 * lock (never held while waiting for another); or, for a total whose moves
 * the caller already serialises, with a sequence count readers retry on. */
struct gmg_peak_slot {
    uint32_t lock;               /* the lock, or a serial slot's sequence count */
    uint64_t bytes, count;       /* counted live now                  */
    uint64_t pbytes, pcount;     /* at the peak of generation `gen`   */
    uint64_t gen;                /* the latest op generation applied */
};

/* A counted record of `bytes` on `dev` entered (sign > 0) or left the
 * table, and this slot's total with it. */
void gmg_peak_slot_move(struct gmg_peak_slot *s, int dev, uint64_t bytes, int sign);
/* The same for a slot whose moves never run at once (each under a lock of
 * the caller's, which readers need not take): no atomic operation but the
 * device word's. Read with gmg_peak_slot_at_serial. */
void gmg_peak_slot_move_serial(struct gmg_peak_slot *s, int dev, uint64_t bytes, int sign);
/* A record of `bytes` entered (sign > 0) or left a total whose all-records
 * figures are *total and *count: they move under the slot's lock, with the
 * slot when the record is `counted` (as gmg_peak_slot_move), alone when it
 * is not; one lock for both, no atomic operation of their own. 1: the
 * slot's lock was held by another thread, and this one waited for it. */
int gmg_peak_slot_move_with(struct gmg_peak_slot *s, int dev, uint64_t bytes, int sign, int counted,
                            uint64_t *total, uint64_t *count);
/* The same, the slot taken by the bias `b`'s owner (base/bias.h) without
 * its lock, else (the bias revoked) by its lock. One bias may stand for
 * many slots: a reader of any of them (gmg_peak_slot_at, _hold) revokes
 * it first. */
int gmg_peak_slot_move_biased(struct gmg_peak_slot *s, gmg_bias_t *b, int dev, uint64_t bytes, int sign, int counted,
                              uint64_t *total, uint64_t *count);
/* Hold a slot's lock, and let it go: the totals that move under it
 * (gmg_peak_slot_move_with) stand still meanwhile. For a reader that adds
 * several slots up at one moment: it holds them all, taking them in one
 * order, and takes no other lock meanwhile (no mover holds two). */
void gmg_peak_slot_hold(struct gmg_peak_slot *s);
void gmg_peak_slot_release(struct gmg_peak_slot *s);
/* The slot's value at the peak of generation `peak_gen` (the latest: the
 * caller holds gmg_peak_lock). */
void gmg_peak_slot_at(struct gmg_peak_slot *s, uint64_t peak_gen, uint64_t *bytes, uint64_t *count);
/* The same for a slot moved by gmg_peak_slot_move_serial. */
void gmg_peak_slot_at_serial(const struct gmg_peak_slot *s, uint64_t peak_gen, uint64_t *bytes, uint64_t *count);

/* Reading a device's peak: under its lock no new peak is set (allocations
 * that would set one wait; everything else goes on). *gen: the latest
 * peak's generation, *bytes: its tracked bytes. */
void gmg_peak_lock(int dev);
void gmg_peak_unlock(int dev);
void gmg_peak_get(int dev, uint64_t *bytes, uint64_t *gen);
/* Under the lock: the peak's bytes and generation, and a walk of the live
 * totals at it (gmg_peak_slot_at and _at_serial of each) that returns
 * their sum, or GMG_PEAK_SUM_UNKNOWN (it could not see them all: out of
 * memory). While a move is half done the sum is not the peak: the walk is
 * made again, a few microseconds apart, until it is, for at most 20 ms
 * (a mover's thread preempted just there). 1: the last walk summed to the
 * peak (or could not tell); 0: it still did not. Without a peak yet
 * (gen 0) there is no walk. */
#define GMG_PEAK_SUM_UNKNOWN UINT64_MAX
int gmg_peak_read_settled(int dev, uint64_t *bytes, uint64_t *gen, uint64_t (*walk)(uint64_t gen, void *arg),
                          void *arg);
/* Under the lock: start a new window (a dump was written): the peak is
 * what is tracked now, a generation of its own. */
void gmg_peak_restart(int dev);
/* Tracked bytes now (no lock). */
uint64_t gmg_peak_tracked(int dev);
/* The run's highest tracked bytes (no lock; a restart keeps it): the
 * device's peak as reports, metrics and the live view show it, made of
 * allocations the driver made only (the quota's counter also holds
 * reservations under way, some of which the driver then refuses). */
uint64_t gmg_peak_run(int dev);
/* The bytes in use as reports, metrics, the status page and the public
 * API show them: the allocations the driver made, as the quota counts
 * them (tracked, and those out of memory kept out of the table, which stay
 * counted), without the reservations under way that the quota's counter
 * also holds (a call for 100 GiB the driver is about to refuse). */
uint64_t gmg_peak_in_use(int dev);
/* Counted bytes of an allocation the table could not take (out of
 * memory): never freed through the guard, in use for good. */
void gmg_peak_note_untracked(int dev, uint64_t bytes);
/* When the run's peak was last raised (CLOCK_MONOTONIC milliseconds; 0:
 * never, or unknown), read apart from it: a reader that saw the peak rise
 * may see the time of a rise just after. */
uint64_t gmg_peak_run_ms(int dev);

/* fork child: nothing tracked. */
void gmg_peak_atfork_child(void);

#endif
