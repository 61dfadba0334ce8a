/*
 * model.c - building the report model, and the refusal explanation. Output
 * destinations live in output.c, formats in text.c, json.c, folded.c,
 * html.c, memviz.c and trace.c, and what a report says of itself (its
 * leaks, whether it is clean or incomplete), which formats read, in facts.c.
 *
 * A report never copies the table: one walk (core/track.c, shards locked
 * one at a time) adds each record into groups by (stack, family, device),
 * hashed, and hands fragmentation the address and size of each device
 * pointer (frag.c); growth is what no earlier signal or API dump listed
 * (the records' `seen` mark). A refusal reads the live totals the depot
 * keeps per stack, never the table, on the refusing thread: its message
 * says what was live at the refusal, whenever it is written.
 */
#define _GNU_SOURCE
#include "report/report.h"

#include "base/config.h"
#include "base/exe.h"
#include "base/log.h"
#include "core/peak.h"
#include "core/pyframes.h"
#include "core/quota.h"
#include "core/ranges.h"
#include "core/stacks.h"
#include "report/atpeak.h"
#include "report/sites.h"
#include "report/timeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static unsigned dumps;           /* reports made by this process */

void gmg_report_model_atfork_child(void)
{
    dumps = 0;
    gmg_symbolizer_atfork_child();
    gmg_at_peak_atfork_child();
    gmg_timeline_atfork_child();
    gmg_sites_atfork_child();
}

/* Untracked allocations never freed, at the least: family against family
 * (core/ranges.h), so that a reserved range the guard could not track is
 * no leak, and the free of one never stands for an allocation's. */
static void untracked_live(struct gmg_report *r, uint64_t range_frees)
{
    r->untracked_ranges = gmg_untracked_ranges(&r->lost);
    r->unknown_alloc_frees = r->unknown_frees - (range_frees < r->unknown_frees ? range_frees : r->unknown_frees);
    uint64_t allocs = r->lost.untracked_allocs - r->untracked_ranges;
    if (allocs > r->unknown_alloc_frees)
        r->untracked_live = allocs - r->unknown_alloc_frees;
}

/* Groups by (stack, family, device), open addressing. */
struct groups {
    struct gmg_group *v;
    size_t n, cap;          /* cap: a power of two, or 0 */
    int failed;
};

static size_t group_hash(uint32_t stack, int family, int device, size_t cap)
{
    uint64_t h = ((uint64_t)stack << 16 | (uint64_t)(uint8_t)family << 8 | (uint8_t)device) * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 32) & (cap - 1);
}

static struct gmg_group *group_slot(struct gmg_group *v, size_t cap, uint32_t stack, int family, int device)
{
    for (size_t i = group_hash(stack, family, device, cap);; i = (i + 1) & (cap - 1))
        if (!v[i].count || (v[i].stack == stack && v[i].family == family && v[i].device == device))
            return &v[i];
}

static void group_add(struct groups *g, uint32_t stack, int family, int device, uint64_t bytes, uint64_t count)
{
    if ((g->n + 1) * 2 > g->cap) {
        size_t cap = g->cap ? g->cap * 2 : 64;
        struct gmg_group *v = calloc(cap, sizeof *v);
        if (!v) {
            g->failed = 1;
            return;
        }
        for (size_t i = 0; i < g->cap; i++)
            if (g->v[i].count)
                *group_slot(v, cap, g->v[i].stack, g->v[i].family, g->v[i].device) = g->v[i];
        free(g->v);
        g->v = v;
        g->cap = cap;
    }
    struct gmg_group *e = group_slot(g->v, g->cap, stack, family, device);
    if (!e->count) {
        e->stack = stack;
        e->family = family;
        e->device = device;
        g->n++;
    }
    e->bytes += bytes;
    e->count += count;
}

/* The groups, packed and sorted biggest first; the table is reused. */
static struct gmg_group *group_list(struct groups *g, size_t *out_n)
{
    size_t k = 0;
    for (size_t i = 0; i < g->cap; i++)
        if (g->v[i].count)
            g->v[k++] = g->v[i];
    if (k > 1)
        qsort(g->v, k, sizeof *g->v, gmg_group_by_bytes);
    *out_n = k;
    struct gmg_group *v = g->v;
    if (!v)
        v = calloc(1, sizeof *v);
    g->v = NULL;
    g->cap = g->n = 0;
    return v;
}

/* The first suppression pattern matching a frame of the stack (its
 * function, source file or module path), or -1. */
static int suppressed_by(struct gmg_report *r, uint32_t stack)
{
    const struct gmg_stack *s = gmg_stack_get(stack);
    const struct gmg_suppressions *sp = &gmg_cfg.suppressions;
    for (uint32_t i = 0; s && i < s->depth; i++) {
        if (gmg_stack_is_internal(s->frames[i]))
            continue;
        struct gmg_frame_info fi;
        gmg_symbolize(r->sym, s->frames[i], gmg_stack_module(s, i), &fi);
        for (size_t k = 0; k < sp->n; k++)
            if (gmg_template_match(sp->patterns[k], fi.function) || gmg_template_match(sp->patterns[k], fi.file) ||
                gmg_template_match(sp->patterns[k], fi.module_path))
                return (int)k;
    }
    return -1;
}

/* Take suppressed groups out of a list (and its totals, when it has
 * them: bytes NULL for growth, whose groups are also in the live list and
 * counted under "Suppressions used" there). */
static void suppress_list(struct gmg_report *r, struct gmg_group *g, size_t *n, uint64_t *bytes, uint64_t *allocs)
{
    size_t k = 0;
    for (size_t i = 0; i < *n; i++) {
        int p = gmg_group_is_allocation(g[i].family) && !g[i].pool ? suppressed_by(r, g[i].stack) : -1;
        if (p < 0) {
            g[k++] = g[i];
            continue;
        }
        if (!bytes)
            continue;
        r->supp[p].count += g[i].count;
        r->supp[p].bytes += g[i].bytes;
        r->any_suppressed = 1;
        *bytes -= g[i].bytes;
        *allocs -= g[i].count;
    }
    *n = k;
}

static void suppress(struct gmg_report *r)
{
    size_t n = gmg_cfg.suppressions.n;
    if (gmg_cfg.suppressions_lost)
        r->incomplete |= GMG_INCOMPLETE_SUPPRESSIONS;
    if (!n)
        return;
    if (!(r->supp = calloc(n, sizeof *r->supp))) {
        r->incomplete |= GMG_INCOMPLETE_SUPPRESSIONS;
        return;
    }
    r->nsupp = n;
    uint64_t bytes = r->live_bytes, allocs = r->live_allocs;
    suppress_list(r, r->groups, &r->ngroups, &r->live_bytes, &r->live_allocs);
    r->supp_live_bytes = bytes - r->live_bytes;
    r->supp_live_allocs = allocs - r->live_allocs;
    suppress_list(r, r->reclaimed, &r->nreclaimed, &r->reclaimed_bytes, &r->reclaimed_allocs);
    suppress_list(r, r->growth, &r->ngrowth, NULL, NULL); /* what grew is no news of a suppressed stack either */
}

void gmg_report_site_names(const uint32_t *stacks, size_t n, char *names, size_t each)
{
    struct gmg_symbolizer *sym = n ? gmg_symbolizer_get() : NULL; /* one for all of them */
    for (size_t k = 0; k < n; k++) {
        char *buf = names + k * each;
        const struct gmg_stack *s = gmg_stack_get(stacks[k]);
        snprintf(buf, each, "%s", s ? "??" : "no stack");
        for (uint32_t i = 0; sym && s && i < s->depth; i++) {
            if (gmg_stack_is_internal(s->frames[i]))
                continue;
            struct gmg_frame_info fi;
            gmg_symbolize(sym, s->frames[i], gmg_stack_module(s, i), &fi);
            if (fi.file)
                snprintf(buf, each, "%s %s:%d", fi.function ? fi.function : "??", fi.file, fi.line);
            else
                snprintf(buf, each, "%s (%s+%#lx)", fi.function ? fi.function : "??", fi.module ? fi.module : "?",
                         (unsigned long)fi.offset);
            break;
        }
    }
    gmg_symbolizer_put(sym);
}

/* One live allocation for the memviz snapshot; out of memory, the list
 * stops and the report says it is incomplete (fragmentation). */
static void live_note(struct gmg_report *r, const struct gmg_alloc *a)
{
    if (r->nallocs == r->allocs_cap) {
        size_t cap = r->allocs_cap ? r->allocs_cap * 2 : 1024;
        struct gmg_live *v = r->incomplete & GMG_INCOMPLETE_FRAGMENTATION ? NULL : realloc(r->allocs, cap * sizeof *v);
        if (!v) {
            r->incomplete |= GMG_INCOMPLETE_FRAGMENTATION;
            return;
        }
        r->allocs = v;
        r->allocs_cap = cap;
    }
    r->allocs[r->nallocs++] =
        (struct gmg_live){ a->value, a->size, gmg_alloc_requested(a), a->stack, a->device, a->family };
}

struct walk {
    struct gmg_report *r;
    int allocs_too;                /* memviz: each allocation too */
    struct groups live, reclaimed, growth;
    int growth_too;
    struct gmg_frag_input *frag;   /* per device, NULL when out of memory */
    size_t nrecords;
    uint64_t region_bytes;         /* NVTX regions': inside segments counted already */
};

static void walk_live(const struct gmg_alloc *a, int fresh, void *arg)
{
    struct walk *w = arg;
    w->nrecords++;
    if (gmg_group_is_allocation(a->family)) {
        w->r->live_bytes += a->size;
        w->r->live_allocs++;
        if (a->family == GMG_FAM_NVTX_REGION)
            w->region_bytes += a->size;
    }
    group_add(&w->live, a->stack, a->family, a->device, a->size, 1);
    if (w->growth_too && fresh)
        group_add(&w->growth, a->stack, a->family, a->device, a->size, 1);
    if (w->frag)
        gmg_frag_note(w->frag, w->r->ndev, a);
    if (w->allocs_too && a->device >= 0 && (gmg_frag_counts(a) || a->family == GMG_FAM_NVTX_REGION))
        live_note(w->r, a); /* memviz: allocations, and NVTX regions as blocks in them */
}

static void walk_reclaimed(const struct gmg_alloc *a, int fresh, void *arg)
{
    struct walk *w = arg;
    (void)fresh;
    w->r->reclaimed_bytes += a->size;
    w->r->reclaimed_allocs++;
    group_add(&w->reclaimed, a->stack, a->family, a->device, a->size, 1);
}

int gmg_report_build(struct gmg_report *r, enum gmg_trigger trigger)
{
    memset(r, 0, sizeof *r);
    r->trigger = trigger;
    r->dump = trigger == GMG_TRIGGER_QUERY ? 0 : __atomic_add_fetch(&dumps, 1, __ATOMIC_RELAXED);
    r->pid = getpid();
    r->exe = gmg_exe_path();
    r->cmdline = gmg_exe_cmdline();
    r->grouped = gmg_quota_pooled();
    gmg_quota_refresh(); /* GPUMEM_GROUP: dead members' shares back first */
    r->ndev = gmg_quota_devices_with_group(); /* the group's devices: another member's too */
    r->group_members = gmg_quota_group_members();
    for (int d = 0; d < r->ndev; d++) {
        uint64_t total; /* a percent limit of a device not allocated on yet: its size decides it */
        if (gmg_quota_wants_total(d) && gmg_report_dev.total && gmg_report_dev.total(d, &total) == 0)
            gmg_quota_learn_total(d, total);
        r->dev[d].limit = gmg_quota_limit(d);
        r->dev[d].used = gmg_peak_in_use(d);
        r->dev[d].peak = gmg_peak_run(d); /* made allocations only (core/peak.h) */
        r->dev[d].group_used = gmg_quota_charged(d);
        r->dev[d].group_peak = gmg_quota_group_peak(d);
    }
    /* ranges' first: each of those is in unknown_frees by then (intercept.c
     * counts it there first), so that a range freed meanwhile never makes
     * the frees of allocations too few, and untracked_live too many */
    uint64_t range_frees = gmg_range_unknown_frees();
    r->unknown_frees = gmg_record_unknown_frees();
    r->total_allocs = gmg_record_total();

    struct walk w;
    memset(&w, 0, sizeof w);
    w.r = r;
    w.growth_too = trigger == GMG_TRIGGER_SIGNAL || trigger == GMG_TRIGGER_API;
    w.allocs_too = (gmg_cfg.formats & GMG_FMT_MEMVIZ) && strcmp(gmg_cfg.report, "none") != 0;
    w.frag = calloc((size_t)(r->ndev > 0 ? r->ndev : 0) + 1, sizeof *w.frag);
    gmg_track_lost(&r->lost); /* before the walk: none of these is in it */
    gmg_track_walk(w.growth_too, walk_live, &w);
    gmg_track_reclaimed_walk(walk_reclaimed, &w);
    if (w.frag) {
        gmg_frag_compute(r, w.frag, w.nrecords);
        for (int d = 0; d < r->ndev; d++)
            free(w.frag[d].v);
        free(w.frag);
    } else {
        r->incomplete |= GMG_INCOMPLETE_FRAGMENTATION;
    }
    if (w.live.failed || w.reclaimed.failed || w.growth.failed)
        r->incomplete |= GMG_INCOMPLETE_GROUPS;
    r->groups = group_list(&w.live, &r->ngroups);
    r->reclaimed = group_list(&w.reclaimed, &r->nreclaimed);
    if (w.growth_too) {
        r->growth = group_list(&w.growth, &r->ngrowth);
        r->has_growth = 1;
    }
    if (r->lost.untracked_allocs) {
        r->incomplete |= GMG_INCOMPLETE_UNTRACKED;
        untracked_live(r, range_frees);
    }
    if (r->lost.unlisted_allocs)
        r->incomplete |= GMG_INCOMPLETE_UNLISTED;
    if (gmg_stack_lost() || gmg_py_lost())
        r->incomplete |= GMG_INCOMPLETE_STACKS;
    if (gmg_ctx_unindexed())
        r->incomplete |= GMG_INCOMPLETE_CONTEXTS;
    /* the timeline first, then what was live at the peak: the run's peak
     * only rises, so no sample is above the peak at_peak reads */
    if (w.growth_too)
        gmg_timeline_event(GMG_TL_DUMP, -1, r->live_bytes - w.region_bytes); /* each byte once */
    r->timeline = gmg_timeline_copy();
    /* the refusal counts after the marks: each is counted before it is
     * marked, so that a refusal or out-of-memory of another thread's while
     * the report is built (one still allocating at exit) is in the counts
     * too, never only in the marks and messages */
    r->refused = r->driver_oom = 0;
    for (int d = 0; d < r->ndev; d++) {
        r->dev[d].refused = gmg_quota_refused(d);
        r->refused += r->dev[d].refused;
        r->dev[d].driver_oom = gmg_quota_driver_oom(d);
        r->driver_oom += r->dev[d].driver_oom;
    }
    r->host_driver_oom = gmg_quota_host_driver_oom();
    r->driver_oom += r->host_driver_oom;
    /* a signal or API dump starts the next window; the API's leaked and
     * retained bytes read nothing of the peak's */
    if (trigger != GMG_TRIGGER_QUERY)
        gmg_at_peak_build(r, w.growth_too);
    /* a peak set since the device lines were read: the line says it too */
    for (size_t i = 0; i < r->nat_peak; i++) {
        int d = r->at_peak[i].device;
        if (d >= 0 && d < r->ndev && r->at_peak[i].bytes > r->dev[d].peak)
            r->dev[d].peak = r->at_peak[i].bytes;
    }
    r->sym = gmg_symbolizer_get();
    r->sym_lost0 = gmg_symbolizer_lost(r->sym);
    r->sym_dynamic0 = gmg_symbolizer_dynamic_only(r->sym, NULL);
    /* one group per call site as it reads (sites.h), before suppressions,
     * which then match every stack of a site alike */
    gmg_sites_merge(r->sym, r->groups, &r->ngroups);
    gmg_sites_merge(r->sym, r->reclaimed, &r->nreclaimed);
    gmg_sites_merge(r->sym, r->growth, &r->ngrowth);
    for (size_t i = 0; i < r->nat_peak; i++)
        gmg_sites_merge(r->sym, r->at_peak[i].groups, &r->at_peak[i].ngroups);
    for (size_t i = 0; i < r->nsince_peak; i++)
        gmg_sites_merge(r->sym, r->since_peak[i].groups, &r->since_peak[i].ngroups);
    gmg_report_owners(r); /* owners and pools first: a pool's segment is no leak to suppress */
    suppress(r);
    return 0;
}

void gmg_report_free(struct gmg_report *r)
{
    free(r->groups);
    free(r->reclaimed);
    free(r->growth);
    free(r->allocs);
    for (size_t i = 0; r->frag && i < r->nfrag; i++)
        free(r->frag[i].map);
    free(r->frag);
    free(r->supp);
    gmg_at_peak_free(r);
    gmg_timeline_free(r->timeline);
    free(r->owners);
    free(r->heaps);
    free(r->heapv);
    free(r->mempools);
    gmg_symbolizer_put(r->sym);
    memset(r, 0, sizeof *r);
}

struct gmg_device_ops gmg_report_dev;

void gmg_report_set_device_ops(const struct gmg_device_ops *ops)
{
    gmg_report_dev = *ops;
}

/* Does a family's memory count against the device's quota (SPEC §2)?
 * Pinned host memory, IPC and graph memory are tracked but never counted,
 * managed memory only under GPUMEM_COUNT_MANAGED=1; a cuMemCreate handle
 * off the device is counted on no device. */
static int counts_on_device(int family)
{
    switch (family) {
    case GMG_FAM_LINEAR: case GMG_FAM_PITCH: case GMG_FAM_ASYNC: case GMG_FAM_VMM:
    case GMG_FAM_ARRAY: case GMG_FAM_MIPMAP:
        return 1;
    case GMG_FAM_MANAGED:
        return gmg_cfg.count_managed;
    default:
        return 0;
    }
}

/* The driver's out of memory for pinned host memory: explained by host
 * memory, not by a device's. */
static int host_oom(const struct gmg_refusal *ev) { return ev->driver && gmg_family_host(ev->family); }

/* Keep the GMG_REFUSAL_STACKS biggest live groups of one device, from the
 * live totals: only those that hold its quota, which is what the message
 * explains (a bigger buffer of pinned host memory must not crowd them out
 * of the few it shows). For pinned host memory's out of memory, the
 * groups of pinned host memory, whatever their context's device. */
static void top_add(uint32_t stack, int device, int family, uint64_t bytes, uint64_t count, void *arg)
{
    struct gmg_refusal_state *t = arg;
    if (!bytes) /* a sparse array holds none */
        return;
    if (host_oom(&t->ev) ? !gmg_family_host(family) : device != t->ev.device || !counts_on_device(family))
        return;
    struct gmg_group g = { .stack = stack, .family = family, .device = device, .bytes = bytes, .count = count };
    t->live_bytes += bytes;
    size_t i = t->ntop < GMG_REFUSAL_STACKS ? t->ntop++ : GMG_REFUSAL_STACKS;
    if (i == GMG_REFUSAL_STACKS) {
        if (gmg_group_by_bytes(&g, &t->top[GMG_REFUSAL_STACKS - 1]) >= 0)
            return; /* not among the biggest */
        i = GMG_REFUSAL_STACKS - 1;
    }
    while (i > 0 && gmg_group_by_bytes(&g, &t->top[i - 1]) < 0) {
        t->top[i] = t->top[i - 1];
        i--;
    }
    t->top[i] = g;
}

void gmg_report_refusal_capture(const struct gmg_refusal *ev, struct gmg_refusal_state *out)
{
    memset(out, 0, sizeof *out);
    out->ev = *ev;
    gmg_track_live_each(top_add, out);
    gmg_track_lost(&out->lost);
    if (host_oom(ev))
        out->ev.own = out->live_bytes; /* the pinned host memory this process holds */
}

/* The message's first line (no newline) into out. */
static void refusal_line(const struct gmg_refusal *ev, const char *outcome, char *out, size_t n)
{
    char req[GMG_SIZE_LEN], lim[GMG_SIZE_LEN], use[GMG_SIZE_LEN];
    if (ev->driver) { /* the driver's own out of memory: no quota involved */
        char freeb[GMG_SIZE_LEN + 32];
        if (ev->free_known) {
            gmg_fmt_size(lim, sizeof lim, ev->dev_free);
            snprintf(freeb, sizeof freeb, "%s", lim);
        } else {
            snprintf(freeb, sizeof freeb, "an unknown amount of memory");
        }
        if (host_oom(ev)) /* no device's memory: what this process pins */
            snprintf(out, n, "gpumemguard: the driver refused %s of %s in host memory: out of memory; this process "
                             "holds %s of pinned host memory (%s)",
                     gmg_family_name(ev->family), gmg_fmt_size(req, sizeof req, ev->bytes),
                     gmg_fmt_size(use, sizeof use, ev->own), outcome);
        else
            snprintf(out, n, "gpumemguard: the driver refused %s of %s on device %d: out of memory; this process "
                             "holds %s on device %d, the device has %s free (%s)",
                     gmg_family_name(ev->family), gmg_fmt_size(req, sizeof req, ev->bytes), ev->device,
                     gmg_fmt_size(use, sizeof use, ev->own), ev->device, freeb, outcome);
        return;
    }
    if (gmg_quota_pooled()) { /* GPUMEM_GROUP: the group's budget and bytes, and ours */
        char own[GMG_SIZE_LEN];
        snprintf(out, n, "gpumemguard: refused %s of %s on device %d: GPUMEM_LIMIT is %s for group %s, %s in use by "
                         "the group (%s by this process) (%s)",
                 gmg_family_name(ev->family), gmg_fmt_size(req, sizeof req, ev->bytes), ev->device,
                 gmg_fmt_size(lim, sizeof lim, ev->limit), gmg_cfg.group, gmg_fmt_size(use, sizeof use, ev->in_use),
                 gmg_fmt_size(own, sizeof own, ev->own), outcome);
    } else {
        snprintf(out, n, "gpumemguard: refused %s of %s on device %d: GPUMEM_LIMIT is %s, %s in use (%s)",
                 gmg_family_name(ev->family), gmg_fmt_size(req, sizeof req, ev->bytes), ev->device,
                 gmg_fmt_size(lim, sizeof lim, ev->limit), gmg_fmt_size(use, sizeof use, ev->in_use), outcome);
    }
}

void gmg_report_refusal_short(const struct gmg_refusal *ev, const char *outcome)
{
    char line[1024];
    refusal_line(ev, outcome, line, sizeof line - 1);
    size_t n = strlen(line);
    line[n++] = '\n';
    gmg_write_stderr(line, n);
}

/* Under a list the message cut to its biggest call sites: how much of
 * `all` bytes the `shown` ones leave out. */
static void more_line(struct gmg_buf *b, uint64_t all, uint64_t shown)
{
    char more[GMG_SIZE_LEN];
    if (all > shown)
        gmg_buf_printf(b, "  (and %s more at other call sites; the report lists them all)\n",
                       gmg_fmt_size(more, sizeof more, all - shown));
}

/* The refused call itself (what, how much, the quota, its own stack), then
 * the few biggest live stacks of its device at the refusal (no walk of the
 * table, no fragmentation, no dump number). */
static void refusal_text(const struct gmg_refusal_state *st, struct gmg_buf *b, const char *outcome)
{
    const struct gmg_refusal *ev = &st->ev;
    struct gmg_report r;
    memset(&r, 0, sizeof r);
    r.trigger = GMG_TRIGGER_REFUSAL;
    r.sym = gmg_symbolizer_get();
    r.sym_dynamic0 = gmg_symbolizer_dynamic_only(r.sym, NULL);
    char line[1024], use[GMG_SIZE_LEN];
    refusal_line(ev, outcome, line, sizeof line);
    gmg_buf_printf(b, "%s\n", line);
    gmg_buf_printf(b, "  the refused call:\n");
    gmg_report_text_stack(&r, b, ev->stack);
    if (host_oom(ev))
        gmg_buf_printf(b, "gpumemguard: the biggest live allocations of pinned host memory:\n");
    else
        gmg_buf_printf(b, "gpumemguard: the biggest live allocations on device %d:\n", ev->device);
    struct gmg_group top[GMG_REFUSAL_STACKS]; /* by call site as it reads (sites.h) */
    size_t ntop = st->ntop;
    memcpy(top, st->top, ntop * sizeof *top);
    gmg_sites_merge(r.sym, top, &ntop);
    uint64_t shown = 0;
    for (size_t i = 0; i < ntop && i < GMG_REFUSAL_SHOWN; i++) {
        gmg_report_text_group(&r, b, &top[i]);
        shown += top[i].bytes;
    }
    more_line(b, st->live_bytes, shown);
    /* The live totals are read just after the quota said no: bytes in use
     * and no live stack means other threads' calls were under way then (a
     * reservation not yet recorded, a free not yet given back). */
    uint64_t was = gmg_quota_pooled() ? ev->own : ev->in_use;
    uint64_t untracked = st->lost.untracked_allocs - gmg_untracked_ranges(&st->lost); /* ranges hold no bytes */
    if (!st->ntop && st->lost.untracked_bytes) /* the guard's own out of memory: it cannot say what holds them */
        gmg_buf_printf(b, "  (none listed: %llu allocation%s could not be tracked (the guard ran out of memory), and "
                          "%llu bytes of them stay counted)\n",
                       (unsigned long long)untracked, untracked == 1 ? "" : "s",
                       (unsigned long long)st->lost.untracked_bytes);
    else if (!st->ntop && was)
        gmg_buf_printf(b, "  (none listed: the %s in use%s were held by allocations and frees under way on other "
                          "threads at the refusal)\n",
                       gmg_fmt_size(use, sizeof use, was), gmg_quota_pooled() ? " by this process" : "");
    else if (!st->ntop)
        gmg_buf_printf(b, "  (none)\n");
    else if (st->lost.untracked_bytes)
        gmg_buf_printf(b, "  (and %llu allocation%s the guard could not track: %llu bytes counted)\n",
                       (unsigned long long)untracked, untracked == 1 ? "" : "s",
                       (unsigned long long)st->lost.untracked_bytes);
    /* then what filled the device at its peak (this process's own): often
     * not what is live now, since a framework frees its caches on the way */
    struct gmg_group pk[GMG_REFUSAL_STACKS];
    struct gmg_at_peak_top pt;
    if (!host_oom(ev) && gmg_at_peak_top(ev->device, pk, GMG_REFUSAL_STACKS, &pt) == 0) {
        gmg_buf_printf(b, "gpumemguard: live at the peak of device %d (%llu bytes%s), biggest first:\n", ev->device,
                       (unsigned long long)pt.bytes, gmg_quota_pooled() ? ", this process's own peak" : "");
        size_t npk = pt.shown;
        gmg_sites_merge(r.sym, pk, &npk); /* by call site as it reads, as above */
        uint64_t pk_shown = 0;
        for (size_t i = 0; i < npk && i < GMG_REFUSAL_SHOWN; i++) {
            gmg_report_text_group(&r, b, &pk[i]);
            pk_shown += pk[i].bytes;
        }
        more_line(b, pt.bytes, pk_shown);
    }
    gmg_report_text_dynamic_only(&r, b);
    gmg_report_free(&r);
}

int gmg_report_refusal(const struct gmg_refusal_state *st, void (*ready)(void *), void *arg)
{
    const struct gmg_refusal *ev = &st->ev;
    /* once per call site as it reads: the allocation path's set goes by
     * stack, and an unrolled loop's four addresses are one site */
    if (!ev->abort && !gmg_sites_first_refusal(ev->stack, ev->family, ev->driver))
        return 0;
    /* one write, so that the program's own output never lands inside it */
    struct gmg_buf b = { 0 };
    gmg_report_busy_enter(); /* its caller holds the reporter's explain lock */
    refusal_text(st, &b, ev->driver ? "the program gets the driver's CUDA_ERROR_OUT_OF_MEMORY as it is, and may "
                                      "free memory and try again; further ones from this call site are counted, "
                                      "not shown"
                         : ev->abort ? "aborting: GPUMEM_ON_LIMIT=abort"
                                     : "returning CUDA_ERROR_OUT_OF_MEMORY; further refusals from this call site are "
                                       "counted, not shown");
    if (ready) /* formatted: only the write is left, which must not come before the first line the caller wrote */
        ready(arg);
    if (!b.failed) {
        gmg_report_stream_lock(); /* never inside a report another thread writes there */
        gmg_write_stderr(b.p, b.len);
        gmg_report_stream_unlock();
    } else /* out of memory for the message: its first line, from the stack */
        gmg_report_refusal_short(ev, "out of memory for the rest of this message");
    gmg_buf_free(&b);
    if (ev->abort) { /* marked now: the process ends before the reporter would mark it */
        gmg_timeline_event_at(ev->driver ? GMG_TL_DRIVER_OOM : GMG_TL_REFUSAL, ev->device, ev->bytes, ev->mono_ms);
        gmg_report_now(GMG_TRIGGER_REFUSAL);
    }
    gmg_report_busy_leave();
    return 1;
}
