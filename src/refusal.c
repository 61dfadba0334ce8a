/* refusal.c - see refusal.h. */
#include "refusal.h"

#include "config.h"
#include "log.h"
#include "quota.h"
#include "report.h"
#include "track.h"

#include <stdlib.h>

#define SITES 4096

/* Call sites already explained: an open-addressed set of stack ids. */
static uint32_t sites[SITES];
static int site_zero_seen;

static int first_time(uint32_t stack)
{
    if (stack == 0)
        return !__atomic_exchange_n(&site_zero_seen, 1, __ATOMIC_RELAXED);
    for (uint32_t i = 0; i < SITES; i++) {
        uint32_t *slot = &sites[(stack * 2654435761u + i) % SITES];
        uint32_t cur = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
        if (cur == stack)
            return 0;
        if (cur == 0) {
            if (__atomic_compare_exchange_n(slot, &cur, stack, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
                return 1;
            if (cur == stack)
                return 0;
        }
    }
    return 0; /* set full: stay quiet rather than flood */
}

static CUresult refuse(struct gmg_op *op, uint64_t bytes)
{
    gmg_quota_count_refusal(op->dev);
    if (gmg_cfg.on_limit == GMG_ON_LIMIT_ABORT) {
        gmg_error("refused %s of %llu bytes on device %d: GPUMEM_LIMIT is %llu bytes, %llu in use; aborting "
                  "(GPUMEM_ON_LIMIT=abort)",
                  gmg_family_name(op->family), (unsigned long long)bytes, op->dev,
                  (unsigned long long)gmg_quota_limit(op->dev), (unsigned long long)gmg_quota_used(op->dev));
        gmg_report_now(GMG_TRIGGER_REFUSAL);
        abort();
    }
    if (first_time(op->stack)) {
        gmg_error("refused %s of %llu bytes on device %d: GPUMEM_LIMIT is %llu bytes, %llu in use "
                  "(returning CUDA_ERROR_OUT_OF_MEMORY; further refusals from this call site are counted, "
                  "not shown)",
                  gmg_family_name(op->family), (unsigned long long)bytes, op->dev,
                  (unsigned long long)gmg_quota_limit(op->dev), (unsigned long long)gmg_quota_used(op->dev));
        gmg_report_refusal(op->dev, op->stack, 3);
    }
    return CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult gmg_refuse(struct gmg_op *op, uint64_t bytes) { return refuse(op, bytes); }

void gmg_warn_over(struct gmg_op *op, uint64_t bytes)
{
    gmg_quota_count_refusal(op->dev);
    if (first_time(op->stack))
        gmg_info("over the limit: %s of %llu bytes on device %d takes it to %llu of %llu bytes "
                 "(allowed: GPUMEM_ON_LIMIT=warn)",
                 gmg_family_name(op->family), (unsigned long long)bytes, op->dev,
                 (unsigned long long)gmg_quota_used(op->dev), (unsigned long long)gmg_quota_limit(op->dev));
}
