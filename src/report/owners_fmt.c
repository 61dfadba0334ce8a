/*
 * owners_fmt.c - the pools' section and the summary by owner, in the text
 * and JSON reports (their groups come from owners.c).
 *
 *   Retained by pool PyTorch (not a leak): 20.0 MiB (20971520 bytes) in 1 allocation
 *   20.0 MiB (20971520 bytes) in 1 allocation (cuMemAlloc, device 0) allocated from:
 *       #0 ... c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc ...
 *
 *   By owner (live and reclaimed allocations; retained: pools' segments):
 *     PyTorch      20.0 MiB (20971520 bytes) in 1 allocation, 20.0 MiB (20971520 bytes) retained
 *     program      1.0 MiB (1048576 bytes) in 2 allocations
 */
#include "report/report.h"

#include <stdio.h>
#include <string.h>

static int same(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

/* Is this group's pool the first of its name in the lists (groups, then
 * reclaimed), so that each pool gets one section? */
static int first_of_pool(const struct gmg_report *r, const struct gmg_group *g)
{
    for (size_t i = 0; i < r->ngroups; i++)
        if (same(r->groups[i].pool, g->pool))
            return &r->groups[i] == g;
    for (size_t i = 0; i < r->nreclaimed; i++)
        if (same(r->reclaimed[i].pool, g->pool))
            return &r->reclaimed[i] == g;
    return 0;
}

static void pool_section(const struct gmg_report *r, struct gmg_buf *b, const char *pool)
{
    uint64_t bytes = 0, count = 0, rbytes = 0, rcount = 0;
    for (size_t i = 0; i < r->ngroups; i++)
        if (same(r->groups[i].pool, pool)) {
            bytes += r->groups[i].bytes;
            count += r->groups[i].count;
        }
    for (size_t i = 0; i < r->nreclaimed; i++)
        if (same(r->reclaimed[i].pool, pool)) {
            rbytes += r->reclaimed[i].bytes;
            rcount += r->reclaimed[i].count;
        }
    char s1[GMG_SIZE_LEN], s2[GMG_SIZE_LEN];
    gmg_buf_printf(b, "Retained by pool ");
    gmg_buf_text_str(b, pool); /* an NVTX heap's name, the program's: no line of its own */
    gmg_buf_printf(b, " (not a leak): %s in %llu allocation%s", gmg_fmt_size(s1, sizeof s1, bytes + rbytes),
                   (unsigned long long)(count + rcount), count + rcount == 1 ? "" : "s");
    if (rcount)
        gmg_buf_printf(b, " (%s in %llu of them reclaimed by context teardown)", gmg_fmt_size(s1, sizeof s1, rbytes),
                       (unsigned long long)rcount);
    gmg_buf_printf(b, "\n");
    for (size_t i = 0; i < r->nheaps; i++) /* NVTX heaps of this pool: their regions are not retained */
        if (same(r->heapv[i].pool, pool) && gmg_heap_tracked(&r->heaps[i]))
            gmg_buf_printf(b, "  NVTX heap [%#llx, %#llx) on device %d: %s in registered regions, %s retained%s\n",
                           (unsigned long long)r->heaps[i].lo, (unsigned long long)(r->heaps[i].lo + r->heaps[i].size),
                           r->heaps[i].device, gmg_fmt_size(s1, sizeof s1, r->heaps[i].region_bytes),
                           gmg_fmt_size(s2, sizeof s2, r->heapv[i].retained),
                           r->heapv[i].first ? "" : " (its segment is counted with the heap registered over it first)");
    gmg_buf_printf(b, "\n");
    for (size_t i = 0; i < r->ngroups; i++)
        if (same(r->groups[i].pool, pool))
            gmg_report_text_group(r, b, &r->groups[i]);
    for (size_t i = 0; i < r->nreclaimed; i++)
        if (same(r->reclaimed[i].pool, pool))
            gmg_report_text_group(r, b, &r->reclaimed[i]);
}

void gmg_report_text_pools(const struct gmg_report *r, struct gmg_buf *b)
{
    for (size_t i = 0; i < r->ngroups; i++)
        if (r->groups[i].pool && first_of_pool(r, &r->groups[i]))
            pool_section(r, b, r->groups[i].pool);
    for (size_t i = 0; i < r->nreclaimed; i++)
        if (r->reclaimed[i].pool && first_of_pool(r, &r->reclaimed[i]))
            pool_section(r, b, r->reclaimed[i].pool);
    for (size_t i = 0; i < r->nmempools; i++) {
        const struct gmg_mempool_use *m = &r->mempools[i];
        char s1[GMG_SIZE_LEN], s2[GMG_SIZE_LEN], s3[GMG_SIZE_LEN];
        char where[64];
        if (m->memory == GMG_POOL_HOST_MEMORY)
            snprintf(where, sizeof where, "pinned host memory");
        else if (m->memory == GMG_POOL_MANAGED_MEMORY && m->device < 0)
            snprintf(where, sizeof where, "managed memory");
        else if (m->memory == GMG_POOL_MANAGED_MEMORY)
            snprintf(where, sizeof where, "managed memory, device %d preferred", m->device);
        else
            snprintf(where, sizeof where, "device %d", m->device);
        gmg_buf_printf(b, "Stream-ordered pool %#llx, %s: %s reserved, %s in use: %s retained by the pool "
                          "(release threshold %llu bytes)\n",
                       (unsigned long long)m->pool, where, gmg_fmt_size(s1, sizeof s1, m->reserved),
                       gmg_fmt_size(s2, sizeof s2, m->used),
                       gmg_fmt_size(s3, sizeof s3, m->reserved > m->used ? m->reserved - m->used : 0),
                       (unsigned long long)m->threshold);
        if (i + 1 == r->nmempools)
            gmg_buf_printf(b, "\n");
    }
    if (!r->nowners)
        return;
    gmg_buf_printf(b, "By owner (live and reclaimed allocations; retained: pools' segments):\n");
    for (size_t i = 0; i < r->nowners; i++) {
        const struct gmg_owner_sum *o = &r->owners[i];
        char s1[GMG_SIZE_LEN];
        size_t at = b->len;
        gmg_buf_printf(b, "  ");
        gmg_buf_text_str(b, o->owner);
        for (size_t w = b->len - at; w < 2 + 12; w++)
            gmg_buf_printf(b, " ");
        gmg_buf_printf(b, " %s in %llu allocation%s", gmg_fmt_size(s1, sizeof s1, o->bytes),
                       (unsigned long long)o->count, o->count == 1 ? "" : "s");
        if (o->retained_count)
            gmg_buf_printf(b, ", %s retained", gmg_fmt_size(s1, sizeof s1, o->retained_bytes));
        gmg_buf_printf(b, "\n");
    }
    gmg_buf_printf(b, "\n");
}

void gmg_report_json_owners(const struct gmg_report *r, struct gmg_buf *b)
{
    gmg_buf_printf(b, ",\n\"owners\":[");
    for (size_t i = 0; i < r->nowners; i++) {
        const struct gmg_owner_sum *o = &r->owners[i];
        gmg_buf_printf(b, "%s{\"owner\":", i ? "," : "");
        gmg_buf_json_str(b, o->owner);
        gmg_buf_printf(b, ",\"bytes\":%llu,\"count\":%llu,\"retained_bytes\":%llu,\"retained_count\":%llu}",
                       (unsigned long long)o->bytes, (unsigned long long)o->count,
                       (unsigned long long)o->retained_bytes, (unsigned long long)o->retained_count);
    }
    gmg_buf_printf(b, "],\n\"stream_pools\":[");
    for (size_t i = 0; i < r->nmempools; i++) {
        const struct gmg_mempool_use *m = &r->mempools[i];
        static const char *const memory[] = { "device", "host", "managed" };
        gmg_buf_printf(b, "%s{\"pool\":\"%#llx\",\"memory\":\"%s\",\"device\":%d,\"reserved_bytes\":%llu,"
                          "\"used_bytes\":%llu,\"retained_bytes\":%llu,\"release_threshold\":%llu}",
                       i ? "," : "", (unsigned long long)m->pool, memory[m->memory < 0 || m->memory > 2 ? 0 : m->memory],
                       m->device, (unsigned long long)m->reserved,
                       (unsigned long long)m->used,
                       (unsigned long long)(m->reserved > m->used ? m->reserved - m->used : 0),
                       (unsigned long long)m->threshold);
    }
    gmg_buf_printf(b, "],\n\"heaps\":[");
    for (size_t i = 0; i < r->nheaps; i++) {
        const struct gmg_heap_info *h = &r->heaps[i];
        gmg_buf_printf(b, "%s{\"pool\":", i ? "," : "");
        gmg_buf_json_str(b, r->heapv[i].pool);
        gmg_buf_printf(b, ",\"name\":");
        gmg_buf_json_str(b, h->name ? h->name : "NVTX heap");
        gmg_buf_printf(b, ",\"device\":%d,\"start\":\"%#llx\",\"size\":%llu,\"segment_bytes\":%llu,"
                          "\"region_bytes\":%llu,\"retained_bytes\":%llu}",
                       h->device, (unsigned long long)h->lo, (unsigned long long)h->size,
                       (unsigned long long)h->seg_size, (unsigned long long)h->region_bytes,
                       (unsigned long long)r->heapv[i].retained);
    }
    gmg_buf_printf(b, "]");
}
