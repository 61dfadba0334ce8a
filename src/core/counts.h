/*
 * counts.h - how many allocations were made and freed, per device (core
 * layer): the totals of reports and metrics.
 *
 * Each thread counts in a block of its own with plain stores (no atomic
 * read-modify-write on the allocation path); a reader sums the blocks,
 * without a lock. A block outlives its thread: the next thread to start
 * takes it over, counts and all, so nothing counted is lost.
 */
#ifndef GMG_CORE_COUNTS_H
#define GMG_CORE_COUNTS_H

#include <stdint.h>

/* dev in [0, GMG_MAX_DEVICES); anything else is not counted here */
void gmg_counts_alloc(int dev);
void gmg_counts_free(int dev);
/* dev -1: every device */
uint64_t gmg_counts_allocs(int dev);
uint64_t gmg_counts_frees(int dev);

/* fork child: nothing counted; the blocks of the threads that are not in
 * the child are free for its new threads. */
void gmg_counts_atfork_child(void);

#endif
