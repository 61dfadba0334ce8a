/* quota.c - see quota.h. */
#include "core/quota.h"

#include "base/config.h"

struct devq {
    uint64_t used;
    uint64_t peak;
    uint64_t refused;
    uint64_t allocs, frees;  /* allocations and frees made (metrics)  */
    uint64_t limit;        /* resolved; valid when resolved != 0 */
    uint64_t total;        /* the device's memory, as the hooks learnt it */
    int resolved;
} __attribute__((aligned(64)));

static struct devq q[GMG_MAX_DEVICES];
static int max_dev_seen = -1;

#define GMG_QUOTA_MAX_REQUEST (1ull << 60) /* 1 EiB */

static int valid(int dev) { return dev >= 0 && dev < GMG_MAX_DEVICES; }

int gmg_quota_wants_total(int dev)
{
    if (!valid(dev) || !gmg_cfg.has_limit || __atomic_load_n(&q[dev].total, __ATOMIC_ACQUIRE))
        return 0;
    return gmg_cfg.limits.dev[gmg_cfg.limits.per_device ? dev : 0].kind == GMG_LIMIT_PERCENT;
}

void gmg_quota_learn_total(int dev, uint64_t total)
{
    if (valid(dev) && total)
        __atomic_store_n(&q[dev].total, total, __ATOMIC_RELEASE);
}

static const struct gmg_quota_pool *pool;

void gmg_quota_set_pool(const struct gmg_quota_pool *p)
{
    __atomic_store_n(&pool, p, __ATOMIC_RELEASE);
}

static const struct gmg_quota_pool *get_pool(void)
{
    return __atomic_load_n(&pool, __ATOMIC_ACQUIRE);
}

int gmg_quota_pooled(void) { return get_pool() != NULL; }

/* This process's GPUMEM_LIMIT for dev; *known = 0 for a percent limit whose
 * device total is not known yet (then 1: refuse rather than run unlimited). */
static uint64_t local_limit(int dev, int *known)
{
    *known = 1;
    if (!valid(dev) || !gmg_cfg.has_limit)
        return 0;
    if (__atomic_load_n(&q[dev].resolved, __ATOMIC_ACQUIRE))
        return __atomic_load_n(&q[dev].limit, __ATOMIC_RELAXED);
    const struct gmg_limit *l = &gmg_cfg.limits.dev[gmg_cfg.limits.per_device ? dev : 0];
    uint64_t v = 0;
    if (l->kind == GMG_LIMIT_PERCENT) {
        uint64_t total = __atomic_load_n(&q[dev].total, __ATOMIC_ACQUIRE);
        if (!total) {
            *known = 0;
            return 1; /* unknown total: refuse rather than run unlimited; not cached */
        }
        v = gmg_limit_resolve(l, total);
    } else {
        v = gmg_limit_resolve(l, 0);
    }
    /* threads may resolve at once: each stores the same value */
    __atomic_store_n(&q[dev].limit, v, __ATOMIC_RELAXED);
    __atomic_store_n(&q[dev].resolved, 1, __ATOMIC_RELEASE);
    return v;
}

uint64_t gmg_quota_limit(int dev)
{
    int known;
    uint64_t mine = local_limit(dev, &known);
    const struct gmg_quota_pool *p = get_pool();
    if (p && valid(dev))
        return p->budget(dev, known ? mine : GMG_QUOTA_UNKNOWN);
    return mine;
}

static void note_dev(int dev)
{
    int cur = __atomic_load_n(&max_dev_seen, __ATOMIC_RELAXED);
    while (dev > cur && !__atomic_compare_exchange_n(&max_dev_seen, &cur, dev, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}

static void raise_peak(struct devq *d, uint64_t now)
{
    uint64_t p = __atomic_load_n(&d->peak, __ATOMIC_RELAXED);
    while (now > p && !__atomic_compare_exchange_n(&d->peak, &p, now, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}

/* Under GPUMEM_GROUP: the group reserves against its budget, across
 * processes; this process's counters follow. */
static int pooled_reserve(const struct gmg_quota_pool *p, int dev, uint64_t bytes, int *over)
{
    int known, warn = gmg_cfg.on_limit == GMG_ON_LIMIT_WARN;
    uint64_t mine = local_limit(dev, &known);
    if (!known)
        mine = GMG_QUOTA_UNKNOWN;
    if (bytes > GMG_QUOTA_MAX_REQUEST) /* no device has it: never reserved, never a peak */
        return p->budget(dev, mine) && !warn ? 0 : -1;
    int got = p->reserve(dev, bytes, mine, warn, over);
    if (got <= 0)
        return got;
    raise_peak(&q[dev], __atomic_add_fetch(&q[dev].used, bytes, __ATOMIC_ACQ_REL));
    return 1;
}

int gmg_quota_reserve(int dev, uint64_t bytes, int *over)
{
    if (over)
        *over = 0;
    if (!valid(dev))
        return 1;
    note_dev(dev);
    const struct gmg_quota_pool *p = get_pool();
    if (p)
        return pooled_reserve(p, dev, bytes, over);
    struct devq *d = &q[dev];
    uint64_t limit = gmg_quota_limit(dev);
    if (bytes > GMG_QUOTA_MAX_REQUEST) /* no device has it: never reserved, never a peak */
        return limit && gmg_cfg.on_limit != GMG_ON_LIMIT_WARN ? 0 : -1;
    uint64_t cur = __atomic_load_n(&d->used, __ATOMIC_RELAXED), next;
    do {
        if (__builtin_add_overflow(cur, bytes, &next)) {
            /* no device holds this much: over any limit, and without one
             * (or under warn) it is passed on uncounted, for the driver to
             * refuse; a saturated counter could never be rolled back */
            if (limit && gmg_cfg.on_limit != GMG_ON_LIMIT_WARN)
                return 0;
            return -1;
        }
        if (limit && next > limit) {
            if (gmg_cfg.on_limit != GMG_ON_LIMIT_WARN)
                return 0;
            if (over)
                *over = 1;
        }
    } while (!__atomic_compare_exchange_n(&d->used, &cur, next, 1, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
    raise_peak(d, next);
    return 1;
}

void gmg_quota_release(int dev, uint64_t bytes)
{
    if (!valid(dev))
        return;
    __atomic_fetch_sub(&q[dev].used, bytes, __ATOMIC_ACQ_REL);
    const struct gmg_quota_pool *p = get_pool();
    if (p)
        p->release(dev, bytes);
}

uint64_t gmg_quota_charged(int dev)
{
    const struct gmg_quota_pool *p = get_pool();
    if (p && valid(dev))
        return p->used(dev);
    return gmg_quota_used(dev);
}

uint64_t gmg_quota_group_peak(int dev)
{
    const struct gmg_quota_pool *p = get_pool();
    return p && valid(dev) ? p->peak(dev) : 0;
}

void gmg_quota_refresh(void)
{
    const struct gmg_quota_pool *p = get_pool();
    if (p)
        p->refresh();
}

unsigned gmg_quota_group_members(void)
{
    const struct gmg_quota_pool *p = get_pool();
    return p ? p->members() : 0;
}

uint64_t gmg_quota_used(int dev) { return valid(dev) ? __atomic_load_n(&q[dev].used, __ATOMIC_ACQUIRE) : 0; }
uint64_t gmg_quota_peak(int dev) { return valid(dev) ? __atomic_load_n(&q[dev].peak, __ATOMIC_ACQUIRE) : 0; }
uint64_t gmg_quota_refused(int dev) { return valid(dev) ? __atomic_load_n(&q[dev].refused, __ATOMIC_ACQUIRE) : 0; }

void gmg_quota_count_alloc(int dev)
{
    if (valid(dev)) {
        note_dev(dev);
        __atomic_fetch_add(&q[dev].allocs, 1, __ATOMIC_RELAXED);
    }
}

void gmg_quota_count_free(int dev)
{
    if (valid(dev))
        __atomic_fetch_add(&q[dev].frees, 1, __ATOMIC_RELAXED);
}

uint64_t gmg_quota_allocs(int dev) { return valid(dev) ? __atomic_load_n(&q[dev].allocs, __ATOMIC_RELAXED) : 0; }
uint64_t gmg_quota_frees(int dev) { return valid(dev) ? __atomic_load_n(&q[dev].frees, __ATOMIC_RELAXED) : 0; }

void gmg_quota_count_refusal(int dev)
{
    if (valid(dev))
        __atomic_fetch_add(&q[dev].refused, 1, __ATOMIC_RELAXED);
}

int gmg_quota_devices_seen(void) { return __atomic_load_n(&max_dev_seen, __ATOMIC_RELAXED) + 1; }

void gmg_quota_reset(void)
{
    for (int i = 0; i < GMG_MAX_DEVICES; i++) {
        q[i].used = 0;
        q[i].peak = 0;
        q[i].refused = 0;
        q[i].allocs = 0;
        q[i].frees = 0;
    }
}
