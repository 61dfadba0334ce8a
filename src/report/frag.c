/*
 * frag.c - the fragmentation section (SPEC §4), per device, over live
 * allocations of device pointers (linear, pitched, managed, stream-ordered):
 *   size classes   counts of live allocations by size
 *   span           lowest start to highest end of live allocations
 *   gaps           holes between consecutive live allocations in the span
 *   utilisation    granted bytes / span bytes
 *   rounding       granted minus requested bytes, granted taken from
 *                  cuMemGetAddressRange (or the 512-byte allocation
 *                  granularity when the driver cannot say)
 *   device free    at report time: the driver's cuMemGetInfo when this
 *                  thread has a context on that device, else NVML's;
 *                  asked apart (gmg_frag_meminfo), only by a report that
 *                  shows it
 * What the driver says comes through gmg_report_dev (report.h).
 *
 *   map            the span's blocks by address, for the HTML page: each
 *                  allocation, or past GMG_FRAG_MAP_MAX of them, runs of
 *                  neighbours split at the largest gaps (so the gaps that
 *                  matter stay exact and the map's size is bounded)
 *
 * The report's walk of the table hands each record to gmg_frag_note, which
 * keeps only (address, size) of each device pointer, 16 bytes, per device;
 * the rest is computed from those once the table's locks are let go.
 */
#include "report/report.h"

#include <stdlib.h>
#include <string.h>

#define GRANULARITY 512u
#define MAX_DRIVER_QUERIES 200000

static const uint64_t class_limit[GMG_SIZE_CLASSES - 1] = {
    4ull << 10, 64ull << 10, 1ull << 20, 16ull << 20, 256ull << 20, 1ull << 30, 4ull << 30,
};

const char *const gmg_size_class_names[GMG_SIZE_CLASSES] = {
    "<4KiB", "4KiB-64KiB", "64KiB-1MiB", "1MiB-16MiB", "16MiB-256MiB", "256MiB-1GiB", "1GiB-4GiB", ">=4GiB",
};

/* Is this record one of the driver's allocator's own allocations? VMM
 * mappings live in address ranges the program reserved, IPC mappings in
 * another process's memory, graph memory nodes in the graph's own reserved
 * range (backed only from a launch to their free), a host pool's
 * allocations in host memory. */
int gmg_frag_counts(const struct gmg_alloc *a)
{
    return a->space == GMG_SPACE_DEVPTR && a->family != GMG_FAM_IPC && a->family != GMG_FAM_POOL_IMPORT &&
           a->family != GMG_FAM_GRAPH && a->family != GMG_FAM_HOST; /* a host pool's allocation */
}

void gmg_frag_note(struct gmg_frag_input *in, int ndev, const struct gmg_alloc *a)
{
    if (a->device < 0 || a->device >= ndev || !gmg_frag_counts(a))
        return;
    struct gmg_frag_input *d = &in[a->device];
    if (d->n == d->cap && !d->failed) {
        size_t cap = d->cap ? d->cap * 2 : 1024;
        struct gmg_span *v = realloc(d->v, cap * sizeof *v);
        if (!v)
            d->failed = 1;
        else {
            d->v = v;
            d->cap = cap;
        }
    }
    if (d->failed)
        return;
    d->v[d->n].lo = a->value;
    d->v[d->n].hi = gmg_alloc_requested(a); /* until compute: what was asked */
    d->n++;
}

static void swap(struct gmg_span *a, struct gmg_span *b)
{
    struct gmg_span t = *a;
    *a = *b;
    *b = t;
}

/* By start address: a quicksort with the comparison inline (median of
 * three, the smaller side first, insertion sort for short runs). */
static void sort_spans(struct gmg_span *v, size_t n)
{
    while (n > 16) {
        size_t m = n / 2;
        if (v[m].lo < v[0].lo)
            swap(&v[m], &v[0]);
        if (v[n - 1].lo < v[0].lo)
            swap(&v[n - 1], &v[0]);
        if (v[n - 1].lo < v[m].lo)
            swap(&v[n - 1], &v[m]);
        uint64_t pivot = v[m].lo;
        size_t i = 0, j = n - 1;
        for (;;) {
            while (v[i].lo < pivot)
                i++;
            while (v[j].lo > pivot)
                j--;
            if (i >= j)
                break;
            swap(&v[i], &v[j]);
            i++;
            j--;
        }
        size_t left = j + 1; /* [0, left) <= pivot <= [left, n) */
        if (left < n - left) {
            sort_spans(v, left);
            v += left;
            n -= left;
        } else {
            sort_spans(v + left, n - left);
            n = left;
        }
    }
    for (size_t i = 1; i < n; i++) {
        struct gmg_span x = v[i];
        size_t j = i;
        while (j > 0 && v[j - 1].lo > x.lo) {
            v[j] = v[j - 1];
            j--;
        }
        v[j] = x;
    }
}

/* The gap before spans[i] (0 when it starts inside what came before). */
static uint64_t gap_before(uint64_t end, const struct gmg_span *sp) { return sp->lo > end ? sp->lo - end : 0; }

/* Sift a min-heap of gap sizes down from slot i. */
static void heap_down(uint64_t *h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < n && h[l] < h[m])
            m = l;
        if (l + 1 < n && h[l + 1] < h[m])
            m = l + 1;
        if (m == i)
            return;
        uint64_t t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

/* The map of k sorted spans (granted ends): one block per allocation, or
 * at most GMG_FRAG_MAP_MAX blocks split at the largest gaps. */
static void make_map(struct gmg_frag *f, const struct gmg_span *sp, size_t k)
{
    size_t nb = k < GMG_FRAG_MAP_MAX ? k : GMG_FRAG_MAP_MAX;
    uint64_t threshold = 0;
    size_t ties = 0;                   /* splits left at gaps equal to the threshold */
    if (k > GMG_FRAG_MAP_MAX) {        /* the GMG_FRAG_MAP_MAX - 1 largest gaps, with a min-heap */
        size_t want = GMG_FRAG_MAP_MAX - 1, n = 0;
        uint64_t *h = malloc(want * sizeof *h);
        if (!h)
            return;
        uint64_t end = sp[0].hi;
        for (size_t i = 1; i < k; i++) {
            uint64_t g = gap_before(end, &sp[i]);
            if (sp[i].hi > end)
                end = sp[i].hi;
            if (n < want) {
                h[n++] = g;
                if (n == want)
                    for (size_t j = want / 2 + 1; j-- > 0;)
                        heap_down(h, n, j);
            } else if (g > h[0]) {
                h[0] = g;
                heap_down(h, n, 0);
            }
        }
        threshold = h[0];
        size_t above = 0;
        for (size_t j = 0; j < n; j++)
            above += h[j] > threshold;
        ties = want - above;
        free(h);
        f->map_merged = 1;
    }
    f->map = calloc(nb, sizeof *f->map);
    if (!f->map)
        return;
    struct gmg_frag_block *b = f->map;
    *b = (struct gmg_frag_block){ sp[0].lo, sp[0].hi, 1, sp[0].hi - sp[0].lo };
    for (size_t i = 1; i < k; i++) {
        uint64_t g = gap_before(b->hi, &sp[i]);
        int split = k <= GMG_FRAG_MAP_MAX || g > threshold || (g == threshold && ties && (ties--, 1));
        if (split && (size_t)(b - f->map) + 1 < nb) {
            b++;
            *b = (struct gmg_frag_block){ sp[i].lo, sp[i].hi, 1, sp[i].hi - sp[i].lo };
            continue;
        }
        b->count++;
        b->granted += sp[i].hi - sp[i].lo;
        if (sp[i].hi > b->hi)
            b->hi = sp[i].hi;
    }
    f->nmap = (size_t)(b - f->map) + 1;
}

void gmg_frag_compute(struct gmg_report *r, struct gmg_frag_input *in, size_t nrecords)
{
    int ndev = r->ndev > 0 ? r->ndev : 0;
    r->frag = calloc((size_t)ndev + 1, sizeof *r->frag);
    if (!r->frag) {
        r->incomplete |= GMG_INCOMPLETE_FRAGMENTATION;
        return;
    }
    r->nfrag = (size_t)ndev;
    int ask_driver = nrecords <= MAX_DRIVER_QUERIES && gmg_report_dev.address_range;
    for (int d = 0; d < ndev; d++) {
        struct gmg_frag *f = &r->frag[d];
        struct gmg_span *sp = in[d].v;
        size_t k = in[d].failed ? 0 : in[d].n;
        if (in[d].failed)
            r->incomplete |= GMG_INCOMPLETE_FRAGMENTATION;
        f->device = d;
        for (size_t i = 0; i < k; i++) {
            uint64_t requested = sp[i].hi, granted = 0, base, sz;
            if (ask_driver && gmg_report_dev.address_range(sp[i].lo, &base, &sz) == 0 && base == sp[i].lo)
                granted = sz;
            else
                granted = (requested + GRANULARITY - 1) / GRANULARITY * GRANULARITY;
            if (granted < requested)
                granted = requested;
            f->live_bytes += requested;
            f->live_allocs++;
            f->granted += granted;
            f->rounding += granted - requested;
            int c = 0;
            while (c < GMG_SIZE_CLASSES - 1 && requested >= class_limit[c])
                c++;
            f->classes[c]++;
            sp[i].hi = sp[i].lo + granted;
        }
        if (k) {
            sort_spans(sp, k);
            f->span_lo = sp[0].lo;
            uint64_t end = sp[0].hi;
            for (size_t i = 1; i < k; i++) {
                if (sp[i].lo > end) {
                    uint64_t gap = sp[i].lo - end;
                    f->gaps++;
                    f->gap_bytes += gap;
                    if (gap > f->gap_largest)
                        f->gap_largest = gap;
                }
                if (sp[i].hi > end)
                    end = sp[i].hi;
            }
            f->span_hi = end;
            make_map(f, sp, k);
        }
    }
}

void gmg_frag_meminfo(struct gmg_report *r)
{
    for (size_t d = 0; d < r->nfrag; d++) {
        struct gmg_frag *f = &r->frag[d];
        int from = gmg_report_dev.meminfo ? gmg_report_dev.meminfo((int)d, &f->dev_free, &f->dev_total) : -1;
        f->have_meminfo = from >= 0;
        f->meminfo_nvml = from == 1;
    }
}
