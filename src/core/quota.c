/* quota.c - see quota.h. */
#include "core/quota.h"

#include "base/config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct devq {
    uint64_t used;
    uint64_t peak;
    uint64_t refused;
    uint64_t limit;        /* resolved; valid when resolved != 0 */
    uint64_t total;        /* the device's memory, as the hooks learnt it */
    int resolved;
} __attribute__((aligned(64)));

static struct devq q[GMG_MAX_DEVICES];
static int max_dev_seen = -1;

#define GMG_QUOTA_MAX_REQUEST (1ull << 60) /* 1 EiB */
#define FAST_MAX (1ull << 40)              /* the lock-free add's bounds */
#define FAST_USED_MAX (1ull << 63)

static int valid(int dev) { return dev >= 0 && dev < GMG_MAX_DEVICES; }

__thread struct gmg_quota_pending gmg_quota_pending_tl __attribute__((tls_model("initial-exec")));

/* A reservation took the counter to `now`: past the peak, it is pending
 * (quota.h) until the caller commits. */
static inline void note_high(struct devq *d, int dev, uint64_t now)
{
    if (__builtin_expect(now > __atomic_load_n(&d->peak, __ATOMIC_RELAXED), 0)) {
        gmg_quota_pending_tl.high = now;
        gmg_quota_pending_tl.dev = dev;
    }
}

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
    note_high(&q[dev], dev, __atomic_add_fetch(&q[dev].used, bytes, __ATOMIC_ACQ_REL));
    gmg_quota_pending_tl.group = 1;
    gmg_quota_pending_tl.dev = dev;
    return 1;
}

/* Everything but the usual case below: a group's budget, a limit, a
 * request or counter too large for the one atomic add. */
static __attribute__((noinline)) int reserve_slow(int dev, uint64_t bytes, int *over)
{
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
    note_high(d, dev, next);
    return 1;
}

int gmg_quota_reserve(int dev, uint64_t bytes, int *over)
{
    if (over)
        *over = 0;
    gmg_quota_pending_tl.high = 0; /* only this reservation's high is pending */
    gmg_quota_pending_tl.group = 0;
    if (!valid(dev))
        return 1;
    if (__builtin_expect(dev > __atomic_load_n(&max_dev_seen, __ATOMIC_RELAXED), 0))
        note_dev(dev);
    struct devq *d = &q[dev];
    if (__builtin_expect(!gmg_cfg.has_limit && !get_pool() && bytes < FAST_MAX &&
                         __atomic_load_n(&d->used, __ATOMIC_RELAXED) < FAST_USED_MAX, 1)) {
        /* No limit: nothing can refuse, so one atomic add is as exact as
         * the compare-and-swap in reserve_slow. It cannot wrap: each of the
         * threads adding at once adds less than 2^40 to less than 2^63. */
        note_high(d, dev, __atomic_add_fetch(&d->used, bytes, __ATOMIC_ACQ_REL));
        return 1;
    }
    return reserve_slow(dev, bytes, over);
}

/* The driver made the allocation: its pending high (the counter just
 * after its reservation, which also holds what other threads had reserved
 * then, as the peak always did) becomes the peak; a group's peak is raised
 * from the group's bytes now. */
void gmg_quota_commit_slow(void)
{
    struct gmg_quota_pending *pd = &gmg_quota_pending_tl;
    int dev = pd->dev;
    if (pd->high && valid(dev))
        raise_peak(&q[dev], pd->high);
    const struct gmg_quota_pool *p = pd->group ? get_pool() : NULL;
    if (p && p->commit && valid(dev))
        p->commit(dev);
    pd->high = 0;
    pd->group = 0;
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

/*
 * Allocations and frees made, per device: counted per thread, so that no
 * cache line is written by every allocation but the device's quota counter.
 * Each thread adds to its own block (one writer: a plain add, no atomic
 * read-modify-write); a reader sums every live thread's block and what
 * threads that exited left (`retired`), under `counts_mu`. A thread's block
 * is folded into `retired` when it exits (a TSD destructor). A thread that
 * cannot have a block counts straight into `retired`, atomically.
 */
struct tcounts {
    uint64_t allocs[GMG_MAX_DEVICES], frees[GMG_MAX_DEVICES];
    struct tcounts *next, **prev;
};

static pthread_mutex_t counts_mu = PTHREAD_MUTEX_INITIALIZER;
static struct tcounts *threads_counts;              /* under counts_mu */
static struct tcounts retired;                      /* atomic          */
static pthread_once_t counts_once = PTHREAD_ONCE_INIT;
static pthread_key_t counts_key;
static int have_counts_key;
static __thread struct tcounts *tl_counts __attribute__((tls_model("initial-exec")));

static void counts_exit(void *p)
{
    struct tcounts *c = p;
    pthread_mutex_lock(&counts_mu);
    for (int d = 0; d < GMG_MAX_DEVICES; d++) {
        __atomic_fetch_add(&retired.allocs[d], __atomic_load_n(&c->allocs[d], __ATOMIC_RELAXED), __ATOMIC_RELAXED);
        __atomic_fetch_add(&retired.frees[d], __atomic_load_n(&c->frees[d], __ATOMIC_RELAXED), __ATOMIC_RELAXED);
    }
    *c->prev = c->next;
    if (c->next)
        c->next->prev = c->prev;
    pthread_mutex_unlock(&counts_mu);
    if (tl_counts == c)
        tl_counts = NULL;
    free(c);
}

static void counts_key_make(void)
{
    have_counts_key = pthread_key_create(&counts_key, counts_exit) == 0;
}

static struct tcounts *my_counts(void)
{
    struct tcounts *c = tl_counts;
    if (__builtin_expect(c != NULL, 1))
        return c;
    pthread_once(&counts_once, counts_key_make);
    if (!have_counts_key || !(c = calloc(1, sizeof *c)))
        return NULL;
    if (pthread_setspecific(counts_key, c) != 0) {
        free(c);
        return NULL;
    }
    pthread_mutex_lock(&counts_mu);
    c->next = threads_counts;
    c->prev = &threads_counts;
    if (threads_counts)
        threads_counts->prev = &c->next;
    threads_counts = c;
    pthread_mutex_unlock(&counts_mu);
    tl_counts = c;
    return c;
}

static void count(uint64_t *mine, uint64_t *shared)
{
    if (mine)
        __atomic_store_n(mine, __atomic_load_n(mine, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
    else
        __atomic_fetch_add(shared, 1, __ATOMIC_RELAXED);
}

void gmg_quota_count_alloc(int dev)
{
    if (valid(dev)) {
        note_dev(dev);
        struct tcounts *c = my_counts();
        count(c ? &c->allocs[dev] : NULL, &retired.allocs[dev]);
    }
}

void gmg_quota_count_free(int dev)
{
    if (valid(dev)) {
        struct tcounts *c = my_counts();
        count(c ? &c->frees[dev] : NULL, &retired.frees[dev]);
    }
}

static uint64_t sum(int dev, int frees)
{
    uint64_t n = 0;
    pthread_mutex_lock(&counts_mu);
    for (int d = dev < 0 ? 0 : dev; d < (dev < 0 ? GMG_MAX_DEVICES : dev + 1); d++) {
        n += __atomic_load_n(frees ? &retired.frees[d] : &retired.allocs[d], __ATOMIC_RELAXED);
        for (struct tcounts *c = threads_counts; c; c = c->next)
            n += __atomic_load_n(frees ? &c->frees[d] : &c->allocs[d], __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&counts_mu);
    return n;
}

uint64_t gmg_quota_allocs(int dev) { return dev == -1 || valid(dev) ? sum(dev, 0) : 0; }
uint64_t gmg_quota_frees(int dev) { return valid(dev) ? sum(dev, 1) : 0; }

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
    }
    /* only this thread lives on in the child: its block, emptied, is the
     * one left (the others' are abandoned with their threads) */
    pthread_mutex_init(&counts_mu, NULL);
    memset(&retired, 0, sizeof retired);
    threads_counts = NULL;
    if (tl_counts) {
        memset(tl_counts->allocs, 0, sizeof tl_counts->allocs);
        memset(tl_counts->frees, 0, sizeof tl_counts->frees);
        tl_counts->next = NULL;
        tl_counts->prev = &threads_counts;
        threads_counts = tl_counts;
    }
}
