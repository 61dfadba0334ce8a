/*
 * nvtx.c - the guard as an NVTX injection library (hooks layer): the NVTX
 * memory API (nvtx3/nvToolsExtMem.h) through which sub-allocators describe
 * what they hand out inside their segments, as compute-sanitizer reads it.
 *
 * A program's NVTX calls reach a tool only through an injection library
 * named by NVTX_INJECTION64_PATH (the gpumemguard command sets it to this
 * library unless the user did): NVTX loads it and calls
 * InitializeInjectionNvtx2 (the core API: accepted, nothing hooked) and,
 * at the first call of the memory API, InitializeInjectionNvtxExtension,
 * where the memory module's function slots are filled with the handlers
 * below.
 *   nvtxMemHeapRegister      a heap (NVTX_MEM_TYPE_VIRTUAL_ADDRESS) over
 *                            memory the guard tracks (an allocation, or a
 *                            cuMemMap mapping: its physical handle): its
 *                            segment becomes a pool's (core/heaps.h;
 *                            reports mark it). Its handle is its address,
 *                            as NVTX has it; the latest registered heap at
 *                            an address is that address's
 *   nvtxMemRegionsRegister   each region a record of its own (family
 *                            nvtxMemRegionsRegister, the registering call's
 *                            stack and Python frames, its heap in the
 *                            record's ninth word), never counted against
 *                            the quota: its segment is
 *   nvtxMemRegionsUnregister, nvtxMemRegionsResize, nvtxMemHeapReset (all
 *   of a heap's regions, or every heap's for the process-wide handle),
 *   nvtxMemHeapUnregister (its regions go with it), nvtxMemRegionsName
 *   (accepted; names are not kept)
 * A region still registered at exit is a leak. A region outside its heap
 * (registered, or resized, past it), an unknown heap or region (a double unregister) and a descriptor that
 * does not parse each get one warning for the run, and are ignored: never
 * a crash, never a guess. Under GPUMEM_POOLS=off the memory module is not
 * attached (every allocation is then counted as compute-sanitizer counts).
 */
#define _GNU_SOURCE
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExtMem.h>

#include "base/buf.h"
#include "base/config.h"
#include "base/export.h"
#include "base/log.h"
#include "core/heaps.h"
#include "core/stacks.h"
#include "core/track.h"
#include "core/upcalls.h"
#include "hooks/devfacts.h"
#include "hooks/intercept.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#define MAX_BATCH ((size_t)1 << 28)

enum { W_DESC, W_HEAP, W_OUTSIDE, W_HEAP_PAST, W_RESIZED_OUT, W_UNKNOWN, W_UNTRACKED, W_NESTED, W_KINDS };
static int warned[W_KINDS];

__attribute__((noinline, cold)) static void warn(int kind, const char *what)
{
    if (__atomic_exchange_n(&warned[kind], 1, __ATOMIC_RELAXED))
        return;
    gmg_error("NVTX memory API: %s (said once; later ones are ignored as this one)", what);
}

/* Copy n bytes the program handed us, or fail (0) where they cannot be
 * read: a heap's descriptor is read this way, so that a garbage pointer is
 * a warning, not a crash (a syscall, for the rare heap calls only). */
static int safe_copy(void *dst, const void *src, size_t n)
{
    if (!src)
        return 0;
    struct iovec local = { dst, n }, remote = { (void *)(uintptr_t)src, n };
    return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)n;
}

static int compat_ok(uint16_t id)
{
    return (id >> 8) == (NVTX_EXT_COMPATID_MEM >> 8) && id >= 0x0101; /* the v1 layouts */
}

/* The heap's name from its NVTX message: ASCII only (a registered string
 * or a wide one is not read); its first 63 bytes, never half a UTF-8
 * character. */
static const char *heap_name(const nvtxMemHeapDesc_t *d)
{
    char name[64];
    if (d->structSize < offsetof(nvtxMemHeapDesc_t, message) + sizeof d->message ||
        d->messageType != NVTX_MESSAGE_TYPE_ASCII || !d->message.ascii)
        return NULL;
    size_t n = 0; /* byte by byte: the string may end just before an unmapped page */
    while (n < sizeof name - 1 && safe_copy(&name[n], d->message.ascii + n, 1) && name[n])
        n++;
    n = gmg_utf8_cut(name, n);
    name[n] = 0;
    return n ? gmg_heap_name(name, sizeof name - 1) : NULL;
}

/* A cuMemMap mapping holding address p: its record, by its start (p, or
 * the range the driver names), else by a walk of the table (heaps are few). */
struct covering { uint64_t p; struct gmg_alloc *out; uint64_t handle; int found; };

static void cover(const struct gmg_alloc *a, int fresh, void *arg)
{
    (void)fresh;
    struct covering *c = arg;
    if (!c->found && a->space == GMG_SPACE_MAP && c->p - a->value < a->size && a->has_aux) {
        *c->out = *a;
        c->handle = a->aux[0];
        c->found = 1;
    }
}

static int mapping_of(uint64_t p, struct gmg_alloc *map, uint64_t *handle)
{
    uint64_t base, bsize;
    if (gmg_track_lookup(GMG_SPACE_MAP, p, map, handle))
        return 1;
    if (gmg_dev_address_range(p, &base, &bsize) == 0 && gmg_track_lookup(GMG_SPACE_MAP, base, map, handle) &&
        p - base < map->size)
        return 1;
    struct covering c = { p, map, 0, 0 };
    gmg_track_walk(0, cover, &c);
    *handle = c.handle;
    return c.found;
}

/* The tracked allocation a heap at lo lies in: a linear one (often the
 * heap is that allocation exactly, or else the driver names its base), or
 * the physical handle of the cuMemMap mapping that holds lo; *end: where
 * that allocation, or mapping, ends. */
static int segment_of(uint64_t lo, struct gmg_alloc *a, uint64_t *end)
{
    uint64_t base = lo, bsize = 0, handle = 0;
    if (gmg_track_lookup(GMG_SPACE_DEVPTR, lo, a, NULL) ||
        (gmg_dev_address_range(lo, &base, &bsize) == 0 && gmg_track_lookup(GMG_SPACE_DEVPTR, base, a, NULL))) {
        *end = a->value + a->size;
        return 1;
    }
    struct gmg_alloc map;
    if (!mapping_of(lo, &map, &handle) || !handle || !gmg_track_lookup(GMG_SPACE_VMM, handle, a, NULL))
        return 0;
    *end = map.value + map.size; /* the mapping's end: a heap past it spans other mappings */
    return 1;
}

/* The heap a program names: by its address (what nvtxMemHeapRegister
 * returned), its internal handle in *id. */
static int heap_named(nvtxMemHeapHandle_t heap, uintptr_t *id, struct gmg_heap_info *h)
{
    if (heap == NVTX_MEM_HEAP_HANDLE_PROCESS_WIDE || heap == NVTX_MEM_HEAP_HANDLE_NO_TOOL)
        return 0;
    *id = gmg_heap_at((uint64_t)(uintptr_t)heap, h);
    return *id != 0;
}

static nvtxMemHeapHandle_t heap_register(nvtxDomainHandle_t domain, nvtxMemHeapDesc_t const *desc)
{
    (void)domain;
    nvtxMemHeapDesc_t copy;
    nvtxMemVirtualRangeDesc_t rcopy;
    memset(&copy, 0, sizeof copy);
    /* the fields up to typeSpecificDesc first, then as many as it says it has */
    int readable = safe_copy(&copy, desc, offsetof(nvtxMemHeapDesc_t, category));
    if (readable && copy.structSize > offsetof(nvtxMemHeapDesc_t, category))
        readable = safe_copy(&copy, desc, copy.structSize < sizeof copy ? copy.structSize : sizeof copy);
    const nvtxMemHeapDesc_t *d = readable ? &copy : NULL;
    if (d && d->typeSpecificDescSize >= sizeof rcopy && safe_copy(&rcopy, d->typeSpecificDesc, sizeof rcopy))
        copy.typeSpecificDesc = &rcopy;
    else if (d)
        copy.typeSpecificDesc = NULL;
    if (!d || !compat_ok(d->extCompatID) || d->structSize < offsetof(nvtxMemHeapDesc_t, category) ||
        d->type != NVTX_MEM_TYPE_VIRTUAL_ADDRESS || !d->typeSpecificDesc ||
        d->typeSpecificDescSize < sizeof(nvtxMemVirtualRangeDesc_t) ||
        (d->usage != NVTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR && d->usage != NVTX_MEM_HEAP_USAGE_TYPE_LAYOUT)) {
        warn(W_DESC, "nvtxMemHeapRegister with a descriptor that is not a virtual-address heap of the v1 layout");
        return NVTX_MEM_HEAP_HANDLE_NO_TOOL;
    }
    const nvtxMemVirtualRangeDesc_t *range = d->typeSpecificDesc;
    uint64_t lo = (uint64_t)(uintptr_t)range->ptr, size = range->size;
    if (!lo || !size || lo + size < lo) {
        warn(W_DESC, "nvtxMemHeapRegister of an empty, null or wrapping range");
        return NVTX_MEM_HEAP_HANDLE_NO_TOOL;
    }
    struct gmg_heap_info h;
    memset(&h, 0, sizeof h);
    h.lo = lo;
    h.size = size;
    h.seg_family = -1;
    h.name = heap_name(d);
    /* its segment: the tracked allocation it lies in */
    struct gmg_alloc a;
    uint64_t end = 0;
    if (segment_of(lo, &a, &end)) {
        h.device = a.device;
        h.ctx = a.ctx;
        h.seg_stack = a.stack;
        h.seg_family = a.family;
        h.seg_size = a.size;
        h.seg_value = a.value;
        h.seg_seq = a.seq;
        if (lo + size > end)
            warn(W_HEAP_PAST, "a heap reaches past the allocation (or mapping) it starts in: that one is its "
                            "pool's segment, what lies beyond it is not");
    } else {
        h.device = gmg_current_device(&h.ctx);
        warn(W_UNTRACKED, "a heap over memory the guard does not track (not from a driver allocation it saw): its "
                          "regions are tracked, no segment is marked as its pool's");
    }
    if (!gmg_heap_add(&h)) {
        gmg_error("NVTX memory API: out of memory for a heap: its regions are not tracked");
        return NVTX_MEM_HEAP_HANDLE_NO_TOOL;
    }
    return (nvtxMemHeapHandle_t)(uintptr_t)lo; /* the heap's address is its handle */
}

/* Heaps nest: a pool hands a block (a region of its heap) to another
 * sub-allocator, which registers a heap over it and regions in it. A region
 * of the inner heap at the block's address has the block's key: the block
 * then waits under it (GMG_SPACE_NVTX_UNDER), still registered and counted
 * in its heap, and comes back when the inner region goes (unregistered,
 * its heap reset or unregistered). An unregister of that address takes the
 * innermost region, the one registered last. `under_live` counts the
 * regions waiting so (a hint: one reclaimed with its context is still
 * counted), so that an unregister looks under only when some may be. */
static unsigned long under_live;

/* A region's record from what the table gave back of it. */
static void record_of(const struct gmg_gone *g, enum gmg_space space, uint32_t ctx, struct gmg_alloc *t)
{
    memset(t, 0, offsetof(struct gmg_alloc, hh));
    t->value = g->value;
    t->space = (uint8_t)space;
    t->size = g->size;
    t->ctx = ctx;
    t->stack = g->stack;
    t->device = (int8_t)g->device;
    t->family = GMG_FAM_NVTX_REGION;
    t->has_aux = 1;
}

/* Does region r (of another heap than id) hold heap h whole? */
static int holds_heap(const struct gmg_gone *r, const struct gmg_heap_info *h, uintptr_t id)
{
    return r->aux != id && h->lo >= r->value && h->lo - r->value < r->size &&
           h->size <= r->size - (h->lo - r->value);
}

/* An outer heap's region, taken out by an inner heap's region at its
 * address: under it. */
static void push_under(const struct gmg_gone *outer, uint32_t ctx_hint)
{
    struct gmg_heap_info oh;
    struct gmg_alloc u;
    record_of(outer, GMG_SPACE_NVTX_UNDER, gmg_heap_get(outer->aux, &oh) ? oh.ctx : ctx_hint, &u);
    struct gmg_gone older;
    int under = gmg_track_insert(&u, outer->aux, &older);
    if (under == 0)
        __atomic_add_fetch(&under_live, 1, __ATOMIC_RELAXED);
    if (under == 1 || under == GMG_INSERT_FAILED_STALE) { /* a third heap at one address: the oldest goes */
        gmg_heap_regions_add(older.aux, -(int64_t)older.size);
        warn(W_NESTED, "regions of more than two nested heaps at one address: the outermost one is dropped");
        if (under == GMG_INSERT_FAILED_STALE)
            __atomic_sub_fetch(&under_live, 1, __ATOMIC_RELAXED);
    }
    if (under < 0) /* out of memory: the outer region is lost, its bytes with it */
        gmg_heap_regions_add(outer->aux, -(int64_t)outer->size);
}

/* Region t of heap id (h) into the table; `add`: its bytes are new to its
 * heap (a registration), else already counted there (a region moved back). */
static void region_put(struct gmg_alloc *t, uintptr_t id, const struct gmg_heap_info *h, int add)
{
    struct gmg_gone stale;
    int got = gmg_track_insert(t, id, &stale);
    if (got >= 0 && add)
        gmg_heap_regions_add(id, (int64_t)t->size);
    if (got < 0 && !add)
        gmg_heap_regions_add(id, -(int64_t)t->size);
    if (got == 1 && holds_heap(&stale, h, id)) {
        push_under(&stale, h->ctx); /* the region of an outer heap that this region's heap lies in */
        return;
    }
    if (got == 1 || got == GMG_INSERT_FAILED_STALE) { /* registered again without an unregister */
        gmg_heap_regions_add(stale.aux, -(int64_t)stale.size);
        warn(W_UNKNOWN, "a region registered again without being unregistered: the newer one is kept");
    }
}

/* The region at ptr went: one it covered comes back. A region registered
 * at ptr meanwhile is an inner one: it stays on top, this one under it. */
static void region_back(uint64_t ptr)
{
    struct gmg_gone g;
    if (!__atomic_load_n(&under_live, __ATOMIC_RELAXED) || !gmg_track_remove(GMG_SPACE_NVTX_UNDER, ptr, &g))
        return;
    __atomic_sub_fetch(&under_live, 1, __ATOMIC_RELAXED);
    struct gmg_heap_info h;
    struct gmg_alloc a;
    record_of(&g, GMG_SPACE_NVTX, gmg_heap_get(g.aux, &h) ? h.ctx : 0, &a);
    struct gmg_gone stale;
    int got = gmg_track_insert(&a, g.aux, &stale);
    if (got < 0) /* out of memory: lost, its bytes with it */
        gmg_heap_regions_add(g.aux, -(int64_t)g.size);
    struct gmg_heap_info sh;
    if (got == 1 && gmg_heap_get(stale.aux, &sh)) {
        struct gmg_alloc t;
        record_of(&stale, GMG_SPACE_NVTX, sh.ctx, &t);
        region_put(&t, stale.aux, &sh, 0);
    } else if (got == 1 || got == GMG_INSERT_FAILED_STALE) {
        gmg_heap_regions_add(stale.aux, -(int64_t)stale.size);
    }
}

/* A region taken out with its heap: one it covered comes back. */
static void drop_region(const struct gmg_gone *g, void *arg)
{
    (void)arg;
    region_back(g->value);
}

/* A region taken out with every other: nothing comes back. */
static void drop_only(const struct gmg_gone *g, void *arg)
{
    (void)g;
    (void)arg;
}

/* Take out the regions waiting under others in the heap's range (of heap
 * *aux only, or of any heap). */
static void under_clear(const struct gmg_heap_info *h, const uint64_t *aux)
{
    size_t n = gmg_track_remove_range(GMG_SPACE_NVTX_UNDER, h->lo, h->size, aux, drop_only, NULL);
    if (n)
        __atomic_sub_fetch(&under_live, n, __ATOMIC_RELAXED);
}

static void heap_clear(const struct gmg_heap_info *h, uintptr_t id)
{
    uint64_t mine = id; /* its own regions: another heap over the same bytes keeps its */
    under_clear(h, &mine);
    gmg_track_remove_range(GMG_SPACE_NVTX, h->lo, h->size, &mine, drop_region, NULL);
}

struct ranges {
    struct gmg_heap_info *v;
    size_t n, cap;
};

static void collect(const struct gmg_heap_info *h, void *arg)
{
    struct ranges *r = arg;
    if (r->n < r->cap)
        r->v[r->n++] = *h;
}

static void region_drop_any(const struct gmg_heap_info *h)
{
    under_clear(h, NULL);
    gmg_track_remove_range(GMG_SPACE_NVTX, h->lo, h->size, NULL, drop_only, NULL);
}

static void heap_reset(nvtxDomainHandle_t domain, nvtxMemHeapHandle_t heap)
{
    (void)domain;
    if (heap == NVTX_MEM_HEAP_HANDLE_PROCESS_WIDE) { /* every heap's regions */
        struct ranges r = { 0 };
        r.cap = gmg_heaps_live() + 16;
        if (!(r.v = calloc(r.cap, sizeof *r.v)))
            return;
        gmg_heaps_each(collect, &r);
        for (size_t i = 0; i < r.n; i++)
            region_drop_any(&r.v[i]);
        free(r.v);
        gmg_heap_regions_clear(0);
        return;
    }
    struct gmg_heap_info h;
    uintptr_t id;
    if (!heap_named(heap, &id, &h)) {
        warn(W_HEAP, "nvtxMemHeapReset of a heap that is not registered");
        return;
    }
    heap_clear(&h, id);
    gmg_heap_regions_clear(id);
}

static void heap_unregister(nvtxDomainHandle_t domain, nvtxMemHeapHandle_t heap)
{
    (void)domain;
    struct gmg_heap_info h;
    uintptr_t id;
    if (!heap_named(heap, &id, &h)) {
        warn(W_HEAP, "nvtxMemHeapUnregister of a heap that is not registered (twice, or never)");
        return;
    }
    heap_clear(&h, id); /* its regions go with it */
    gmg_heap_remove(id);
}

/* A region of the heap `id` (h), recorded with that heap in its ninth word. */
static void region_insert(uint64_t ptr, uint64_t size, uint32_t stack, const struct gmg_heap_info *h, uintptr_t id)
{
    struct gmg_alloc t;
    memset(&t, 0, offsetof(struct gmg_alloc, hh));
    t.value = ptr;
    t.space = GMG_SPACE_NVTX;
    t.size = size;
    t.ctx = h->ctx;
    t.stack = stack;
    t.device = (int8_t)(h->device >= -1 && h->device <= INT8_MAX ? h->device : -1);
    t.family = GMG_FAM_NVTX_REGION;
    t.has_aux = 1;
    region_put(&t, id, h, 1);
}

static void regions_register(nvtxDomainHandle_t domain, nvtxMemRegionsRegisterBatch_t const *b)
{
    (void)domain;
    if (!b || !compat_ok(b->extCompatID) || b->structSize < offsetof(nvtxMemRegionsRegisterBatch_t, regionHandleElementsOut) ||
        b->regionType != NVTX_MEM_TYPE_VIRTUAL_ADDRESS || b->regionCount > MAX_BATCH ||
        (b->regionCount && (!b->regionDescElements || b->regionDescElementSize < sizeof(nvtxMemVirtualRangeDesc_t)))) {
        warn(W_DESC, "nvtxMemRegionsRegister with a batch that is not virtual-address regions of the v1 layout");
        return;
    }
    struct gmg_heap_info h;
    uintptr_t id;
    if (!heap_named(b->heap, &id, &h)) {
        warn(W_HEAP, "nvtxMemRegionsRegister in a heap that is not registered (regions outside any heap are not "
                     "tracked)");
        return;
    }
    int want_out = b->structSize >= sizeof(nvtxMemRegionsRegisterBatch_t) && b->regionHandleElementsOut;
    uint32_t stack = b->regionCount ? gmg_stack_capture() : 0; /* one stack for the batch */
    const char *p = b->regionDescElements;
    for (size_t i = 0; i < b->regionCount; i++, p += b->regionDescElementSize) {
        const nvtxMemVirtualRangeDesc_t *r = (const nvtxMemVirtualRangeDesc_t *)(const void *)p;
        uint64_t ptr = (uint64_t)(uintptr_t)r->ptr;
        if (want_out)
            b->regionHandleElementsOut[i] = (nvtxMemRegionHandle_t)(uintptr_t)ptr; /* a handle is its address */
        uintptr_t rid = id;
        struct gmg_heap_info rh = h;
        if (ptr < h.lo || r->size > h.size || ptr - h.lo > h.size - r->size) {
            /* another heap at the same address (the handle names the latest) may hold it */
            rid = gmg_heap_at_holding(h.lo, ptr, r->size);
            if (!rid || !gmg_heap_get(rid, &rh)) {
                warn(W_OUTSIDE, "a region outside its heap: not tracked");
                continue;
            }
        }
        region_insert(ptr, r->size, stack, &rh, rid);
    }
}

static void regions_unregister(nvtxDomainHandle_t domain, nvtxMemRegionsUnregisterBatch_t const *b)
{
    (void)domain;
    if (!b || !compat_ok(b->extCompatID) || b->structSize < sizeof(nvtxMemRegionsUnregisterBatch_t) ||
        (b->refType != NVTX_MEM_REGION_REF_TYPE_POINTER && b->refType != NVTX_MEM_REGION_REF_TYPE_HANDLE) ||
        b->refCount > MAX_BATCH ||
        (b->refCount && (!b->refElements || b->refElementSize < sizeof(nvtxMemRegionRef_t)))) {
        warn(W_DESC, "nvtxMemRegionsUnregister with a batch that does not parse");
        return;
    }
    const char *p = (const char *)b->refElements;
    for (size_t i = 0; i < b->refCount; i++, p += b->refElementSize) {
        const nvtxMemRegionRef_t *ref = (const nvtxMemRegionRef_t *)(const void *)p;
        uint64_t v = b->refType == NVTX_MEM_REGION_REF_TYPE_POINTER ? (uint64_t)(uintptr_t)ref->pointer
                                                                     : (uint64_t)(uintptr_t)ref->handle;
        struct gmg_gone g;
        if (!v || !gmg_track_remove(GMG_SPACE_NVTX, v, &g)) {
            warn(W_UNKNOWN, "nvtxMemRegionsUnregister of a region that is not registered (twice, or never)");
            continue;
        }
        gmg_heap_regions_add(g.aux, -(int64_t)g.size); /* its own heap's */
        region_back(v);
    }
}

/* A resize, as an unregister, takes the innermost region at the address
 * (a block covered by an inner heap's region there is not resized). */
static void regions_resize(nvtxDomainHandle_t domain, nvtxMemRegionsResizeBatch_t const *b)
{
    (void)domain;
    if (!b || !compat_ok(b->extCompatID) || b->structSize < sizeof(nvtxMemRegionsResizeBatch_t) ||
        b->regionType != NVTX_MEM_TYPE_VIRTUAL_ADDRESS || b->regionDescCount > MAX_BATCH ||
        (b->regionDescCount && (!b->regionDescElements || b->regionDescElementSize < sizeof(nvtxMemVirtualRangeDesc_t)))) {
        warn(W_DESC, "nvtxMemRegionsResize with a batch that does not parse");
        return;
    }
    const char *p = b->regionDescElements;
    for (size_t i = 0; i < b->regionDescCount; i++, p += b->regionDescElementSize) {
        const nvtxMemVirtualRangeDesc_t *r = (const nvtxMemVirtualRangeDesc_t *)(const void *)p;
        uint64_t ptr = (uint64_t)(uintptr_t)r->ptr;
        struct gmg_alloc a;
        struct gmg_gone g;
        uint64_t id = 0;
        if (!ptr || !gmg_track_lookup(GMG_SPACE_NVTX, ptr, &a, &id)) {
            warn(W_UNKNOWN, "nvtxMemRegionsResize of a region that is not registered");
            continue;
        }
        struct gmg_heap_info h;
        if (gmg_heap_get(id, &h) && (r->size > h.size || ptr - h.lo > h.size - r->size)) {
            warn(W_RESIZED_OUT, "a region resized past the end of its heap: it keeps its size");
            continue;
        }
        if (!gmg_track_remove(GMG_SPACE_NVTX, ptr, &g)) { /* unregistered meanwhile */
            warn(W_UNKNOWN, "nvtxMemRegionsResize of a region that is not registered");
            continue;
        }
        gmg_heap_regions_add(g.aux, -(int64_t)g.size);
        h.device = a.device;
        h.ctx = a.ctx;
        region_insert(ptr, r->size, a.stack, &h, g.aux); /* the stack that registered it */
    }
}

static void regions_name(nvtxDomainHandle_t domain, nvtxMemRegionsNameBatch_t const *b)
{
    (void)domain;
    (void)b;
}

/* The core API: the guard hooks none of it, but must say yes, or NVTX
 * turns itself off before loading the extension. */
GMG_EXPORT int InitializeInjectionNvtx2(const void *(*getExportTable)(uint32_t))
{
    (void)getExportTable;
    return 1;
}

GMG_EXPORT int InitializeInjectionNvtxExtension(nvtxExtModuleInfo_t *m)
{
    if (!m || m->moduleId != NVTX_EXT_MODULEID_MEM) /* another module: nothing of ours, its slots stay off */
        return 1;
    if (!gmg_upcalls_installed() || !gmg_cfg.pools || !compat_ok(m->compatId) || !m->segments)
        return 0; /* a copy that stays out, GPUMEM_POOLS=off, or a layout we do not know: NVTX turns the module off */
    for (size_t s = 0; s < m->segmentsCount; s++) {
        nvtxExtModuleSegment_t *seg = &m->segments[s];
        if (seg->segmentId != 1 || !seg->functionSlots || seg->slotCount <= NVTX3EXT_CBID_nvtxMemRegionsName)
            continue;
        intptr_t *f = seg->functionSlots;
        f[NVTX3EXT_CBID_nvtxMemHeapRegister] = (intptr_t)heap_register;
        f[NVTX3EXT_CBID_nvtxMemHeapUnregister] = (intptr_t)heap_unregister;
        f[NVTX3EXT_CBID_nvtxMemHeapReset] = (intptr_t)heap_reset;
        f[NVTX3EXT_CBID_nvtxMemRegionsRegister] = (intptr_t)regions_register;
        f[NVTX3EXT_CBID_nvtxMemRegionsResize] = (intptr_t)regions_resize;
        f[NVTX3EXT_CBID_nvtxMemRegionsUnregister] = (intptr_t)regions_unregister;
        f[NVTX3EXT_CBID_nvtxMemRegionsName] = (intptr_t)regions_name;
    }
    return 1;
}
