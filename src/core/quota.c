/* quota.c - see quota.h. */
#include "core/quota.h"

#include "base/config.h"
#include "base/cpuslot.h"
#include "core/counts.h"

#include <pthread.h>
#include <string.h>

struct devq {
    uint64_t used;
    uint64_t peak;
    uint64_t refused;
    uint64_t driver_oom;   /* allocations the driver itself refused: out of memory */
    uint64_t limit;        /* resolved; valid when resolved != 0 */
    uint64_t total;        /* the device's memory, as the hooks learnt it */
    int resolved;
    uint32_t xfer;         /* odd while the credits are frozen (below) */
} __attribute__((aligned(64)));

static struct devq q[GMG_MAX_DEVICES];
static int max_dev_seen = -1;

#define GMG_QUOTA_MAX_REQUEST (1ull << 60) /* 1 EiB */
#define FAST_MAX (1ull << 40)              /* the lock-free add's bounds */
#define FAST_USED_MAX (1ull << 63)

static int valid(int dev) { return dev >= 0 && dev < GMG_MAX_DEVICES; }

/* 1 once start-up found no limit and no group (quota.h) */
static int counterless;
int gmg_quota_free_below; /* quota.h: max_dev_seen + 1 once counterless */

/* Devices below `n` reserve by quota.h's inline test from now on. */
static void free_below_raise(int n)
{
    int cur = __atomic_load_n(&gmg_quota_free_below, __ATOMIC_RELAXED);
    while (n > cur && !__atomic_compare_exchange_n(&gmg_quota_free_below, &cur, n, 1, __ATOMIC_RELAXED,
                                                   __ATOMIC_RELAXED))
        ;
}

/* Built with -DGMG_QUOTA_TEST_HOOKS (tests/unit/test_quota_peak.c only): a
 * function a test sets runs at marked points, to order two threads there. */
#ifdef GMG_QUOTA_TEST_HOOKS
void (*gmg_quota_test_hook)(void);
#define TEST_HOOK() do { if (gmg_quota_test_hook) gmg_quota_test_hook(); } while (0)
#else
#define TEST_HOOK() ((void)0)
#endif

__thread struct gmg_quota_pending gmg_quota_pending_tl __attribute__((tls_model("initial-exec")));

/* A reservation took the counter to `now`: past the peak, it is pending
 * (quota.h) until the caller commits. */
static inline void note_high(struct devq *d, int dev, uint64_t now)
{
    if (__builtin_expect(now > __atomic_load_n(&d->peak, __ATOMIC_ACQUIRE), 0)) {
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

uint64_t gmg_quota_limit_known(int dev)
{
    int known;
    uint64_t mine = local_limit(dev, &known);
    const struct gmg_quota_pool *p = get_pool();
    if (p && valid(dev))
        mine = p->budget(dev, known ? mine : GMG_QUOTA_UNKNOWN);
    return !known && mine <= 1 ? 0 : mine;
}

static void note_dev(int dev)
{
    int cur = __atomic_load_n(&max_dev_seen, __ATOMIC_RELAXED);
    while (dev > cur && !__atomic_compare_exchange_n(&max_dev_seen, &cur, dev, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}

static void raise_to(uint64_t *peak, uint64_t now, int order)
{
    uint64_t p = __atomic_load_n(peak, __ATOMIC_RELAXED);
    while (now > p && !__atomic_compare_exchange_n(peak, &p, now, 1, order, __ATOMIC_RELAXED))
        ;
}

/* The peak, raised with release (its readers acquire): a thread that
 * finds its high below the peak, and so leaves nothing pending, finds the
 * peak at that height already, never a peak lower than the bytes it just
 * saw in use (tests/unit/test_quota.c). */
static void raise_peak(struct devq *d, uint64_t now) { raise_to(&d->peak, now, __ATOMIC_RELEASE); }

/*
 * Per CPU: credits, per device, in the slot of the CPU the thread runs on
 * (below). The counts of allocations and frees are the thread's own
 * (core/counts.h).
 *
 * Credits: a free does not give its bytes back to the device's counter at
 * once. They stay in it as credit, in a slot of the CPU the freeing thread
 * runs on (below), and the next reservation on that CPU spends them without
 * writing the counter: threads that allocate and free in turn (a training
 * step, a pool) write lines of their own CPU's only, where the counter's
 * line, moved between cores by every pair, cost more than the rest of the
 * guard with 2 threads (docs/benchmarks.md, eleventh pass). So the counter
 * holds the bytes in use plus every credit: never less than in use, and
 * never more than the limit, since spending a credit changes neither. Each
 * change of a credit word is one atomic operation that also bumps the
 * word's version: the bytes in use are the counter less every credit, and
 * a reading of them (snapshot) is one moment's when the credit words summed
 * before and after the counter was read are the same.
 *
 * Moving credit back into the counter (drain, and a slot's credit past
 * CREDIT_MAX) takes two steps, the credit emptied and then the counter
 * lowered. Moves are rare (a reservation the counter would refuse; 64 MiB
 * of frees) and happen under `credit_mu` with the device's credits frozen
 * (`xfer` odd): threads then leave the credit alone and use the counter,
 * and readings retry. So:
 *   - used and new peaks are decided on a one-moment reading, without a
 *     lock (after 4 tries, under it, frozen);
 *   - a reservation the counter would refuse drains every credit, frozen,
 *     and decides under the lock: it is refused on the bytes in use, never
 *     on credit another thread is moving.
 *
 * No credit is kept under a group's budget (its pool counts across
 * processes) or under GPUMEM_ON_LIMIT=warn (the warning is decided on the
 * counter).
 */
#define CREDIT_MAX (64ull << 20)

/* Serialises every move of credit into the counter and every reading of
 * the credits whole (below). */
static pthread_mutex_t credit_mu = PTHREAD_MUTEX_INITIALIZER;

/* Whether frees may leave their bytes as credit now. */
static int credits_kept(void) { return gmg_cfg.on_limit != GMG_ON_LIMIT_WARN && get_pool() == NULL; }

/* Within an eighth of dev's limit, a free gives its bytes straight back:
 * credit kept there would make the next reservations drain (a lock) where
 * one thread frees what another allocates. */
static inline int near_limit(int dev)
{
    if (!gmg_cfg.has_limit)
        return 0;
    const struct devq *d = &q[dev];
    if (!__atomic_load_n(&d->resolved, __ATOMIC_ACQUIRE))
        return 1;
    uint64_t limit = __atomic_load_n(&d->limit, __ATOMIC_RELAXED);
    return __atomic_load_n(&d->used, __ATOMIC_RELAXED) > limit - limit / 8;
}

/* Credit slots, one per CPU (base/cpuslot.h): the credit in them, and so
 * the counter's excess over the bytes in use, is bounded by the CPUs, not
 * by the threads, and a reading walks as many slots as there are CPUs. Any
 * thread may use any slot (every change is one atomic operation). */
struct cdev {
    uint64_t credit;        /* a credit word (below) */
};
struct cslot {
    struct cdev d[GMG_MAX_DEVICES];
} __attribute__((aligned(64)));
static struct cslot slots[GMG_CPU_SLOTS_MAX];
#define nslots gmg_cpu_slots

static inline struct cslot *home_slot(void) { return &slots[gmg_cpu_slot()]; }

static inline uint64_t *home_credit(int dev) { return &home_slot()->d[dev].credit; }

/* A credit word: the bytes in its low 40 bits (each thread adding to a slot
 * at once adds at most CREDIT_MAX before one flushes it: thousands of
 * threads short of 2^40), and above them a version every change bumps, so
 * that a reader who sums the words twice knows whether any changed in
 * between (snapshot). */
#define CR_MASK ((1ull << 40) - 1)
#define CR_VER (1ull << 40)

/* While the device's xfer is odd, credit is being moved or read whole
 * under the lock: threads leave the credit alone and use the counter. */
static inline int frozen(const struct devq *d) { return __atomic_load_n(&d->xfer, __ATOMIC_ACQUIRE) & 1; }

/* Spend `bytes` of one credit word: 1 if it held that much. */
static inline int word_take(uint64_t *cw, uint64_t bytes)
{
    uint64_t w = __atomic_load_n(cw, __ATOMIC_RELAXED);
    while ((w & CR_MASK) >= bytes)
        if (__atomic_compare_exchange_n(cw, &w, w - bytes + CR_VER, 1, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
            return 1;
    return 0;
}

/* Spend `bytes` of the home slot's credit on dev: 1 if it held that much. */
static inline int credit_take(int dev, uint64_t bytes)
{
    return !frozen(&q[dev]) && word_take(home_credit(dev), bytes);
}

/* The same from any slot: for a reservation that would otherwise take the
 * counter past the peak, where threads free on one CPU and allocate on
 * another (more threads than CPUs): the counter then stays where it was,
 * and no reading of the bytes in use is needed. */
static __attribute__((noinline)) int credit_take_any(int dev, uint64_t bytes)
{
    for (unsigned i = 0; i < nslots && !frozen(&q[dev]); i++)
        if (i != gmg_cpu_slot_last() && word_take(&slots[i].d[dev].credit, bytes))
            return 1;
    return 0;
}

/* Under credit_mu, xfer odd: a credit word's bytes, taken. */
static uint64_t credit_empty(uint64_t *cw)
{
    uint64_t w = __atomic_load_n(cw, __ATOMIC_RELAXED);
    while ((w & CR_MASK) && !__atomic_compare_exchange_n(cw, &w, (w & ~CR_MASK) + CR_VER, 1, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
        ;
    return w & CR_MASK;
}

/* Every credit word of dev summed (versions and all: any change moves the
 * sum, short of 2^23 changes while it is read), and *cr their bytes. */
static uint64_t collect(int dev, uint64_t *cr)
{
    uint64_t h = 0, n = 0;
    for (unsigned i = 0; i < nslots; i++) {
        uint64_t w = __atomic_load_n(&slots[i].d[dev].credit, __ATOMIC_ACQUIRE);
        h += w;
        n += w & CR_MASK;
    }
    *cr = n;
    return h;
}

/* Around a move of credit into the counter, or a reading of it whole,
 * under credit_mu: the device's xfer is odd in between. */
static void xfer_begin(struct devq *d) { __atomic_add_fetch(&d->xfer, 1, __ATOMIC_ACQ_REL); }
static void xfer_end(struct devq *d) { __atomic_add_fetch(&d->xfer, 1, __ATOMIC_ACQ_REL); }

/* The bytes in use on dev at one moment: the counter less every credit.
 * The credit words read twice, the counter between: if no word changed
 * (and no move ran), at the moment the counter was read every word was as
 * read. After a few tries, under the lock with the credits frozen, where
 * only threads that looked before the freeze can still change a word. */
static uint64_t snapshot(int dev)
{
    struct devq *d = &q[dev];
    uint64_t used, cr, cr0;
    for (int tries = 0; tries < 4; tries++) {
        uint32_t x0 = __atomic_load_n(&d->xfer, __ATOMIC_ACQUIRE);
        if (x0 & 1)
            continue;
        uint64_t h0 = collect(dev, &cr0);
        used = __atomic_load_n(&d->used, __ATOMIC_ACQUIRE);
        uint64_t h1 = collect(dev, &cr);
        if (h0 == h1 && __atomic_load_n(&d->xfer, __ATOMIC_ACQUIRE) == x0)
            return used > cr ? used - cr : 0;
    }
    pthread_mutex_lock(&credit_mu);
    xfer_begin(d);
    for (;;) {
        uint64_t h0 = collect(dev, &cr0);
        used = __atomic_load_n(&d->used, __ATOMIC_ACQUIRE);
        if (collect(dev, &cr) == h0)
            break;
    }
    xfer_end(d);
    pthread_mutex_unlock(&credit_mu);
    return used > cr ? used - cr : 0;
}

/* Under credit_mu, xfer odd: every credit on dev moved into the counter;
 * what it moved. */
static uint64_t drain_locked(int dev)
{
    uint64_t n = 0;
    for (unsigned i = 0; i < nslots; i++)
        n += credit_empty(&slots[i].d[dev].credit);
    if (n)
        __atomic_fetch_sub(&q[dev].used, n, __ATOMIC_ACQ_REL);
    return n;
}

/* A reservation left the counter at `now`, which holds the credits too:
 * past the peak, the bytes in use decide. */
static __attribute__((noinline)) void high_note(struct devq *d, int dev) { note_high(d, dev, snapshot(dev)); }
static inline void high_check(struct devq *d, int dev, uint64_t now)
{
    if (__builtin_expect(now > __atomic_load_n(&d->peak, __ATOMIC_ACQUIRE), 0))
        high_note(d, dev);
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
    if (credits_kept() && credit_take(dev, bytes)) { /* the counter holds them already: within any limit */
        high_check(d, dev, __atomic_load_n(&d->used, __ATOMIC_ACQUIRE));
        return 1;
    }
    int locked = 0;
    uint64_t cur = __atomic_load_n(&d->used, __ATOMIC_RELAXED), next;
    for (;;) {
        int refuse = 0;
        if (__builtin_add_overflow(cur, bytes, &next)) {
            /* no device holds this much: over any limit, and without one
             * (or under warn) it is passed on uncounted, for the driver to
             * refuse; a saturated counter could never be rolled back */
            refuse = limit && gmg_cfg.on_limit != GMG_ON_LIMIT_WARN ? 1 : 2;
        } else if (limit && next > limit) {
            if (gmg_cfg.on_limit != GMG_ON_LIMIT_WARN)
                refuse = 1;
            else if (over)
                *over = 1;
        }
        if (refuse == 1 && (!locked || drain_locked(dev))) {
            /* every credit into the counter first, the credits frozen
             * (threads use the counter meanwhile), and the decision taken
             * under the lock every move of credit takes: refused only on
             * the bytes in use, once a last look finds no credit left */
            if (!locked) {
                pthread_mutex_lock(&credit_mu);
                xfer_begin(d);
                locked = 1;
                drain_locked(dev);
            }
            cur = __atomic_load_n(&d->used, __ATOMIC_RELAXED);
            continue;
        }
        if (refuse) {
            if (locked) {
                xfer_end(d);
                pthread_mutex_unlock(&credit_mu);
            }
            return refuse == 1 ? 0 : -1;
        }
        if (__atomic_compare_exchange_n(&d->used, &cur, next, 1, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
            break;
    }
    if (locked) {
        xfer_end(d);
        pthread_mutex_unlock(&credit_mu);
    }
    high_check(d, dev, next);
    return 1;
}

/* No limit, and the home slot's credit did not cover the bytes: another
 * slot's, or one atomic add (see gmg_quota_reserve). */
static __attribute__((noinline)) int reserve_counter(int dev, uint64_t bytes)
{
    struct devq *d = &q[dev];
    uint64_t cur = __atomic_load_n(&d->used, __ATOMIC_RELAXED);
    TEST_HOOK();
    if (cur + bytes > __atomic_load_n(&d->peak, __ATOMIC_ACQUIRE) && credit_take_any(dev, bytes)) {
        /* the counter read again: another thread may have raised it,
         * and taken its reading, since cur (tests/unit/test_quota_peak.c) */
        high_check(d, dev, __atomic_load_n(&d->used, __ATOMIC_ACQUIRE));
        return 1;
    }
    high_check(d, dev, __atomic_add_fetch(&d->used, bytes, __ATOMIC_ACQ_REL));
    return 1;
}

int gmg_quota_reserve_counted(int dev, uint64_t bytes, int *over)
{
    if (over)
        *over = 0;
    gmg_quota_pending_tl.high = 0; /* only this reservation's high is pending */
    gmg_quota_pending_tl.group = 0;
    if (!valid(dev))
        return 1;
    if (__builtin_expect(dev > __atomic_load_n(&max_dev_seen, __ATOMIC_RELAXED), 0))
        note_dev(dev);
    if (__atomic_load_n(&counterless, __ATOMIC_RELAXED)) {
        free_below_raise(dev + 1); /* seen: its next reservations inline */
        return 1;
    }
    struct devq *d = &q[dev];
    if (__builtin_expect(!gmg_cfg.has_limit && !get_pool() && bytes < FAST_MAX &&
                         __atomic_load_n(&d->used, __ATOMIC_RELAXED) < FAST_USED_MAX, 1)) {
        /* No limit (counters kept: before start-up settled, or built
         * without peak tracking): nothing can refuse, so one atomic add is as exact as
         * the compare-and-swap in reserve_slow. It cannot wrap: each of the
         * threads adding at once adds less than 2^40 to less than 2^63.
         * The home slot's credit pays first: no add at all when it covers
         * the bytes (the counter holds them already). */
        if (__builtin_expect(credit_take(dev, bytes), 1)) {
            high_check(d, dev, __atomic_load_n(&d->used, __ATOMIC_ACQUIRE));
            return 1;
        }
        return reserve_counter(dev, bytes);
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

/* A credit word past CREDIT_MAX: its bytes moved into the counter. */
static __attribute__((noinline)) void credit_flush(int dev, uint64_t *cw)
{
    pthread_mutex_lock(&credit_mu);
    xfer_begin(&q[dev]);
    uint64_t cr = credit_empty(cw);
    __atomic_fetch_sub(&q[dev].used, cr, __ATOMIC_ACQ_REL);
    xfer_end(&q[dev]);
    pthread_mutex_unlock(&credit_mu);
}

/* Bytes given straight back to the counter (and the group's budget). */
static __attribute__((noinline)) void release_counter(int dev, uint64_t bytes)
{
    __atomic_fetch_sub(&q[dev].used, bytes, __ATOMIC_ACQ_REL);
    const struct gmg_quota_pool *p = get_pool();
    if (p)
        p->release(dev, bytes);
}

/* The usual release is the credit's one atomic add; everything else is
 * out of line, so that it saves no registers. */
void gmg_quota_release(int dev, uint64_t bytes)
{
    if (!valid(dev) || __atomic_load_n(&counterless, __ATOMIC_RELAXED))
        return;
    if (__builtin_expect(bytes <= CREDIT_MAX && credits_kept() && !frozen(&q[dev]) && !near_limit(dev), 1)) {
        /* kept as credit in the home slot (above), given back past CREDIT_MAX */
        uint64_t *cw = home_credit(dev);
        if (__builtin_expect((__atomic_add_fetch(cw, bytes + CR_VER, __ATOMIC_ACQ_REL) & CR_MASK) > CREDIT_MAX, 0))
            credit_flush(dev, cw);
        return;
    }
    release_counter(dev, bytes);
}

void gmg_quota_settle_counting(void)
{
#ifndef GMG_NO_PEAK
    if (!gmg_cfg.has_limit && !get_pool())
        __atomic_store_n(&counterless, 1, __ATOMIC_RELAXED);
#endif
}

int gmg_quota_counting(void) { return !__atomic_load_n(&counterless, __ATOMIC_RELAXED); }

uint64_t gmg_quota_charged(int dev)
{
    const struct gmg_quota_pool *p = get_pool();
    if (p && valid(dev))
        return p->used(dev);
    return gmg_quota_used(dev);
}

int gmg_quota_devices_with_group(void)
{
    const struct gmg_quota_pool *p = get_pool();
    int seen = gmg_quota_devices_seen();
    for (int d = GMG_MAX_DEVICES - 1; p && d >= seen; d--)
        if (p->used(d) || p->peak(d))
            return d + 1;
    return seen;
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

uint64_t gmg_quota_used(int dev) { return valid(dev) ? snapshot(dev) : 0; }

uint64_t gmg_quota_counter(int dev) { return valid(dev) ? __atomic_load_n(&q[dev].used, __ATOMIC_ACQUIRE) : 0; }
uint64_t gmg_quota_peak(int dev) { return valid(dev) ? __atomic_load_n(&q[dev].peak, __ATOMIC_ACQUIRE) : 0; }

uint64_t gmg_quota_refused(int dev) { return valid(dev) ? __atomic_load_n(&q[dev].refused, __ATOMIC_ACQUIRE) : 0; }
uint64_t gmg_quota_driver_oom(int dev) { return valid(dev) ? __atomic_load_n(&q[dev].driver_oom, __ATOMIC_ACQUIRE) : 0; }

static uint64_t host_driver_oom;
void gmg_quota_count_host_driver_oom(void) { __atomic_fetch_add(&host_driver_oom, 1, __ATOMIC_RELAXED); }
uint64_t gmg_quota_host_driver_oom(void) { return __atomic_load_n(&host_driver_oom, __ATOMIC_ACQUIRE); }

void gmg_quota_count_driver_oom(int dev)
{
    if (valid(dev)) {
        note_dev(dev);
        __atomic_fetch_add(&q[dev].driver_oom, 1, __ATOMIC_RELAXED);
    }
}

void gmg_quota_count_alloc(int dev)
{
    if (valid(dev)) {
        if (__builtin_expect(dev > __atomic_load_n(&max_dev_seen, __ATOMIC_RELAXED), 0))
            note_dev(dev);
        gmg_counts_alloc(dev);
    }
}

void gmg_quota_count_free(int dev) { gmg_counts_free(dev); }
uint64_t gmg_quota_allocs(int dev) { return dev == -1 || valid(dev) ? gmg_counts_allocs(dev) : 0; }
uint64_t gmg_quota_frees(int dev) { return valid(dev) ? gmg_counts_frees(dev) : 0; }

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
        q[i].driver_oom = 0;
        q[i].xfer = 0;
    }
    host_driver_oom = 0;
    /* only this thread lives on in the child: every credit and count gone */
    pthread_mutex_init(&credit_mu, NULL);
    memset(slots, 0, sizeof slots);
    gmg_counts_atfork_child();
}
