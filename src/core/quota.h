/*
 * quota.h - per-device byte accounting and the GPUMEM_LIMIT reservation
 * (core layer).
 *
 * Bytes are reserved with a compare-and-swap on the device's counter before
 * the driver is called, so concurrent threads can never take the process
 * past its limit, not by one byte; a failed driver call rolls back. No lock.
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
int gmg_quota_reserve(int dev, uint64_t bytes, int *over);
void gmg_quota_release(int dev, uint64_t bytes);

uint64_t gmg_quota_limit(int dev);   /* 0: no limit */
uint64_t gmg_quota_used(int dev);
uint64_t gmg_quota_peak(int dev);
uint64_t gmg_quota_refused(int dev);
void gmg_quota_count_refusal(int dev);
/* Allocations and frees made on a device: counted per thread (no shared
 * cache line), summed when read. allocs(-1): on every device. */
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

#endif
