/*
 * refusal.h - what happens when the quota says no (SPEC §3), hooks layer:
 * the refusal is counted and handed, once per call site, to the report
 * side through one narrow upcall (core/upcalls.h), which has it explained
 * off the allocating thread and returns once the message is written (a
 * bounded wait); then, per GPUMEM_ON_LIMIT, the call fails with
 * CUDA_ERROR_OUT_OF_MEMORY or (abort) the process aborts once it is reported.
 */
#ifndef GMG_HOOKS_REFUSAL_H
#define GMG_HOOKS_REFUSAL_H

#include "hooks/intercept.h"

CUresult gmg_refuse(struct gmg_op *op, uint64_t bytes);

/* The driver answered an allocation of `bytes` with CUDA_ERROR_OUT_OF_MEMORY:
 * counted, and explained as a refusal is (once per call site, by the
 * reporter thread), with the device's free memory the caller read
 * (free_known 0: it could not); the caller returns the driver's answer
 * unchanged. */
void gmg_driver_oom(struct gmg_op *op, uint64_t bytes, int free_known, uint64_t dev_free);

/* GPUMEM_ON_LIMIT=warn: the allocation went over and was allowed. */
void gmg_warn_over(struct gmg_op *op, uint64_t bytes);

/* A fork() child, whose timeline starts empty: no site marked on any of
 * its devices yet (the sites explained stay explained). */
void gmg_refusal_atfork_child(void);

#endif
