/*
 * memviz.c - a snapshot in the shape of torch.cuda.memory._snapshot(), as
 * a pickle (protocol 2), that PyTorch's memory_viz opens:
 *
 *   {"segments": [{"device", "address", "total_size", "allocated_size",
 *                  "active_size", "requested_size", "stream", "segment_type",
 *                  "is_expandable", "segment_pool_id": (0, 0), "frames",
 *                  "blocks": [{"address", "size", "requested_size",
 *                              "state": "active_allocated", "frames"}]}],
 *    "device_traces": [[], ...],                       (one list per device)
 *    "allocator_settings": {}}
 *
 * A segment is one live allocation of the driver's allocator (the device
 * pointers fragmentation counts), by device and address, its size granted
 * (the request rounded up to 512 bytes). Its blocks tile it: the NVTX
 * regions a pool registered inside it (active_allocated, each with the
 * stack that registered it) and the room between them (inactive, no
 * frames); an allocation with no region is one block, itself; an NVTX
 * heap over mapped physical memory is a segment too, expandable. Frames
 * are {"filename", "line", "name"}, innermost first: the native frames,
 * then the Python ones. memory_viz's own reader (MemoryViz.js) knows only
 * some opcodes: this writes PROTO 2, EMPTY_DICT, EMPTY_LIST, MARK,
 * SETITEMS, APPENDS, BINUNICODE, BININT1, BININT2, BININT, LONG1, NEWTRUE,
 * NEWFALSE, TUPLE2, LONG_BINPUT and LONG_BINGET (a stack's frames are
 * written once and fetched from the memo after), and never the
 * "category" key. No history is recorded, so device_traces are empty.
 */
#define _GNU_SOURCE /* qsort_r */
#include "report/report.h"

#include "core/pyframes.h"
#include "core/stacks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GRANULARITY 512u

static void op(struct gmg_buf *b, unsigned char c) { gmg_buf_put(b, (const char *)&c, 1); }

static void u32(struct gmg_buf *b, uint32_t v)
{
    unsigned char x[4] = { (unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16), (unsigned char)(v >> 24) };
    gmg_buf_put(b, (const char *)x, 4);
}

static void integer(struct gmg_buf *b, uint64_t v)
{
    if (v < 256) {
        op(b, 'K'); /* BININT1 */
        op(b, (unsigned char)v);
    } else if (v < 65536) {
        op(b, 'M'); /* BININT2 */
        op(b, (unsigned char)v);
        op(b, (unsigned char)(v >> 8));
    } else if (v < 0x80000000u) {
        op(b, 'J'); /* BININT */
        u32(b, (uint32_t)v);
    } else {   /* LONG1: little-endian two's complement, a sign byte when the top bit is set */
        unsigned char x[9];
        int n = 0;
        for (uint64_t t = v; t; t >>= 8)
            x[n++] = (unsigned char)t;
        if (x[n - 1] & 0x80)
            x[n++] = 0;
        op(b, 0x8a);
        op(b, (unsigned char)n);
        gmg_buf_put(b, (const char *)x, (size_t)n);
    }
}

/* BINUNICODE: UTF-8, a byte of no well-formed sequence as U+FFFD. */
static void str(struct gmg_buf *b, const char *s)
{
    if (!s)
        s = "??";
    size_t n = 0;
    for (const char *p = s; *p;) {
        size_t k = gmg_utf8_seq(p);
        n += k ? k : 3;
        p += k ? k : 1;
    }
    op(b, 'X');
    u32(b, (uint32_t)n);
    for (const char *p = s; *p;) {
        size_t k = gmg_utf8_seq(p);
        gmg_buf_put(b, k ? p : "\xef\xbf\xbd", k ? k : 3);
        p += k ? k : 1;
    }
}

static void key(struct gmg_buf *b, const char *k) { str(b, k); }

static void frame(struct gmg_buf *b, const struct gmg_frame_info *fi)
{
    char name[1200];
    op(b, '}');
    op(b, '(');
    key(b, "filename");
    str(b, fi->file ? fi->file : fi->module ? fi->module : "??");
    key(b, "line");
    integer(b, fi->file && fi->line > 0 ? (uint64_t)fi->line : 0);
    key(b, "name");
    if (fi->function || fi->python) {
        str(b, fi->function);
    } else {
        snprintf(name, sizeof name, "%s+%#lx", fi->module ? fi->module : "??", (unsigned long)fi->offset);
        str(b, name);
    }
    op(b, 'u');
}

/* Frames of a stack: the native ones, then the Python ones, each
 * innermost first (the depot keeps the Python frames first). */
static void frames_of(const struct gmg_report *r, struct gmg_buf *b, uint32_t stack)
{
    const struct gmg_stack *s = gmg_stack_get(stack);
    op(b, ']');
    if (!s || !s->depth)
        return;
    uint32_t np = 0;
    while (np < s->depth && gmg_is_pyframe(s->frames[np]))
        np++;
    op(b, '(');
    for (int pass = 0; pass < 2; pass++)
        for (uint32_t i = pass ? 0 : np; i < (pass ? np : s->depth); i++) {
            if (gmg_stack_is_internal(s->frames[i]))
                continue;
            struct gmg_frame_info fi;
            gmg_symbolize(r->sym, s->frames[i], gmg_stack_module(s, i), &fi);
            frame(b, &fi);
        }
    op(b, 'e');
}

/* Stacks whose frames are in the memo already: open addressing. */
struct seen { uint32_t *v; size_t cap; };

static int seen_add(struct seen *s, uint32_t stack)
{
    uint32_t k = stack + 1; /* 0: an empty slot */
    for (size_t i = (k * 2654435761u) & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
        if (s->v[i] == k)
            return 1;
        if (!s->v[i]) {
            s->v[i] = k;
            return 0;
        }
    }
}

/* A stack's frames, or the memo's copy after the first time (LONG_BINPUT:
 * the memo's key is the stack's id). */
static void frames_memo(const struct gmg_report *r, struct gmg_buf *b, struct seen *seen, uint32_t stack)
{
    if (seen_add(seen, stack)) {
        op(b, 'j'); /* LONG_BINGET */
        u32(b, stack);
    } else {
        frames_of(r, b, stack);
        op(b, 'r');
        u32(b, stack);
    }
}

/* One block: an allocation or region (active_allocated, its stack's
 * frames) or the room between regions (inactive, no frames). */
static void block(const struct gmg_report *r, struct gmg_buf *b, struct seen *seen, uint64_t addr, uint64_t size,
                  uint64_t requested, const struct gmg_live *owner)
{
    op(b, '}');
    op(b, '(');
    key(b, "address");
    integer(b, addr);
    key(b, "size");
    integer(b, size);
    key(b, "requested_size");
    integer(b, requested);
    key(b, "state");
    str(b, owner ? "active_allocated" : "inactive");
    key(b, "frames");
    if (owner)
        frames_memo(r, b, seen, owner->stack);
    else
        op(b, ']');
    op(b, 'u');
}

static uint64_t granted_of(uint64_t size)
{
    uint64_t g = (size + GRANULARITY - 1) / GRANULARITY * GRANULARITY;
    return g ? g : GRANULARITY;
}

static int is_region(const struct gmg_live *a) { return a->family == GMG_FAM_NVTX_REGION; }

/* By device, then address; at one address a segment before its regions. */
static int by_place(const void *x, const void *y, void *arg)
{
    const struct gmg_live *v = arg, *a = &v[*(const size_t *)x], *c = &v[*(const size_t *)y];
    if (a->device != c->device)
        return a->device < c->device ? -1 : 1;
    if (a->addr != c->addr)
        return a->addr < c->addr ? -1 : 1;
    return is_region(a) - is_region(c);
}

/* A segment: a live allocation of the driver's allocator. Its blocks tile
 * it: the NVTX regions registered inside it (`reg`, by address), each
 * with the stack that registered it, and the room between them; an
 * allocation without regions is one block, unless an NVTX heap lies over
 * it (`pooled`): then its room is inactive, as a pool's cached segment. */
static void segment(const struct gmg_report *r, struct gmg_buf *b, struct seen *seen, const struct gmg_live *a,
                    const struct gmg_live *const *reg, size_t nreg, int pooled)
{
    uint64_t granted = granted_of(a->size), active = 0;
    for (size_t k = 0; k < nreg; k++)
        active += reg[k]->size;
    if (!nreg && !pooled)
        active = granted;
    op(b, '}');
    op(b, '(');
    key(b, "device");
    integer(b, (uint64_t)a->device);
    key(b, "address");
    integer(b, a->addr);
    key(b, "total_size");
    integer(b, granted);
    key(b, "allocated_size");
    integer(b, active);
    key(b, "active_size");
    integer(b, active);
    key(b, "requested_size");
    integer(b, a->requested);
    key(b, "stream");
    integer(b, 0);
    key(b, "segment_type");
    str(b, granted < (1u << 20) ? "small" : "large");
    key(b, "is_expandable");
    op(b, a->family == GMG_FAM_VMM ? 0x88 : 0x89); /* NEWTRUE: mapped physical memory, as expandable segments */
    key(b, "segment_pool_id");
    integer(b, 0);
    integer(b, 0);
    op(b, 0x86); /* TUPLE2: (0, 0), the default pool's, as torch writes it */
    key(b, "frames");
    frames_memo(r, b, seen, a->stack);
    key(b, "blocks");
    op(b, ']');
    op(b, '(');
    if (!nreg && !pooled) {
        block(r, b, seen, a->addr, granted, a->requested, a);
    } else { /* a pool's segment: its regions and the room between them (all of it, when none) */
        uint64_t at = a->addr;
        for (size_t k = 0; k < nreg; k++) {
            if (reg[k]->addr > at)
                block(r, b, seen, at, reg[k]->addr - at, 0, NULL);
            block(r, b, seen, reg[k]->addr, reg[k]->size, reg[k]->size, reg[k]);
            at = reg[k]->addr + reg[k]->size;
        }
        if (at < a->addr + granted)
            block(r, b, seen, at, a->addr + granted - at, 0, NULL);
    }
    op(b, 'e');
    op(b, 'u');
}

static int by_key(const void *x, const void *y)
{
    const struct gmg_live *a = x, *c = y;
    if (a->device != c->device)
        return a->device < c->device ? -1 : 1;
    return a->addr < c->addr ? -1 : a->addr > c->addr;
}

/* An NVTX heap over mapped physical memory (cuMemCreate + cuMemMap, as
 * PyTorch's expandable segments): a segment at the heap's address, its
 * physical allocation's size, since no device pointer of the driver's
 * allocator stands for it. */
static int heap_segment(const struct gmg_report *r, size_t k, struct gmg_live *out)
{
    const struct gmg_heap_info *h = &r->heaps[k];
    if (!r->heapv[k].first || h->seg_family != GMG_FAM_VMM || h->device < 0)
        return 0;
    *out = (struct gmg_live){ h->lo, h->seg_size, h->seg_size, h->seg_stack, (int8_t)h->device, GMG_FAM_VMM };
    return 1;
}

void gmg_report_memviz(const struct gmg_report *r, struct gmg_buf *b)
{
    size_t nheap = 0;
    struct gmg_live one;
    for (size_t k = 0; k < r->nheaps; k++)
        nheap += heap_segment(r, k, &one);
    size_t n = r->nallocs + nheap; /* the allocations, then the heaps' segments */
    struct gmg_live *all = n ? malloc(n * sizeof *all) : NULL;
    size_t cap = 64;
    while (cap < 2 * (r->ngroups + n + 1))
        cap *= 2;
    struct seen seen = { calloc(cap, sizeof(uint32_t)), cap };
    size_t *order = n ? malloc(n * sizeof *order) : NULL;
    const struct gmg_live **reg = n ? malloc(n * sizeof *reg) : NULL;
    char *placed = n ? calloc(n, 1) : NULL;
    if (!seen.v || (n && (!all || !order || !reg || !placed))) {
        free(all);
        free(seen.v);
        free(order);
        free(reg);
        free(placed);
        b->failed = 1;
        return;
    }
    if (r->nallocs)
        memcpy(all, r->allocs, r->nallocs * sizeof *all);
    for (size_t k = 0, m = r->nallocs; k < r->nheaps; k++)
        m += heap_segment(r, k, &all[m]);
    /* the allocations NVTX heaps lie over (by device and address), sorted */
    size_t nseg = 0;
    struct gmg_live *segs = r->nheaps ? malloc(r->nheaps * sizeof *segs) : NULL;
    for (size_t k = 0; segs && k < r->nheaps; k++)
        if (r->heapv[k].first && r->heaps[k].seg_family != GMG_FAM_VMM)
            segs[nseg++] = (struct gmg_live){ .addr = r->heaps[k].seg_value, .device = (int8_t)r->heaps[k].device };
    if (nseg > 1)
        qsort(segs, nseg, sizeof *segs, by_key);
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    if (n > 1)
        qsort_r(order, n, sizeof *order, by_place, (void *)all);
    op(b, 0x80);
    op(b, 2); /* PROTO 2 */
    op(b, '}');
    op(b, '(');
    key(b, "segments");
    op(b, ']');
    if (n)
        op(b, '(');
    /* each allocation with the regions that lie in it, one after another
     * (a region overlapping the one before it, or outside every
     * allocation, is a segment of its own, in its place: every allocation
     * that could hold it comes before it in this order) */
    for (size_t i = 0; i < n; i++) {
        const struct gmg_live *a = &all[order[i]];
        if (is_region(a)) {
            if (!placed[order[i]])
                segment(r, b, &seen, a, NULL, 0, 0);
            continue;
        }
        int pooled = order[i] >= r->nallocs || (nseg && bsearch(a, segs, nseg, sizeof *segs, by_key));
        size_t nreg = 0;
        uint64_t at = a->addr, end = a->addr + granted_of(a->size);
        for (size_t j = i + 1; j < n; j++) {
            const struct gmg_live *g = &all[order[j]];
            if (g->device != a->device || g->addr >= end)
                break;
            if (!is_region(g) || placed[order[j]] || g->addr < at || g->size > end - g->addr)
                continue;
            reg[nreg++] = g;
            placed[order[j]] = 1;
            at = g->addr + g->size;
        }
        segment(r, b, &seen, a, reg, nreg, pooled);
    }
    if (n)
        op(b, 'e');
    key(b, "device_traces");
    op(b, ']');
    if (r->ndev > 0) {
        op(b, '(');
        for (int d = 0; d < r->ndev; d++)
            op(b, ']');
        op(b, 'e');
    }
    key(b, "allocator_settings"); /* torch's caching allocator's: none here */
    op(b, '}');
    op(b, 'u');
    op(b, '.');
    free(all);
    free(segs);
    free(seen.v);
    free(order);
    free(reg);
    free(placed);
}
