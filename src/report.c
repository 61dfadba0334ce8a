/*
 * report.c - building the report model from a snapshot, and the refusal
 * summary. Output destinations live in report_out.c, formats in
 * report_text.c, report_json.c and report_folded.c.
 */
#define _GNU_SOURCE
#include "report.h"

#include "intercept.h"
#include "quota.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint64_t last_dump_seq;   /* growth: allocations after this one are new */

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

int gmg_report_build(struct gmg_report *r, enum gmg_trigger trigger)
{
    static unsigned dumps;
    memset(r, 0, sizeof *r);
    r->trigger = trigger;
    r->dump = __atomic_add_fetch(&dumps, 1, __ATOMIC_RELAXED);
    r->pid = getpid();
    read_exe(r->exe, sizeof r->exe);
    r->ndev = gmg_quota_devices_seen();
    for (int d = 0; d < r->ndev; d++) {
        r->dev[d].limit = gmg_quota_limit(d);
        r->dev[d].used = gmg_quota_used(d);
        r->dev[d].peak = gmg_quota_peak(d);
        r->dev[d].refused = gmg_quota_refused(d);
        r->refused += r->dev[d].refused;
    }
    r->unknown_frees = gmg_unknown_frees();
    r->total_allocs = gmg_total_allocs();

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
        uint64_t prev = __atomic_exchange_n(&last_dump_seq, gmg_total_allocs(), __ATOMIC_ACQ_REL);
        r->growth = group(live, n, &r->ngrowth, prev);
        r->has_growth = 1;
    }
    free(live);
    free(rec);
    r->sym = gmg_symbolizer_new();
    return 0;
}

void gmg_report_free(struct gmg_report *r)
{
    free(r->groups);
    free(r->reclaimed);
    free(r->growth);
    free(r->frag);
    gmg_symbolizer_free(r->sym);
    memset(r, 0, sizeof *r);
}

void gmg_report_refusal(int dev, uint32_t stack, int n)
{
    struct gmg_report r;
    (void)stack;
    gmg_report_build(&r, GMG_TRIGGER_REFUSAL);
    struct gmg_buf b = { 0 };
    gmg_buf_printf(&b, "gpumemguard: the biggest live allocations on device %d:\n", dev);
    int shown = 0;
    for (size_t i = 0; i < r.ngroups && shown < n; i++) {
        if (r.groups[i].device != dev || !gmg_group_is_allocation(r.groups[i].family))
            continue;
        gmg_report_text_group(&r, &b, &r.groups[i]);
        shown++;
    }
    if (!shown)
        gmg_buf_printf(&b, "  (none)\n");
    if (!b.failed)
        gmg_write_fd(2, b.p, b.len);
    gmg_buf_free(&b);
    gmg_report_free(&r);
}
