/* refusal.c - see refusal.h. */
#include "hooks/refusal.h"

#include "base/config.h"
#include "base/buf.h"
#include "base/log.h"
#include "core/peak.h"
#include "core/quota.h"
#include "core/upcalls.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SITES 4096
#define TOMB UINT64_MAX /* a slot once a site's, forgotten */

/* Call sites already explained: an open-addressed set of keys (site_key:
 * a stack id, or a family; for marks, that and a device); one for the
 * quota's refusals, one for the driver's out of memory, and one of each
 * for the timeline's marks: a site explained on one device is marked on
 * each other device's timeline the first time it is refused there (no
 * second message). */
struct site_set {
    uint64_t sites[SITES];
    int zero_seen;
};
static struct site_set quota_sites, driver_sites, quota_marks, driver_marks;

/* The i-th slot a key's probe visits. */
static uint64_t *probe(struct site_set *set, uint64_t key, uint32_t i)
{
    return &set->sites[((uint32_t)(key ^ key >> 29) * 2654435761u + i) % SITES];
}

/* A call site's key: its stack id; with no stack (GPUMEM_STACK_DEPTH=0, or
 * none recorded) the allocation's family, so that each kind of memory (a
 * device's, pinned host memory, a VMM handle...) is explained once, and
 * not one of them for the whole run. Bit 48 keeps it apart from stack
 * ids (32 bits) and from a mark's device (bits 32-38). */
static uint64_t site_key(const struct gmg_op *op)
{
    return op->stack ? op->stack : 1ull << 48 | (uint32_t)op->family;
}

/* A mark's key: the site on its device. */
static uint64_t on_device(const struct gmg_op *op)
{
    return (uint64_t)(uint32_t)(op->dev + 1) << 32 | site_key(op);
}

/* 1: the stack is new to the set, and now in it. A tombstone (a site
 * forgotten) is taken again by the first new stack whose probe passes it,
 * so that forgotten sites never fill the set. Two threads may put one new
 * stack in two slots when a slot turns into a tombstone between their
 * probes: both then explain it, and the report's own set of explained
 * sites (report/sites.c) writes one message. */
static int first_in(struct site_set *set, uint64_t stack)
{
    if (stack == 0)
        return !__atomic_exchange_n(&set->zero_seen, 1, __ATOMIC_RELAXED);
    for (int tries = 0; tries < 8; tries++) {
        uint64_t *tomb = NULL, *slot = NULL, cur = 0;
        for (uint32_t i = 0; i < SITES; i++) {
            slot = probe(set, stack, i);
            cur = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
            if (cur == stack)
                return 0;
            if (cur == TOMB && !tomb)
                tomb = slot;
            if (cur == 0)
                break;
        }
        if (tomb) {
            slot = tomb;
            cur = TOMB;
        } else if (cur != 0) {
            return 0; /* set full: stay quiet rather than flood */
        }
        if (__atomic_compare_exchange_n(slot, &cur, stack, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            return 1;
        if (cur == stack)
            return 0;
        /* another stack took the slot first: probe again */
    }
    return 0;
}

static int first_time(uint64_t key) { return first_in(&quota_sites, key); }

/* A site whose refusal was dropped unexplained (more at once than the
 * reporter's queue holds): not explained after all, so that its next
 * refusal is. Its slot becomes a tombstone, which probes step over and
 * first_in takes again. */
static void forget(struct site_set *set, uint64_t stack)
{
    if (stack == 0) {
        __atomic_store_n(&set->zero_seen, 0, __ATOMIC_RELAXED);
        return;
    }
    for (uint32_t i = 0; i < SITES; i++) {
        uint64_t *slot = probe(set, stack, i);
        uint64_t cur = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
        if (cur == stack) {
            __atomic_store_n(slot, TOMB, __ATOMIC_RELEASE);
            return;
        }
        if (cur == 0)
            return;
    }
}

/* What a refused call and the quota say at this moment: one event for the
 * quota's refusals and the driver's out of memory alike. */
static struct gmg_refusal event(const struct gmg_op *op, uint64_t bytes)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    /* without a limit or a group no counter is kept (quota.h): the
     * allocations held are what is in use */
    int counting = gmg_quota_counting();
    static uint64_t made;
    return (struct gmg_refusal){
        .order = __atomic_add_fetch(&made, 1, __ATOMIC_RELAXED),
        .mono_ms = (uint64_t)now.tv_sec * 1000u + (uint64_t)now.tv_nsec / 1000000u,
        .family = op->family,
        .device = op->dev,
        .bytes = bytes,
        .limit = gmg_quota_limit(op->dev),
        .in_use = counting ? gmg_quota_charged(op->dev) : gmg_peak_in_use(op->dev),
        .own = counting ? gmg_quota_used(op->dev) : gmg_peak_in_use(op->dev),
        .stack = op->stack,
    };
}

void gmg_driver_oom(struct gmg_op *op, uint64_t bytes, int free_known, uint64_t dev_free)
{
    if (gmg_family_host(op->family))
        gmg_quota_count_host_driver_oom();
    else
        gmg_quota_count_driver_oom(op->dev);
    int site = first_in(&driver_sites, site_key(op)), here = first_in(&driver_marks, on_device(op));
    if (!site && !here)
        return;
    struct gmg_refusal ev = event(op, bytes);
    ev.driver = 1;
    if (!site) {
        gmg_upcall_marked(&ev);
        return;
    }
    /* what it holds: the allocations the driver made, not the quota's
     * counter, which also holds other threads' reservations under way (a
     * thread asking for 1 GiB at the same moment, which fails too) */
    ev.own = gmg_peak_tracked(op->dev);
    ev.free_known = free_known;
    ev.dev_free = dev_free;
    if (!gmg_upcall_refused(&ev)) {
        forget(&driver_sites, site_key(op));
        forget(&driver_marks, on_device(op));
    }
}

CUresult gmg_refuse(struct gmg_op *op, uint64_t bytes)
{
    gmg_quota_count_refusal(op->dev);
    struct gmg_refusal ev = event(op, bytes);
    ev.abort = gmg_cfg.on_limit == GMG_ON_LIMIT_ABORT;
    if (ev.abort) {
        gmg_upcall_refused(&ev);
        abort();
    }
    int site = first_time(site_key(op)), here = first_in(&quota_marks, on_device(op));
    if (site && !gmg_upcall_refused(&ev)) {
        forget(&quota_sites, site_key(op));
        forget(&quota_marks, on_device(op));
    } else if (!site && here) {
        gmg_upcall_marked(&ev);
    }
    return CUDA_ERROR_OUT_OF_MEMORY;
}

void gmg_warn_over(struct gmg_op *op, uint64_t bytes)
{
    gmg_quota_count_refusal(op->dev);
    if (!first_time(site_key(op)))
        return;
    char req[GMG_SIZE_LEN], use[GMG_SIZE_LEN], lim[GMG_SIZE_LEN];
    gmg_info("over the limit: %s of %s on device %d takes it to %s of %s (allowed: GPUMEM_ON_LIMIT=warn)",
             gmg_family_name(op->family), gmg_fmt_size(req, sizeof req, bytes), op->dev,
             gmg_fmt_size(use, sizeof use, gmg_quota_charged(op->dev)),
             gmg_fmt_size(lim, sizeof lim, gmg_quota_limit(op->dev)));
}

void gmg_refusal_atfork_child(void)
{
    memset(&quota_marks, 0, sizeof quota_marks);
    memset(&driver_marks, 0, sizeof driver_marks);
}
