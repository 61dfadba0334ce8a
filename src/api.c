/*
 * api.c - the public API for test harnesses (include/gpumemguard.h): a
 * window over the peak that a test resets, marks in the sequence of
 * allocations and what was made since one and is still live (bytes,
 * count, and the groups by call site as the text report writes them), and the
 * GPUMEM_LIMIT size parser. Nothing here runs on the allocation path: a
 * mark reads each shard's number, the window's reset restarts the peak's;
 * the walks and the symbolization run on the calling thread, as a
 * gpumemguard_dump() does.
 */
#define _GNU_SOURCE
#include "../include/gpumemguard.h"
#include "base/buf.h"
#include "base/config.h"
#include "base/export.h"
#include "base/limit_parse.h"
#include "core/quota.h"
#include "core/track.h"
#include "driver/routes.h"
#include "report/atpeak.h"
#include "report/report.h"
#include "report/sites.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A copy of the library loaded after another stays out of its way
 * (guard.c): its API answers with the first copy's `name`, found first in
 * the global scope. NULL when this copy is the first (or the only one). */
static void copy_marker(void) {}

static void *first_copy(const char *name)
{
    void *p = gmg_real_dlsym(RTLD_DEFAULT, name);
    Dl_info mine, theirs;
    if (!p || !dladdr((void *)copy_marker, &mine) || !dladdr(p, &theirs) || mine.dli_fbase == theirs.dli_fbase)
        return NULL;
    return p;
}

#define FIRST_COPY(fn, ...)                                                   \
    do {                                                                      \
        __typeof__(&fn) first_ = (__typeof__(&fn))first_copy(#fn);            \
        if (first_)                                                           \
            return first_(__VA_ARGS__);                                       \
    } while (0)

/* ------------------------------------------------------------ peak window */

GMG_EXPORT void gpumemguard_peak_reset(void)
{
    void (*first)(void) = (void (*)(void))first_copy("gpumemguard_peak_reset");
    if (first) {
        first();
        return;
    }
    /* a device not used yet has a window at 0 already */
    gmg_at_peak_new_window(gmg_quota_devices_seen());
}

/* The window's peak: of allocations the driver made (core/peak.h), the
 * numbers of gpumemguard_peak_text's groups. */
static uint64_t window_peak(int d)
{
    uint64_t peak, base;
    gmg_at_peak_window_bytes(d, &peak, &base);
    return peak;
}

GMG_EXPORT unsigned long long gpumemguard_peak(int device)
{
    FIRST_COPY(gpumemguard_peak, device);
    if (device >= 0)
        return window_peak(device);
    uint64_t most = 0;
    for (int d = 0; d < gmg_quota_devices_seen(); d++) {
        uint64_t p = window_peak(d);
        most = p > most ? p : most;
    }
    return most;
}

static uint64_t growth(int d)
{
    uint64_t peak, base;
    gmg_at_peak_window_bytes(d, &peak, &base);
    return peak > base ? peak - base : 0;
}

/* The device whose bytes rose most in the window (the first of equals; 0
 * when none rose). */
static int most_grown(void)
{
    int most = 0;
    for (int d = 1; d < gmg_quota_devices_seen(); d++)
        if (growth(d) > growth(most))
            most = d;
    return most;
}

GMG_EXPORT unsigned long long gpumemguard_peak_growth(int device)
{
    FIRST_COPY(gpumemguard_peak_growth, device);
    return growth(device >= 0 ? device : most_grown());
}

/* ------------------------------------------------------------ marks */

#define MARKS 64
static struct {
    int used;
    pid_t pid;              /* a fork child's shards number afresh: its parent's marks mean nothing */
    struct gmg_track_mark m;
} marks[MARKS];
static pthread_mutex_t marks_mu = PTHREAD_MUTEX_INITIALIZER;

/* A fork child: the lock afresh (another thread may have held it at the
 * fork), and none of its parent's marks (they mean nothing there, and must
 * not take the child's 64). A child made without fork handlers is told by
 * the pid each mark keeps. */
static void marks_child(void)
{
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    marks_mu = fresh;
    for (int i = 0; i < MARKS; i++)
        marks[i].used = 0;
}

__attribute__((constructor)) static void marks_init(void)
{
    pthread_atfork(NULL, NULL, marks_child);
}

/* A slot in use by this process (a parent's, in a child made without fork handlers, is free). */
static int mark_held(int i) { return marks[i].used && marks[i].pid == getpid(); }

GMG_EXPORT int gpumemguard_mark(void)
{
    FIRST_COPY(gpumemguard_mark);
    int id = -1;
    pthread_mutex_lock(&marks_mu);
    for (int i = 0; i < MARKS && id < 0; i++)
        if (!mark_held(i)) {
            marks[i].used = 1;
            marks[i].pid = getpid();
            gmg_track_mark(&marks[i].m);
            id = i + 1;
        }
    pthread_mutex_unlock(&marks_mu);
    return id;
}

GMG_EXPORT int gpumemguard_mark_release(int mark)
{
    FIRST_COPY(gpumemguard_mark_release, mark);
    int ok = -1;
    pthread_mutex_lock(&marks_mu);
    if (mark >= 1 && mark <= MARKS && mark_held(mark - 1)) {
        marks[mark - 1].used = 0;
        ok = 0;
    }
    pthread_mutex_unlock(&marks_mu);
    return ok;
}

/* A copy of a valid mark of this process; -1 for anything else. */
static int mark_get(int mark, struct gmg_track_mark *out)
{
    int ok = -1;
    pthread_mutex_lock(&marks_mu);
    if (mark >= 1 && mark <= MARKS && mark_held(mark - 1)) {
        *out = marks[mark - 1].m;
        ok = 0;
    }
    pthread_mutex_unlock(&marks_mu);
    return ok;
}

/* What a walk since a mark gathers: the totals and, for the text, one
 * entry per record (merged into groups afterwards, off the shards' locks). */
struct since {
    int device;
    uint64_t bytes, count;
    int collect;
    struct gmg_group *v;
    size_t n, cap;
    int failed;
    /* GPUMEMGUARD_SINCE_NO_POOLS: the segments NVTX heaps lie over, by
     * key value and sequence number (sorted), left out as the reports
     * retain them */
    struct seg { uint64_t value; uint32_t seq, stack; int device, family; } *segs;
    size_t nsegs, segs_cap;
};

static void seg_copy(const struct gmg_heap_info *h, void *arg)
{
    struct since *s = arg;
    if (gmg_heap_tracked(h) && s->nsegs < s->segs_cap)
        s->segs[s->nsegs++] = (struct seg){ h->seg_value, h->seg_seq, h->seg_stack, h->device, h->seg_family };
}

static int seg_cmp(const void *x, const void *y)
{
    const struct seg *a = x, *b = y;
    if (a->value != b->value)
        return a->value < b->value ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* The heaps' segments, taken before the walk (the heaps' lock is not
 * taken under a shard's). Out of memory: none (the walk says failed). */
static void segs_take(struct since *s)
{
    if (!gmg_cfg.pools || !gmg_heaps_live())
        return;
    s->segs_cap = gmg_heaps_live() + 16;
    if (!(s->segs = malloc(s->segs_cap * sizeof *s->segs))) {
        s->failed = 1;
        return;
    }
    gmg_heaps_each(seg_copy, s);
    qsort(s->segs, s->nsegs, sizeof *s->segs, seg_cmp);
}

static int is_seg(const struct since *s, const struct gmg_alloc *a)
{
    struct seg k = { .value = a->value, .seq = a->seq };
    const struct seg *f = s->nsegs && a->family != GMG_FAM_NVTX_REGION
                              ? bsearch(&k, s->segs, s->nsegs, sizeof k, seg_cmp) : NULL;
    return f && f->device == a->device && f->family == a->family;
}

static void since_fn(const struct gmg_alloc *a, int fresh, void *arg)
{
    struct since *s = arg;
    (void)fresh;
    if (!gmg_group_is_allocation(a->family) || (s->device >= 0 && a->device != s->device) || is_seg(s, a))
        return;
    s->bytes += a->size;
    s->count++;
    if (!s->collect || s->failed)
        return;
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        struct gmg_group *v = realloc(s->v, cap * sizeof *v);
        if (!v) {
            s->failed = 1;
            return;
        }
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = (struct gmg_group){ .stack = a->stack, .family = a->family, .device = a->device,
                                       .bytes = a->size, .count = 1 };
}

static int site_cmp(const void *x, const void *y)
{
    const struct seg *a = x, *b = y;
    if (a->stack != b->stack)
        return a->stack < b->stack ? -1 : 1;
    if (a->family != b->family)
        return a->family < b->family ? -1 : 1;
    return a->device < b->device ? -1 : a->device > b->device;
}

/* A record of the call site of an NVTX heap's segment (its stack, API and
 * device): a report takes the site's every allocation for that pool's.
 * s->segs sorted by site (drop_pools). */
static int seg_site(const struct since *s, const struct gmg_group *g)
{
    struct seg k = { .stack = g->stack, .family = g->family, .device = g->device };
    return g->stack && s->nsegs && bsearch(&k, s->segs, s->nsegs, sizeof k, site_cmp);
}

/* Drop the records a report would call a pool's: made under a caching
 * pool's frames (their owner says so), or at the call site of an NVTX
 * heap's segment; never an NVTX region (what a pool handed out). The walk
 * collected every record; naming their stacks happens here, outside the
 * table's locks. A walk that ran out of memory keeps its totals (pools
 * included). */
static void drop_pools(struct since *s)
{
    if (s->failed || !s->n)
        return;
    gmg_report_busy_enter();
    struct gmg_symbolizer *sym = gmg_symbolizer_get();
    if (sym && s->nsegs) { /* by call site, as the reports group: a site has several stacks (an unrolled loop) */
        uint32_t *st = malloc(s->nsegs * sizeof *st);
        for (size_t i = 0; st && i < s->nsegs; i++)
            st[i] = s->segs[i].stack;
        if (st && gmg_sites_unify(sym, &s->v, &s->n, 1, st, s->nsegs) == 0)
            for (size_t i = 0; i < s->nsegs; i++)
                s->segs[i].stack = st[i];
        free(st);
        qsort(s->segs, s->nsegs, sizeof *s->segs, site_cmp);
    }
    if (sym) {
        size_t k = 0;
        uint32_t last = 0;
        int last_pool = 0, known = 0;
        for (size_t i = 0; i < s->n; i++) {
            if (!known || s->v[i].stack != last) {
                const char *pool = NULL;
                gmg_report_stack_owner(sym, s->v[i].stack, &pool);
                last = s->v[i].stack;
                last_pool = pool != NULL;
                known = 1;
            }
            if (s->v[i].family != GMG_FAM_NVTX_REGION && (last_pool || seg_site(s, &s->v[i]))) {
                s->bytes -= s->v[i].bytes;
                s->count -= s->v[i].count;
            } else {
                s->v[k++] = s->v[i];
            }
        }
        s->n = k;
        gmg_symbolizer_put(sym);
    }
    gmg_report_busy_leave();
}

static int since_walk(int mark, int device, int flags, struct since *s)
{
    struct gmg_track_mark m;
    if ((flags & ~GPUMEMGUARD_SINCE_NO_POOLS) || device < -1 || device >= GMG_MAX_DEVICES || mark_get(mark, &m) < 0)
        return -1;
    s->device = device;
    if (flags & GPUMEMGUARD_SINCE_NO_POOLS) {
        s->collect = 1;
        segs_take(s);
    }
    gmg_track_walk_since(&m, since_fn, s);
    if (flags & GPUMEMGUARD_SINCE_NO_POOLS)
        drop_pools(s);
    free(s->segs);
    s->segs = NULL;
    s->nsegs = 0;
    return 0;
}

GMG_EXPORT int gpumemguard_since(int mark, int device, int flags, unsigned long long *bytes,
                                 unsigned long long *count)
{
    FIRST_COPY(gpumemguard_since, mark, device, flags, bytes, count);
    struct since s;
    memset(&s, 0, sizeof s);
    if (since_walk(mark, device, flags, &s) < 0) {
        free(s.v);
        return -1;
    }
    free(s.v);
    if (bytes)
        *bytes = s.bytes;
    if (count)
        *count = s.count;
    return 0;
}

/* Groups v[0..n), biggest first, as text: one per call site as the reports
 * group (merged in place), at most max_groups, then a line for the rest;
 * into buf as snprintf writes. The whole text's length, or -1 (out of
 * memory). */
static long groups_text(struct gmg_group *v, size_t n, int max_groups, int failed, char *buf, unsigned long size)
{
    struct gmg_buf b = { 0 };
    struct gmg_report r;
    memset(&r, 0, sizeof r);
    gmg_report_busy_enter();
    r.sym = n ? gmg_symbolizer_get() : NULL;
    /* one group per call site as it reads, as the reports group (sites.h) */
    if (r.sym)
        gmg_sites_merge(r.sym, v, &n);
    size_t shown = max_groups < 0 || (size_t)max_groups > n ? n : (size_t)max_groups;
    for (size_t i = 0; i < shown; i++)
        gmg_report_text_group(&r, &b, &v[i]);
    gmg_symbolizer_put(r.sym);
    gmg_report_busy_leave();
    if (shown < n) {
        uint64_t rest = 0, rest_n = 0;
        char sz[GMG_SIZE_LEN];
        for (size_t i = shown; i < n; i++) {
            rest += v[i].bytes;
            rest_n += v[i].count;
        }
        gmg_buf_printf(&b, "... and %zu more call site%s: %s in %llu allocation%s\n", n - shown,
                       n - shown == 1 ? "" : "s", gmg_fmt_size(sz, sizeof sz, rest), (unsigned long long)rest_n,
                       rest_n == 1 ? "" : "s");
    }
    if (failed)
        gmg_buf_printf(&b, "(not every allocation is in a stack above: out of memory, or read while another thread's "
                           "allocation or free stood half done)\n");
    if (b.failed) {
        gmg_buf_free(&b);
        return -1;
    }
    if (size) {
        size_t k = b.len < size - 1 ? b.len : size - 1;
        if (k)
            memcpy(buf, b.p, k);
        buf[k] = '\0';
    }
    long need = (long)b.len;
    gmg_buf_free(&b);
    return need;
}


GMG_EXPORT long gpumemguard_since_text(int mark, int device, int flags, int max_groups, char *buf,
                                       unsigned long size)
{
    FIRST_COPY(gpumemguard_since_text, mark, device, flags, max_groups, buf, size);
    struct since s;
    memset(&s, 0, sizeof s);
    s.collect = 1;
    if ((!buf && size) || since_walk(mark, device, flags, &s) < 0) {
        free(s.v);
        return -1;
    }
    size_t n = 0;
    if (s.n) {
        qsort(s.v, s.n, sizeof *s.v, gmg_group_by_key);
        for (size_t i = 1; i < s.n; i++) {
            if (gmg_group_by_key(&s.v[n], &s.v[i]) == 0) {
                s.v[n].bytes += s.v[i].bytes;
                s.v[n].count += s.v[i].count;
            } else {
                s.v[++n] = s.v[i];
            }
        }
        n++;
        qsort(s.v, n, sizeof *s.v, gmg_group_by_bytes);
    }
    long need = groups_text(s.v, n, max_groups, s.failed, buf, size);
    free(s.v);
    return need;
}

GMG_EXPORT long gpumemguard_peak_text(int device, int max_groups, char *buf, unsigned long size)
{
    FIRST_COPY(gpumemguard_peak_text, device, max_groups, buf, size);
    if ((!buf && size) || device < -1 || device >= GMG_MAX_DEVICES)
        return -1;
    if (device < 0)
        device = most_grown();
    struct gmg_at_peak w;
    gmg_at_peak_window(device, &w);
    long need = groups_text(w.groups, w.ngroups, max_groups, w.incomplete, buf, size);
    free(w.groups);
    return need;
}

/* ------------------------------------------------------------ sizes */

/* A size as people write one: blanks around it, and between the number and
 * its unit ("512 MiB"), are left out; anything else is the limit parser's
 * to judge. `buf` holds strlen(text) + 1 bytes. */
static const char *size_text(const char *text, char *buf)
{
    while (*text == ' ' || *text == '\t')
        text++;
    size_t n = strlen(text);
    while (n && (text[n - 1] == ' ' || text[n - 1] == '\t'))
        n--;
    size_t num = strspn(text, "0123456789."), gap = num;
    while (gap < n && (text[gap] == ' ' || text[gap] == '\t'))
        gap++;
    int unit = gap < n && ((text[gap] >= 'A' && text[gap] <= 'Z') || (text[gap] >= 'a' && text[gap] <= 'z'));
    if (num == 0 || gap == num || !unit) { /* no blank between a number and a unit */
        memcpy(buf, text, n);
        buf[n] = 0;
        return buf;
    }
    memcpy(buf, text, num);
    memcpy(buf + num, text + gap, n - gap);
    buf[num + n - gap] = 0;
    return buf;
}

GMG_EXPORT int gpumemguard_parse_size(const char *text, unsigned long long *bytes, char *err,
                                      unsigned long errlen)
{
    FIRST_COPY(gpumemguard_parse_size, text, bytes, err, errlen);
    char why[256], tidy[128], *big = NULL;
    if (text && strlen(text) >= sizeof tidy && !(big = malloc(strlen(text) + 1))) {
        if (err && errlen)
            snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (text)
        text = size_text(text, big ? big : tidy);
    struct gmg_limits l;
    const char *what = NULL;
    if (!text) {
        what = "no size given";
    } else if (strchr(text, ':') || strchr(text, ',')) {
        what = "one size is wanted, not a list per device";
    } else if (gmg_limit_parse(text, &l, why, sizeof why) < 0) {
        what = why;
    } else if (l.dev[0].kind == GMG_LIMIT_PERCENT) {
        what = "a percentage needs a device's memory: give bytes";
    }
    if (what) {
        if (err && errlen)
            snprintf(err, errlen, "%s", what);
        free(big);
        return -1;
    }
    free(big);
    if (bytes)
        *bytes = l.dev[0].kind == GMG_LIMIT_BYTES ? l.dev[0].bytes : 0;
    if (err && errlen)
        err[0] = '\0';
    return 0;
}
