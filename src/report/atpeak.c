/* atpeak.c - see atpeak.h. */
#include "report/atpeak.h"

#include "core/peak.h"
#include "core/quota.h"
#include "core/stacks.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* The biggest window's groups per device, so far (under kept_mu, which is
 * taken before a device's peak lock, never while holding one). */
static pthread_mutex_t kept_mu = PTHREAD_MUTEX_INITIALIZER;
static struct gmg_at_peak kept[GMG_MAX_DEVICES];

/* The public API's window (a test's: from gmg_at_peak_new_window, or from
 * start-up) spans the dumps' windows made in it: the biggest of those that
 * ended is kept here, as `kept` keeps the run's (under kept_mu). Its bytes,
 * and what was tracked when the window began, are also kept apart for
 * readers without a lock (gmg_at_peak_window_bytes): written under kept_mu
 * and the device's peak lock, the peak before a dump restarts the window. */
static struct gmg_at_peak api_kept[GMG_MAX_DEVICES];
static uint64_t api_peak[GMG_MAX_DEVICES], api_base[GMG_MAX_DEVICES];

/* What a window's end does to the API's: nothing (a refusal message's read,
 * the API's own), takes it in (a dump), or starts it (the API's reset). */
enum api_step { API_NONE, API_FOLD, API_START };

struct collect {
    struct gmg_group *v;
    size_t n, cap;
    int failed;
    size_t top;           /* > 0: keep only the `top` biggest (v holds `top`) */
    uint64_t sum;         /* of every group seen, kept or not */
    int device;
};

static void collect_one(uint32_t stack, int device, int family, uint64_t bytes, uint64_t count, void *arg)
{
    struct collect *c = arg;
    c->sum += bytes;
    if (c->top) { /* a message's few: kept sorted in place, no allocation */
        struct gmg_group g = { .stack = stack, .family = family, .device = device, .bytes = bytes, .count = count };
        size_t i = c->n < c->top ? c->n++ : c->top;
        if (i == c->top) {
            if (gmg_group_by_bytes(&g, &c->v[c->top - 1]) >= 0)
                return;
            i = c->top - 1;
        }
        while (i > 0 && gmg_group_by_bytes(&g, &c->v[i - 1]) < 0) {
            c->v[i] = c->v[i - 1];
            i--;
        }
        c->v[i] = g;
        return;
    }
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 16;
        struct gmg_group *v = realloc(c->v, cap * sizeof *v);
        if (!v) {
            c->failed = 1;
            return;
        }
        c->v = v;
        c->cap = cap;
    }
    c->v[c->n++] = (struct gmg_group){ .stack = stack, .family = family, .device = device, .bytes = bytes,
                                       .count = count };
}

/* One walk of the live totals at generation gen (gmg_peak_read_settled):
 * the groups afresh, and their sum. */
static uint64_t walk_at(uint64_t gen, void *arg)
{
    struct collect *c = arg;
    c->n = 0;
    c->sum = 0;
    c->failed = 0;
    gmg_track_peak_each(c->device, gen, collect_one, c);
    return c->failed ? GMG_PEAK_SUM_UNKNOWN : c->sum;
}

/* The current window's peak of dev, read under its peak lock (no new peak
 * is set meanwhile); `restart`: the next window starts at once, under the
 * same lock, and `api` says what that does to the API's window. 0 bytes:
 * nothing tracked in it. A window that will be kept, or the API's, is read
 * once no move is half done (core/peak.h; past its bound, marked
 * incomplete); a refusal message's few biggest (`top`) are read once, as
 * they are, and wait only for a reading another thread holds the lock for. */
static int window_of(int dev, int restart, enum api_step api, struct gmg_at_peak *out, struct collect *top)
{
    struct collect c = { 0 };
    if (top)
        c = *top;
    c.device = dev;
    uint64_t bytes, gen;
    int settled = 1;
    gmg_peak_lock(dev);
    if (top) {
        gmg_peak_get(dev, &bytes, &gen);
        if (gen)
            walk_at(gen, &c);
    } else {
        settled = gmg_peak_read_settled(dev, &bytes, &gen, walk_at, &c);
    }
    if (restart && api == API_FOLD && bytes > __atomic_load_n(&api_peak[dev], __ATOMIC_RELAXED))
        __atomic_store_n(&api_peak[dev], bytes, __ATOMIC_RELEASE); /* before the window's peak goes */
    if (restart)
        gmg_peak_restart(dev);
    if (restart && api == API_START) { /* the next window's peak starts at what is tracked now */
        uint64_t start, next_gen;
        gmg_peak_get(dev, &start, &next_gen);
        __atomic_store_n(&api_base[dev], start, __ATOMIC_RELEASE);
        __atomic_store_n(&api_peak[dev], 0, __ATOMIC_RELEASE);
    }
    gmg_peak_unlock(dev);
    if (c.n > 1 && !c.top)
        qsort(c.v, c.n, sizeof *c.v, gmg_group_by_bytes);
    if (top)
        *top = c;
    out->device = dev;
    out->bytes = bytes;
    out->groups = c.v;
    out->ngroups = c.n;
    out->incomplete = c.failed || !settled;
    return 0;
}

/* A copy with groups of its own; out of memory, none, marked incomplete. */
static void copy_of(const struct gmg_at_peak *from, struct gmg_at_peak *to)
{
    *to = *from;
    to->groups = NULL;
    if (from->ngroups && !(to->groups = malloc(from->ngroups * sizeof *to->groups))) {
        to->ngroups = 0;
        to->incomplete = 1;
        return;
    }
    if (from->ngroups)
        memcpy(to->groups, from->groups, from->ngroups * sizeof *to->groups);
}

/* Is window w above the kept k (or, both at 0 bytes, has it groups)? */
static int above(const struct gmg_at_peak *w, const struct gmg_at_peak *k)
{
    return w->bytes > k->bytes || (!k->bytes && w->ngroups);
}

/* A window that ended: k becomes a copy of it if it is above k. */
static void keep_if_above(struct gmg_at_peak *k, const struct gmg_at_peak *w)
{
    if (above(w, k)) {
        free(k->groups);
        copy_of(w, k);
    }
}

/* The peak of dev over the current window `w` and the kept one k (kept_mu
 * held), a copy into *out; with `keep`, w replaces k if above it. */
static void over(struct gmg_at_peak *k, struct gmg_at_peak *w, int keep, struct gmg_at_peak *out)
{
    copy_of(above(w, k) ? w : k, out);
    if (keep)
        keep_if_above(k, w);
}

int gmg_at_peak_top(int dev, struct gmg_group *top, size_t k, struct gmg_at_peak_top *out)
{
    memset(out, 0, sizeof *out);
    if (dev < 0 || dev >= GMG_MAX_DEVICES || !k)
        return -1;
    struct collect c = { .v = top, .cap = k, .top = k };
    struct gmg_at_peak w;
    window_of(dev, 0, API_NONE, &w, &c); /* O(stacks), the k biggest kept in `top`: no allocation */
    pthread_mutex_lock(&kept_mu);
    const struct gmg_at_peak *kp = &kept[dev];
    /* above(), as every report: of two equal peaks the first is the run's */
    if (!above(&w, kp)) { /* an earlier window's peak was the run's */
        out->bytes = kp->bytes;
        out->shown = kp->ngroups < k ? kp->ngroups : k;
        if (out->shown) /* none kept (and no peak yet): kp->groups may be NULL */
            memcpy(top, kp->groups, out->shown * sizeof *top);
    } else {
        out->bytes = w.bytes;
        out->shown = c.n;
    }
    pthread_mutex_unlock(&kept_mu);
    return out->bytes || out->shown ? 0 : -1;
}


/* Does any of the n peaks list a group without a stack? */
static int stackless(const struct gmg_at_peak *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < v[i].ngroups; k++)
            if (!v[i].groups[k].stack)
                return 1;
    return 0;
}

void gmg_at_peak_build(struct gmg_report *r, int window)
{
    int n = r->ndev;
    r->at_peak = n ? calloc((size_t)n, sizeof *r->at_peak) : NULL;
    r->since_peak = window && n ? calloc((size_t)n, sizeof *r->since_peak) : NULL;
    r->has_since_peak = window;
    if (n && (!r->at_peak || (window && !r->since_peak))) {
        free(r->at_peak);
        free(r->since_peak);
        r->at_peak = r->since_peak = NULL;
        r->has_since_peak = 0;
        r->incomplete |= GMG_INCOMPLETE_GROUPS;
        return;
    }
    pthread_mutex_lock(&kept_mu); /* one window at a time: dumps on two threads keep each its own */
    for (int d = 0; d < n; d++) {
        struct gmg_at_peak w;
        window_of(d, window, API_FOLD, &w, NULL);
        struct gmg_at_peak *run = &r->at_peak[r->nat_peak];
        over(&kept[d], &w, window, run);
        if (window) /* the dump's window ended inside the API's */
            keep_if_above(&api_kept[d], &w);
        if (run->bytes || run->ngroups)
            r->nat_peak++;
        else
            free(run->groups);
        if (window && (w.bytes || w.ngroups))
            r->since_peak[r->nsince_peak++] = w;
        else
            free(w.groups);
    }
    pthread_mutex_unlock(&kept_mu);
    for (size_t i = 0; i < r->nat_peak; i++)
        if (r->at_peak[i].incomplete)
            r->incomplete |= GMG_INCOMPLETE_GROUPS;
    /* a group without a stack while stacks are kept: its stack was not
     * (the guard out of memory at that allocation, freed since, so that
     * the live list no longer shows it): the report says so */
    if (gmg_stack_depth && (stackless(r->at_peak, r->nat_peak) || stackless(r->since_peak, r->nsince_peak)))
        r->incomplete |= GMG_INCOMPLETE_STACKS;
}

void gmg_at_peak_new_window(int ndev)
{
    pthread_mutex_lock(&kept_mu);
    for (int d = 0; d < ndev && d < GMG_MAX_DEVICES; d++) {
        struct gmg_at_peak w;
        window_of(d, 1, API_START, &w, NULL);
        keep_if_above(&kept[d], &w); /* the window just ended may be the run's peak */
        free(w.groups);
        free(api_kept[d].groups);
        memset(&api_kept[d], 0, sizeof api_kept[d]);
    }
    pthread_mutex_unlock(&kept_mu);
}

int gmg_at_peak_window(int dev, struct gmg_at_peak *out)
{
    memset(out, 0, sizeof *out);
    if (dev < 0 || dev >= GMG_MAX_DEVICES)
        return -1;
    struct gmg_at_peak w;
    pthread_mutex_lock(&kept_mu); /* no dump ends a window meanwhile */
    window_of(dev, 0, API_NONE, &w, NULL);
    over(&api_kept[dev], &w, 0, out);
    pthread_mutex_unlock(&kept_mu);
    free(w.groups);
    out->device = dev;
    return 0;
}

void gmg_at_peak_window_bytes(int dev, uint64_t *peak, uint64_t *base)
{
    *peak = *base = 0;
    if (dev < 0 || dev >= GMG_MAX_DEVICES)
        return;
    /* no lock (a signal handler, a child made without fork handlers may
     * ask): the current window's peak first, then the kept one, which a
     * dump raised before it restarted the window (0 while it restarts) */
    uint64_t now, gen;
    gmg_peak_get(dev, &now, &gen);
    uint64_t kept_peak = __atomic_load_n(&api_peak[dev], __ATOMIC_ACQUIRE);
    *peak = now > kept_peak ? now : kept_peak;
    /* and never below what is tracked now, which the window's peak always
     * reaches: a reading made while a reset restarts the window (both 0
     * for a moment) is no lower than the truth */
#ifndef GMG_NO_PEAK /* (without peak tracking, "tracked" is the quota's counter) */
    uint64_t tracked = gmg_peak_tracked(dev);
    *peak = tracked > *peak ? tracked : *peak;
#endif
    *base = __atomic_load_n(&api_base[dev], __ATOMIC_ACQUIRE);
}

void gmg_at_peak_free(struct gmg_report *r)
{
    for (size_t i = 0; i < r->nat_peak; i++)
        free(r->at_peak[i].groups);
    for (size_t i = 0; i < r->nsince_peak; i++)
        free(r->since_peak[i].groups);
    free(r->at_peak);
    free(r->since_peak);
    r->at_peak = r->since_peak = NULL;
    r->nat_peak = r->nsince_peak = 0;
}

void gmg_at_peak_atfork_child(void)
{
    pthread_mutex_init(&kept_mu, NULL);
    memset(kept, 0, sizeof kept); /* the parent's lists: left, not freed (the child never touches them) */
    memset(api_kept, 0, sizeof api_kept);
    memset(api_peak, 0, sizeof api_peak);
    memset(api_base, 0, sizeof api_base);
}
