/* intercept.c - see intercept.h. */
#define _GNU_SOURCE
#include "hooks/intercept.h"

#include "hooks/mempool.h"

#include "base/config.h"
#include "base/log.h"
#include "core/heaps.h"
#include "core/quota.h"
#include "core/ranges.h"
#include "core/stacks.h"
#include "core/upcalls.h"
#include "driver/nvml.h"
#include "driver/routes.h"
#include "hooks/devfacts.h"
#include "hooks/refusal.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

static int entered;
static unsigned ctx_generation;

/* The calling thread's last context: its device and record index, valid
 * while no context was torn down since (ctx_generation). */
struct ctx_cache {
    uintptr_t ctx;
    int dev;
    unsigned gen;
    uint32_t index;
};
static __thread struct ctx_cache tl_cc __attribute__((tls_model("initial-exec")));

void gmg_enter(enum gmg_hook_id id)
{
    if (__builtin_expect(gmg_log_level >= GMG_LOG_DEBUG, 0))
        gmg_note_direct(id);
    if (!__atomic_load_n(&entered, __ATOMIC_ACQUIRE) && !__atomic_exchange_n(&entered, 1, __ATOMIC_ACQ_REL))
        gmg_upcall_first_use();
}

/* A per-device GPUMEM_LIMIT naming a device this process does not see
 * (a typo, or CUDA_VISIBLE_DEVICES renumbering them) limits nothing there:
 * said once, at the first counted allocation, when the driver can tell how
 * many devices there are. */
static int devices_checked;

static __attribute__((noinline)) void check_limit_devices(void)
{
    if (__atomic_exchange_n(&devices_checked, 1, __ATOMIC_ACQ_REL))
        return;
    int n = 0;
    if (!REAL(cuDeviceGetCount) || REAL(cuDeviceGetCount)(&n) != CUDA_SUCCESS || n <= 0)
        return;
    for (int d = n; d < GMG_MAX_DEVICES; d++)
        if (gmg_cfg.limits.dev[d].kind != GMG_LIMIT_NONE) {
            char seen[48];
            if (n == 1)
                snprintf(seen, sizeof seen, "1 device (0)");
            else
                snprintf(seen, sizeof seen, "%d devices (0-%d)", n, n - 1);
            gmg_error("GPUMEM_LIMIT names device %d, but this process sees %s: no limit applies to it "
                      "(CUDA_VISIBLE_DEVICES numbers the devices a process sees from 0)", d, seen);
            break;
        }
}

void gmg_prepare_limit(int dev)
{
    if (!gmg_cfg.has_limit)
        return;
    if (__builtin_expect(!__atomic_load_n(&devices_checked, __ATOMIC_RELAXED), 0) && gmg_cfg.limits.per_device)
        check_limit_devices();
    if (gmg_quota_wants_total(dev))
        gmg_quota_learn_total(dev, gmg_dev_total(dev));
}

void gmg_contexts_changed(void)
{
    __atomic_fetch_add(&ctx_generation, 1, __ATOMIC_RELEASE);
}

/* The calling thread's context changed, or one was torn down since it
 * last asked: ask the driver for its device and look its index up. */
static __attribute__((noinline)) int current_device_learn(struct ctx_cache *cc, CUcontext c, unsigned gen)
{
    CUdevice d = -1;
    gmg_pfn_cuCtxGetDevice getdev = REAL(cuCtxGetDevice);
    if (!getdev || getdev(&d) != CUDA_SUCCESS)
        return -1;
    cc->ctx = (uintptr_t)c;
    cc->dev = d;
    cc->gen = gen;
    cc->index = gmg_ctx_index((uintptr_t)c, 1);
    gmg_nvml_learn(d); /* for the report at exit (driver/nvml.h) */
    return 0;
}

int gmg_current_device(uint32_t *ctx)
{
    CUcontext c = NULL;
    if (ctx)
        *ctx = 0;
    gmg_pfn_cuCtxGetCurrent get = REAL(cuCtxGetCurrent);
    if (!get || get(&c) != CUDA_SUCCESS || !c)
        return -1;
    struct ctx_cache *cc = &tl_cc;
    unsigned gen = __atomic_load_n(&ctx_generation, __ATOMIC_ACQUIRE);
    if (__builtin_expect((uintptr_t)c != cc->ctx || gen != cc->gen || !cc->index, 0) &&
        current_device_learn(cc, c, gen) < 0)
        return -1;
    if (ctx)
        *ctx = cc->index;
    return cc->dev;
}

/* The steps before the reservation: the op filled in, the stack taken. 0
 * when nothing is to be counted. */
static inline __attribute__((always_inline)) int begin_setup(struct gmg_op *op, int family, int dev, int counted)
{
    op->family = family;
    op->ctx = 0;
    if (dev < 0)
        dev = gmg_current_device(&op->ctx);
    else
        gmg_current_device(&op->ctx);
    op->dev = dev;
    op->counted = counted && dev >= 0;
    op->reserved = 0;
    op->stack = gmg_stack_capture();
    if (!op->counted)
        return 0;
    if (gmg_cfg.has_limit) /* (tested here too: most runs have none, and pay no call) */
        gmg_prepare_limit(dev);
    return 1;
}

/* What the reservation came to: `held` bytes reserved (got 1), refused for
 * `bytes` (0), or uncounted (-1). */
static inline __attribute__((always_inline)) CUresult begin_settle(struct gmg_op *op, int got, int over, uint64_t bytes,
                                                                   uint64_t held)
{
    if (got <= 0) {
        op->counted = 0;
        return got == 0 ? gmg_refuse(op, bytes) : CUDA_SUCCESS;
    }
    if (over)
        gmg_warn_over(op, held);
    op->reserved = held;
    return CUDA_SUCCESS;
}

CUresult gmg_begin(struct gmg_op *op, int family, int dev, uint64_t bytes, int counted)
{
    op->asked = bytes;
    if (!begin_setup(op, family, dev, counted))
        return CUDA_SUCCESS;
    if (__builtin_expect(__atomic_load_n(&gmg_mempool_hint, __ATOMIC_RELAXED), 0) && gmg_mempool_trim)
        gmg_mempool_trim(op->dev, bytes); /* what pools retain stays within the limit (poolstats.c) */
    int over = 0;
    int got = gmg_quota_reserve(op->dev, bytes, &over);
    return begin_settle(op, got, over, bytes, bytes);
}

/* Apart from gmg_begin, which every allocation takes: a pitch's estimate
 * and its least are no cost of the others. */
CUresult gmg_begin_least(struct gmg_op *op, int family, int dev, uint64_t bytes, uint64_t least, int counted)
{
    /* what the call asked for, its rows at the usual pitch (the driver
     * picks the pitch; width x height would name less than it needed) */
    op->asked = bytes;
    if (!begin_setup(op, family, dev, counted))
        return CUDA_SUCCESS;
    dev = op->dev;
    if (__builtin_expect(__atomic_load_n(&gmg_mempool_hint, __ATOMIC_RELAXED), 0) && gmg_mempool_trim)
        gmg_mempool_trim(dev, least);
    int over = 0;
    int got = gmg_quota_reserve(dev, bytes, &over);
    uint64_t held = bytes;
    if (least < bytes && got == 0) {
        /* the estimate does not fit, what the driver may grant does: the
         * caller settles on the grant (gmg_adjust), refused only if that
         * does not fit either */
        if (gmg_quota_reserve(dev, least, &over) == 1) {
            got = 1;
            held = least;
        }
    } else if (least < bytes && got == 1 && over) {
        /* GPUMEM_ON_LIMIT=warn: over the limit only if the grant is */
        gmg_quota_release(dev, bytes);
        over = 0;
        got = gmg_quota_reserve(dev, least, &over);
        held = least;
    }
    return begin_settle(op, got, over, bytes, held);
}

int gmg_adjust(struct gmg_op *op, uint64_t bytes)
{
    if (!op->counted || bytes == op->reserved)
        return 1;
    if (bytes < op->reserved) {
        gmg_quota_release(op->dev, op->reserved - bytes);
        gmg_quota_pending_lower(op->reserved - bytes); /* settled lower: never a peak */
    } else {
        int over = 0;
        int got = gmg_quota_reserve(op->dev, bytes - op->reserved, &over);
        if (got == 0)
            return 0;
        if (got < 0) { /* cannot be counted: give back what was, uncounted */
            gmg_quota_release(op->dev, op->reserved);
            op->counted = 0;
            op->reserved = 0;
            return 1;
        }
        if (over)
            gmg_warn_over(op, bytes);
    }
    op->reserved = bytes;
    return 1;
}

void gmg_drop_record(const struct gmg_gone *g, void *unused)
{
    (void)unused;
    if (g->counted)
        gmg_quota_release(g->device, g->size);
}

/* The driver's own out of memory: the device's free memory read here (the
 * hooks' device facts), then counted and explained (refusal.c). */
static __attribute__((noinline, cold)) void driver_oom(struct gmg_op *op, uint64_t bytes)
{
    uint64_t freeb = 0, total;
    int known = op->dev >= 0 && gmg_dev_meminfo(op->dev, &freeb, &total) >= 0;
    gmg_driver_oom(op, bytes, known, freeb);
}

void gmg_end(struct gmg_op *op, CUresult r, enum gmg_space space, uint64_t key, uint64_t size, uint64_t requested)
{
    if (r != CUDA_SUCCESS) {
        if (op->counted)
            gmg_quota_release(op->dev, op->reserved);
        if (__builtin_expect(r == CUDA_ERROR_OUT_OF_MEMORY, 0) && requested && gmg_driver_oom_family(op->family))
            driver_oom(op, op->asked ? op->asked : requested);
        return;
    }
    if (op->counted) {
        size = op->reserved;
        gmg_quota_commit();
    }
    struct gmg_alloc t; /* the header only: insert copies no more */
    memset(&t, 0, offsetof(struct gmg_alloc, hh));
    t.value = key;
    t.space = (uint8_t)space;
    t.size = size;
    /* the ninth word: a handle's mappings, a mapping's handle, or what was
     * asked for when it is not what was granted */
    t.has_aux = space == GMG_SPACE_VMM || space == GMG_SPACE_MAP || requested != size;
    t.ctx = op->ctx;
    t.stack = op->stack;
    t.device = (int8_t)(op->dev >= -1 && op->dev <= INT8_MAX ? op->dev : -1);
    t.family = (uint8_t)op->family;
    t.counted = (uint8_t)op->counted;
    gmg_record_made(op->dev);
    struct gmg_gone stale;
    int got = gmg_track_insert(&t, space == GMG_SPACE_VMM ? 0 : requested, &stale);
    /* got < 0: untracked (no memory; track.c says so); its reservation
     * stays, so the quota still holds */
    if (got == 1 || got == GMG_INSERT_FAILED_STALE)
        gmg_drop_record(&stale, NULL);
}

void gmg_free_take(struct gmg_free *f, enum gmg_space space, uint64_t key)
{
    f->space = space;
    f->key = key;
    if (key) { /* a free of 0 is a no-op for the driver: nothing to count */
        gmg_track_free_begin(space, key, &f->fr);
    } else {
        f->fr.a = NULL;
        f->fr.racing = 0;
        f->fr.flight = -1;
        f->fr.shard = 0;
    }
}

void gmg_free_take_devptr(struct gmg_free *f, uint64_t ptr, int legacy)
{
    int dev = legacy ? gmg_current_device(NULL) : -1; /* the _v2 path asks only on a miss */
    gmg_free_take(f, legacy ? GMG_SPACE_DEVPTR_V1 : GMG_SPACE_DEVPTR, legacy ? (ptr ? gmg_key_v1(ptr, dev) : 0) : ptr);
    /* a pointer of the other ABI (allocated legacy, freed _v2 or back) */
    if (__builtin_expect(!f->fr.a && !f->fr.racing && ptr && ptr <= UINT32_MAX, 0)) {
        if (!legacy)
            dev = gmg_current_device(NULL);
        if (dev >= 0) {
            struct gmg_free g;
            gmg_free_take(&g, legacy ? GMG_SPACE_DEVPTR : GMG_SPACE_DEVPTR_V1, legacy ? ptr : gmg_key_v1(ptr, dev));
            if (g.fr.a || g.fr.racing)
                *f = g;
        }
    }
}

/* A free that raced another of one pointer freed a newer allocation at
 * that address (gmg_track_free_racing): is there nothing at the address
 * now, in the calling thread's context (*ctx)? Only the driver knows;
 * anything but its "not found" (or a range that starts elsewhere) keeps
 * the record, counted. */
static int nothing_at(const struct gmg_free *f, uint32_t *ctx)
{
    if ((f->space != GMG_SPACE_DEVPTR && f->space != GMG_SPACE_DEVPTR_V1) || !REAL(cuMemGetAddressRange_v2) ||
        gmg_current_device(ctx) < 0 || !*ctx)
        return 0;
    CUdeviceptr p = f->space == GMG_SPACE_DEVPTR ? (CUdeviceptr)f->key : (CUdeviceptr)(f->key & 0xffffffffu), base = 0;
    size_t size = 0;
    CUresult r = REAL(cuMemGetAddressRange_v2)(&base, &size, p);
    return r == CUDA_ERROR_NOT_FOUND || r == CUDA_ERROR_INVALID_VALUE || (r == CUDA_SUCCESS && base != p);
}

void gmg_free_done(struct gmg_free *f, CUresult r)
{
    struct gmg_gone g;
    int what = GMG_FREE_KEPT;
    if (f->fr.a)
        what = gmg_track_free_end(&f->fr, r == CUDA_SUCCESS, &g);
    else if (f->fr.racing && r == CUDA_SUCCESS) {
        uint32_t suspect = 0;
        int k = gmg_track_free_racing(f->space, f->key, &f->fr, &g, &suspect);
        uint32_t ctx = 0;
        if (k == GMG_RACING_CHECK)
            k = nothing_at(f, &ctx) && gmg_track_drop_dead(f->space, f->key, suspect, ctx, &g);
        what = k ? GMG_FREE_DROPPED : GMG_FREE_KEPT;
    }
    else if (!f->fr.racing && f->key) {
        gmg_record_unknown_free();
        if (gmg_space_is_range(f->space)) /* stands for an untracked range, not an allocation */
            gmg_range_unknown_free();
    }
    if (what == GMG_FREE_RECLAIMED) { /* its context's teardown freed it meanwhile */
        gmg_drop_record(&g, NULL);
        gmg_track_reclaimed_add(f->fr.a);
    } else if (what == GMG_FREE_DROPPED) {
        gmg_quota_count_free(g.device);
        gmg_drop_record(&g, NULL);
        if (__builtin_expect(gmg_heaps_live() != 0, 0) && g.space == GMG_SPACE_DEVPTR)
            gmg_heaps_segment_gone(g.value, g.seq); /* a pool's segment freed under its NVTX heap */
    }
}

uint64_t gmg_key_v1(uint64_t ptr, int dev)
{
    return (ptr & 0xffffffffull) | ((uint64_t)(dev + 1) << 32);
}
