/*
 * refusal.h - what happens when the quota says no (SPEC §3): the refusal is
 * counted, explained once per call site (requested bytes, limit, in use,
 * device, the top live stacks), and then, per GPUMEM_ON_LIMIT, the call
 * fails with CUDA_ERROR_OUT_OF_MEMORY or the process aborts with a report.
 */
#ifndef GMG_REFUSAL_H
#define GMG_REFUSAL_H

#include "intercept.h"

CUresult gmg_refuse(struct gmg_op *op, uint64_t bytes);

/* GPUMEM_ON_LIMIT=warn: the allocation went over and was allowed. */
void gmg_warn_over(struct gmg_op *op, uint64_t bytes);

#endif
