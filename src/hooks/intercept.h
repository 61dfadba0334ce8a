/*
 * intercept.h - the steps every wrapper takes (hooks layer), in order:
 *   enter: the first call of any wrapper tells the layers above that the
 *          process uses the driver (dump signal, exit report)
 *   begin: find the device, capture the stack, reserve the bytes (or refuse)
 *   the real driver call
 *   end:   record the allocation on success, roll the reservation back on
 *          failure
 * and for frees: take the record out of the table before the driver call
 * (so that an address the driver reuses at once is never confused), put it
 * back if the driver refuses, release its bytes once the driver has freed
 * them.
 */
#ifndef GMG_HOOKS_INTERCEPT_H
#define GMG_HOOKS_INTERCEPT_H

#include "core/track.h"
#include "driver/real.h"

struct gmg_op {
    int family;
    int dev;
    uint32_t ctx;         /* the current context's index (gmg_ctx_index) */
    uint64_t reserved;    /* bytes reserved in the quota */
    uint32_t stack;
    int counted;
    uint64_t asked;       /* bytes the call asked for (a driver's out of memory names them) */
};

/* The families whose CUDA_ERROR_OUT_OF_MEMORY is the driver's out of
 * memory, reported (refusal.h): allocations, not mappings, ranges or
 * imports. */
static inline int gmg_driver_oom_family(int family)
{
    switch (family) {
    case GMG_FAM_LINEAR: case GMG_FAM_PITCH: case GMG_FAM_MANAGED: case GMG_FAM_ASYNC: case GMG_FAM_VMM:
    case GMG_FAM_VMM_HOST: case GMG_FAM_ARRAY: case GMG_FAM_MIPMAP: case GMG_FAM_HOST: case GMG_FAM_HOST_REGISTER:
    case GMG_FAM_GRAPH:
        return 1;
    default:
        return 0;
    }
}

/* First step of every exported wrapper. */
void gmg_enter(enum gmg_hook_id id);

/* The device of the calling thread's current context, -1 if none; *ctx
 * (unless NULL) is the context's index for records, 0 if none. */
int gmg_current_device(uint32_t *ctx);

/* Contexts were torn down: per-thread device caches are stale. */
void gmg_contexts_changed(void);

/* Hand the quota the device's memory if a percent limit needs it. */
void gmg_prepare_limit(int dev);

/* dev < 0: take the current context's. counted: bytes count against the
 * quota. Returns CUDA_SUCCESS, or CUDA_ERROR_OUT_OF_MEMORY when the quota
 * refuses (the refusal is already counted and reported). */
CUresult gmg_begin(struct gmg_op *op, int family, int dev, uint64_t bytes, int counted);
/* As gmg_begin for a call whose grant the driver decides (a pitch): bytes is
 * the estimate reserved, least the least the driver can grant. When the
 * estimate does not fit the limit (or, under warn, goes over it) and least
 * does, least is reserved and the caller settles on the grant with
 * gmg_adjust; a refusal names the estimate. */
CUresult gmg_begin_least(struct gmg_op *op, int family, int dev, uint64_t bytes, uint64_t least, int counted);

/* Change the reservation once the driver has said what it granted (pitch).
 * 0 when the extra bytes are refused: the caller frees and fails. */
int gmg_adjust(struct gmg_op *op, uint64_t bytes);

/* After the driver call: on success record (space, key), else roll back. */
void gmg_end(struct gmg_op *op, CUresult r, enum gmg_space space, uint64_t key, uint64_t size, uint64_t requested);

/* Frees. take: before the driver call (marks the record as being freed);
 * done: after it (drops it, or makes it live again if the driver refused;
 * a racing free of the same key is settled, see core/track.h). */
struct gmg_free {
    struct gmg_freeing fr; /* the record this thread frees, or the racing
                              free of another (core/track.h) */
    enum gmg_space space;
    uint64_t key;
};
void gmg_free_take(struct gmg_free *f, enum gmg_space space, uint64_t key);
void gmg_free_done(struct gmg_free *f, CUresult r);

/* A device pointer, from the _v2 (legacy 0) or the legacy 32-bit ABI, whose
 * records are keyed by device too (gmg_key_v1, in the current context's
 * device); either falls back to the other ABI's record. */
void gmg_free_take_devptr(struct gmg_free *f, uint64_t ptr, int legacy);
uint64_t gmg_key_v1(uint64_t ptr, int dev);

/* Release the quota of a record gone from the table (callbacks of range
 * removal). */
void gmg_drop_record(const struct gmg_gone *g, void *unused);

#endif
