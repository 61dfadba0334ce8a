/*
 * livetotals.h - the live bytes and allocations of each call site, per
 * device and family, and their part in each device's peak (core layer).
 *
 * The allocation table moves them as records come and go (core/track.c);
 * reports, metrics and refusal messages read them, in O(call sites), with
 * no snapshot of the table. Where threads on several CPUs allocate from one
 * call site at once, its totals are split into one part per CPU, so that
 * they do not all write one line (livetotals.c).
 */
#ifndef GMG_CORE_LIVETOTALS_H
#define GMG_CORE_LIVETOTALS_H

#include <stdint.h>

/* Live totals per stack (the allocation table keeps them as records come
 * and go): `bytes` added (sign > 0) or taken away, one allocation more or
 * fewer, for (stack id, device, family), under one small lock: the call
 * site's, or its CPU's part's once split. Id 0 is not kept.
 * -1: out of memory for the totals of a new (stack, device, family),
 * nothing counted: the table then keeps no record of it either, so that its
 * removal never takes away what was never added (track.c). `counted`: the
 * allocation counts against its device's quota, and so moves its peak
 * (core/peak.h), and the stack's share of it. */
int gmg_stack_live_add(uint32_t id, int device, int family, uint64_t bytes, int sign, int counted);
/* Every (stack, device, family) with live allocations, in O(stacks). Each
 * pair of numbers is read as it was at one moment (a split call site's
 * under all its locks, the calling thread's signals held off meanwhile). */
typedef void (*gmg_live_fn)(uint32_t stack, int device, int family, uint64_t bytes, uint64_t count, void *arg);
void gmg_stack_live_each(gmg_live_fn fn, void *arg);
/* What each (stack, device, family) of `device` held at the peak of
 * generation `gen` (its latest: the caller holds gmg_peak_lock), counted
 * allocations only; O(stacks). */
void gmg_stack_peak_each(int device, uint64_t gen, gmg_live_fn fn, void *arg);

/* How many call sites' totals were split by CPU (GMG_STACK_STATS). */
unsigned long gmg_live_split(void);

/* fork child: no allocation is live. */
void gmg_live_atfork_child(void);

#endif
