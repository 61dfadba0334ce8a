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
 *   device free    the driver's cuMemGetInfo at report time, when this
 *                  thread has a context on that device
 * What the driver says comes through gmg_report_dev (report.h).
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

struct span { uint64_t lo, hi; };

static int by_lo(const void *a, const void *b)
{
    const struct span *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The driver's allocator's own allocations: VMM mappings live in address
 * ranges the program reserved, IPC mappings in another process's memory. */
static int in_address_space(const struct gmg_alloc *a)
{
    return a->key.space == GMG_SPACE_DEVPTR && a->family != GMG_FAM_IPC;
}

void gmg_frag_compute(struct gmg_report *r, const struct gmg_alloc *live, size_t n)
{
    int ndev = r->ndev > 0 ? r->ndev : 0;
    r->frag = calloc((size_t)ndev + 1, sizeof *r->frag);
    if (!r->frag)
        return;
    r->nfrag = (size_t)ndev;
    struct span *sp = malloc((n + 1) * sizeof *sp);
    if (!sp)
        return;
    int ask_driver = n <= MAX_DRIVER_QUERIES && gmg_report_dev.address_range;
    for (int d = 0; d < ndev; d++) {
        struct gmg_frag *f = &r->frag[d];
        size_t k = 0;
        f->device = d;
        for (size_t i = 0; i < n; i++) {
            const struct gmg_alloc *a = &live[i];
            if (a->device != d || !in_address_space(a))
                continue;
            uint64_t granted = 0;
            uint64_t base, sz;
            if (ask_driver && gmg_report_dev.address_range(a->key.value, &base, &sz) == 0 && base == a->key.value)
                granted = sz;
            else
                granted = (a->requested + GRANULARITY - 1) / GRANULARITY * GRANULARITY;
            if (granted < a->requested)
                granted = a->requested;
            f->live_bytes += a->requested;
            f->live_allocs++;
            f->granted += granted;
            f->rounding += granted - a->requested;
            int c = 0;
            while (c < GMG_SIZE_CLASSES - 1 && a->requested >= class_limit[c])
                c++;
            f->classes[c]++;
            sp[k].lo = a->key.value;
            sp[k].hi = a->key.value + granted;
            k++;
        }
        if (k) {
            qsort(sp, k, sizeof *sp, by_lo);
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
        }
        if (gmg_report_dev.meminfo && gmg_report_dev.meminfo(d, &f->dev_free, &f->dev_total) == 0)
            f->have_meminfo = 1;
    }
    free(sp);
}
