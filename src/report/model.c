/*
 * model.c - building the report model from a snapshot, and the refusal
 * explanation. Output destinations live in output.c, formats in text.c,
 * json.c and folded.c.
 */
#define _GNU_SOURCE
#include "report/report.h"

#include "base/config.h"
#include "base/log.h"
#include "core/quota.h"
#include "core/stacks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint64_t last_dump_seq;   /* growth: allocations after this one are new */
static unsigned dumps;           /* reports made by this process */

void gmg_report_model_atfork_child(void)
{
    dumps = 0;
    last_dump_seq = 0;
}

const char *gmg_trigger_name(enum gmg_trigger t)
{
    switch (t) {
    case GMG_TRIGGER_EXIT: return "exit";
    case GMG_TRIGGER_SIGNAL: return "signal";
    case GMG_TRIGGER_REFUSAL: return "refusal";
    default: return "request";
    }
}

int gmg_group_is_allocation(int family)
{
    return family != GMG_FAM_VA && family != GMG_FAM_VMM_MAP;
}

static int by_site(const void *a, const void *b)
{
    const struct gmg_alloc *x = a, *y = b;
    if (x->stack != y->stack)
        return x->stack < y->stack ? -1 : 1;
    if (x->family != y->family)
        return x->family - y->family;
    return x->device - y->device;
}

static int by_bytes(const void *a, const void *b)
{
    const struct gmg_group *x = a, *y = b;
    if (x->bytes != y->bytes)
        return x->bytes > y->bytes ? -1 : 1;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return x->stack < y->stack ? -1 : x->stack > y->stack;
}

/* Group records by identical (stack, API family, device), biggest first.
 * Sorts `v` in place. */
static struct gmg_group *group(struct gmg_alloc *v, size_t n, size_t *out_n, uint64_t min_seq)
{
    qsort(v, n, sizeof *v, by_site);
    struct gmg_group *g = malloc((n + 1) * sizeof *g);
    size_t k = 0;
    if (!g) {
        *out_n = 0;
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        if (v[i].seq <= min_seq)
            continue;
        if (k && g[k - 1].stack == v[i].stack && g[k - 1].family == v[i].family && g[k - 1].device == v[i].device) {
            g[k - 1].bytes += v[i].size;
            g[k - 1].count++;
            continue;
        }
        g[k].stack = v[i].stack;
        g[k].family = v[i].family;
        g[k].device = v[i].device;
        g[k].bytes = v[i].size;
        g[k].count = 1;
        k++;
    }
    qsort(g, k, sizeof *g, by_bytes);
    *out_n = k;
    return g;
}

static void read_exe(char *out, size_t n)
{
    ssize_t len = readlink("/proc/self/exe", out, n - 1);
    out[len > 0 ? len : 0] = 0;
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

/* Take suppressed groups out of a list (and its totals). */
static void suppress_list(struct gmg_report *r, struct gmg_group *g, size_t *n, uint64_t *bytes, uint64_t *allocs)
{
    size_t k = 0;
    for (size_t i = 0; i < *n; i++) {
        int p = gmg_group_is_allocation(g[i].family) ? suppressed_by(r, g[i].stack) : -1;
        if (p < 0) {
            g[k++] = g[i];
            continue;
        }
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
    if (!n || !(r->supp = calloc(n, sizeof *r->supp)))
        return;
    r->nsupp = n;
    suppress_list(r, r->groups, &r->ngroups, &r->live_bytes, &r->live_allocs);
    suppress_list(r, r->reclaimed, &r->nreclaimed, &r->reclaimed_bytes, &r->reclaimed_allocs);
}

void gmg_report_site_names(const uint32_t *stacks, size_t n, char *names, size_t each)
{
    struct gmg_symbolizer *sym = n ? gmg_symbolizer_new() : NULL; /* one for all of them */
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
    gmg_symbolizer_free(sym);
}

uint64_t gmg_report_leaks(const struct gmg_report *r)
{
    return r->live_allocs + r->reclaimed_allocs;
}

int gmg_report_clean(const struct gmg_report *r)
{
    return r->trigger == GMG_TRIGGER_EXIT && !gmg_report_leaks(r) && !r->refused && !r->unknown_frees &&
           !r->any_suppressed;
}

int gmg_report_build(struct gmg_report *r, enum gmg_trigger trigger)
{
    memset(r, 0, sizeof *r);
    r->trigger = trigger;
    r->dump = __atomic_add_fetch(&dumps, 1, __ATOMIC_RELAXED);
    r->pid = getpid();
    read_exe(r->exe, sizeof r->exe);
    r->ndev = gmg_quota_devices_seen();
    r->grouped = gmg_quota_pooled();
    gmg_quota_refresh(); /* GPUMEM_GROUP: dead members' shares back first */
    r->group_members = gmg_quota_group_members();
    for (int d = 0; d < r->ndev; d++) {
        r->dev[d].limit = gmg_quota_limit(d);
        r->dev[d].used = gmg_quota_used(d);
        r->dev[d].peak = gmg_quota_peak(d);
        r->dev[d].refused = gmg_quota_refused(d);
        r->refused += r->dev[d].refused;
        r->dev[d].group_used = gmg_quota_charged(d);
        r->dev[d].group_peak = gmg_quota_group_peak(d);
    }
    r->unknown_frees = gmg_record_unknown_frees();
    r->total_allocs = gmg_record_total();

    size_t n = 0, nrec = 0;
    struct gmg_alloc *live = gmg_track_snapshot(&n);
    struct gmg_alloc *rec = gmg_track_reclaimed(&nrec);
    for (size_t i = 0; i < n; i++)
        if (gmg_group_is_allocation(live[i].family)) {
            r->live_bytes += live[i].size;
            r->live_allocs++;
        }
    for (size_t i = 0; i < nrec; i++) {
        r->reclaimed_bytes += rec[i].size;
        r->reclaimed_allocs++;
    }
    gmg_frag_compute(r, live, n);
    r->groups = group(live, n, &r->ngroups, 0);
    r->reclaimed = group(rec, nrec, &r->nreclaimed, 0);
    if (trigger == GMG_TRIGGER_SIGNAL || trigger == GMG_TRIGGER_API) {
        uint64_t prev = __atomic_exchange_n(&last_dump_seq, gmg_record_total(), __ATOMIC_ACQ_REL);
        r->growth = group(live, n, &r->ngrowth, prev);
        r->has_growth = 1;
    }
    free(live);
    free(rec);
    r->sym = gmg_symbolizer_new();
    suppress(r);
    return 0;
}

void gmg_report_free(struct gmg_report *r)
{
    free(r->groups);
    free(r->reclaimed);
    free(r->growth);
    free(r->frag);
    free(r->supp);
    gmg_symbolizer_free(r->sym);
    memset(r, 0, sizeof *r);
}

struct gmg_device_ops gmg_report_dev;

void gmg_report_set_device_ops(const struct gmg_device_ops *ops)
{
    gmg_report_dev = *ops;
}

#define REFUSAL_STACKS 3

/* Only what the explanation needs: a snapshot grouped by stack, and the
 * frames of the few groups shown; no fragmentation, no dump number. */
/* The refused call itself (what, how much, the quota, its own stack), then
 * the few biggest live stacks of its device: a snapshot grouped by stack,
 * no fragmentation, no dump number. */
static void refusal_text(const struct gmg_refusal *ev, struct gmg_buf *b, const char *outcome)
{
    struct gmg_report r;
    memset(&r, 0, sizeof r);
    r.trigger = GMG_TRIGGER_REFUSAL;
    r.sym = gmg_symbolizer_new();
    char req[GMG_SIZE_LEN], lim[GMG_SIZE_LEN], use[GMG_SIZE_LEN];
    if (gmg_quota_pooled()) { /* GPUMEM_GROUP: the group's budget and bytes, and ours */
        char own[GMG_SIZE_LEN];
        gmg_buf_printf(b, "gpumemguard: refused %s of %s on device %d: GPUMEM_LIMIT is %s for group %s, %s in use by "
                          "the group (%s by this process) (%s)\n",
                       gmg_family_name(ev->family), gmg_fmt_size(req, sizeof req, ev->bytes), ev->device,
                       gmg_fmt_size(lim, sizeof lim, ev->limit), gmg_cfg.group,
                       gmg_fmt_size(use, sizeof use, ev->in_use), gmg_fmt_size(own, sizeof own, ev->own), outcome);
    } else {
        gmg_buf_printf(b, "gpumemguard: refused %s of %s on device %d: GPUMEM_LIMIT is %s, %s in use (%s)\n",
                       gmg_family_name(ev->family), gmg_fmt_size(req, sizeof req, ev->bytes), ev->device,
                       gmg_fmt_size(lim, sizeof lim, ev->limit), gmg_fmt_size(use, sizeof use, ev->in_use), outcome);
    }
    gmg_buf_printf(b, "  the refused call:\n");
    gmg_report_text_stack(&r, b, ev->stack);
    size_t n = 0;
    struct gmg_alloc *live = gmg_track_snapshot(&n);
    r.groups = group(live, n, &r.ngroups, 0);
    free(live);
    gmg_buf_printf(b, "gpumemguard: the biggest live allocations on device %d:\n", ev->device);
    int shown = 0;
    for (size_t i = 0; i < r.ngroups && shown < REFUSAL_STACKS; i++) {
        if (r.groups[i].device != ev->device || !gmg_group_is_allocation(r.groups[i].family))
            continue;
        gmg_report_text_group(&r, b, &r.groups[i]);
        shown++;
    }
    if (!shown)
        gmg_buf_printf(b, "  (none)\n");
    gmg_report_free(&r);
}

void gmg_report_refusal(const struct gmg_refusal *ev)
{
    /* one write, so that the program's own output never lands inside it */
    struct gmg_buf b = { 0 };
    refusal_text(ev, &b, ev->abort ? "aborting: GPUMEM_ON_LIMIT=abort"
                                   : "returning CUDA_ERROR_OUT_OF_MEMORY; further refusals from this call site are "
                                     "counted, not shown");
    if (!b.failed)
        gmg_write_stderr(b.p, b.len);
    gmg_buf_free(&b);
    if (ev->abort)
        gmg_report_now(GMG_TRIGGER_REFUSAL);
}
