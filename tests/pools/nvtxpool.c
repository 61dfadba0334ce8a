/*
 * nvtxpool.c - a C program acting as a pool that describes its
 * sub-allocations with the NVTX memory API (nvtx3/nvToolsExtMem.h), as RMM
 * and other sub-allocators do for compute-sanitizer. nvtxpool CASE:
 *   leak      an 8 MiB segment, heap "arena" over it; regions of 1 MiB
 *             (kept), 2 MiB (unregistered), 512 KiB resized to 1 MiB (kept)
 *   clean     the same, every region unregistered (the segment stays cached)
 *   reset     regions, then nvtxMemHeapReset
 *   unreg     regions, nvtxMemHeapUnregister, then the segment freed
 *   quota     as leak, then a 512 KiB cuMemAlloc: regions never count twice
 *   garbage   a double unregister, a region outside its heap, a descriptor
 *             of another layout, an unknown heap, NULL batches
 *   resize_out  as leak, then the 1 MiB region resized to 64 MiB, past
 *             its heap's end: refused with a warning, it keeps 1 MiB
 *   nested    as leak, and a heap "inner" over the segment's last 2 MiB:
 *             a region of inner registered and unregistered, one of arena
 *             inside inner's range kept, inner unregistered (arena's
 *             region stays, arena's bytes are arena's)
 *   block     as leak, and a 2 MiB region of arena at 6 MiB handed to an
 *             inner sub-allocator: a heap "inner" over it, a 512 KiB region
 *             of inner at the block's address registered and unregistered,
 *             inner unregistered: arena's block stays registered (a leak);
 *             blockheap: the same without the inner region's unregister
 *             (it goes with its heap)
 *   sameaddr  as leak, and a heap "head" over the segment's first 1 MiB,
 *             at arena's address: a region at 6 MiB, registered in the
 *             heap of that address, is arena's (head cannot hold it)
 *   dump      as leak, then a dump through the public API: its timeline
 *             mark counts the segment's bytes once (its regions are in it)
 *   byaddr    as leak, and a region registered in the heap named by its
 *             address, as NVTX has a virtual-address heap's handle
 *   orphan    as leak, then 1 MiB more allocated and the segment freed
 *             with its regions still registered: they are left outside
 *             any allocation
 *   segfree   as clean, then the segment freed with its heap still
 *             registered (a program's mistake): the heap has no segment
 *   vmm       no arena: a heap "vmmpool" over 4 MiB of cuMemCreate +
 *             cuMemMap memory, a region registered and unregistered;
 *             vmmrel: then unmapped and released under the heap; vmmtwo:
 *             the heap over two mappings of 4 MiB (said: the first is
 *             its segment)
 *   other     as leak, and a heap "other" over a second segment of
 *             arena's call site, with a 2 MiB region kept: one pool (the
 *             site's), both heaps in it, each region once
 *   sameleak  as sameaddr, and an 8 MiB cuMemAlloc of the program's, a
 *             leak: with stacks off, the segment under two heaps leaves
 *             the leaks once
 *   oneline   as leak, and three 1 MiB segments made on one source line
 *             (three call addresses, one call site), heaps "first" over the
 *             first and "later" over the second, a 512 KiB region in it
 *   queries   as leak, 2000 heaps more, then four threads asking the
 *             public API for the leaked bytes at once (each builds a report)
 *   threads   four threads, each with a heap "t0".."t3" over a 1 MiB segment
 *             of its own, register and unregister 4 KiB regions 4000 times
 *             while each also makes, uses and unregisters a heap of its own
 *             every 50 rounds (slots reused); each then keeps 3 regions
 * NVTXPOOL_NAME: the first heap's name in place of "arena".
 * Prints "nvtxpool CASE done" and the guard's live bytes on device 0.
 */
#include "../integration/testlib.h"

#include <dlfcn.h>

#include <nvtx3/nvToolsExtMem.h>
#include <pthread.h>
#include <stdint.h>

static nvtxDomainHandle_t dom;

static nvtxMemHeapHandle_t make_heap(CUdeviceptr seg, size_t size, const char *name)
{
    nvtxMemVirtualRangeDesc_t range = { size, (void *)(uintptr_t)seg };
    nvtxMemHeapDesc_t d;
    memset(&d, 0, sizeof d);
    d.extCompatID = NVTX_EXT_COMPATID_MEM;
    d.structSize = sizeof d;
    d.usage = NVTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR;
    d.type = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
    d.typeSpecificDescSize = sizeof range;
    d.typeSpecificDesc = &range;
    d.messageType = NVTX_MESSAGE_TYPE_ASCII;
    d.message.ascii = name;
    return nvtxMemHeapRegister(dom, &d);
}

__attribute__((noinline)) static void pool_hand_out(nvtxMemHeapHandle_t heap, CUdeviceptr p, size_t size)
{
    nvtxMemVirtualRangeDesc_t r = { size, (void *)(uintptr_t)p };
    nvtxMemRegionsRegisterBatch_t b;
    memset(&b, 0, sizeof b);
    b.extCompatID = NVTX_EXT_COMPATID_MEM;
    b.structSize = sizeof b;
    b.regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
    b.heap = heap;
    b.regionCount = 1;
    b.regionDescElementSize = sizeof r;
    b.regionDescElements = &r;
    nvtxMemRegionsRegister(dom, &b);
}

__attribute__((noinline)) static void pool_take_back(CUdeviceptr p)
{
    nvtxMemRegionRef_t ref;
    ref.pointer = (void *)(uintptr_t)p;
    nvtxMemRegionsUnregisterBatch_t b;
    memset(&b, 0, sizeof b);
    b.extCompatID = NVTX_EXT_COMPATID_MEM;
    b.structSize = sizeof b;
    b.refType = NVTX_MEM_REGION_REF_TYPE_POINTER;
    b.refCount = 1;
    b.refElementSize = sizeof ref;
    b.refElements = &ref;
    nvtxMemRegionsUnregister(dom, &b);
}

static void pool_resize(CUdeviceptr p, size_t size)
{
    nvtxMemVirtualRangeDesc_t r = { size, (void *)(uintptr_t)p };
    nvtxMemRegionsResizeBatch_t b;
    memset(&b, 0, sizeof b);
    b.extCompatID = NVTX_EXT_COMPATID_MEM;
    b.structSize = sizeof b;
    b.regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
    b.regionDescCount = 1;
    b.regionDescElementSize = sizeof r;
    b.regionDescElements = &r;
    nvtxMemRegionsResize(dom, &b);
}

__attribute__((noinline)) static CUdeviceptr arena_segment(size_t n)
{
    CUdeviceptr p;
    TL_CHECK(cuMemAlloc(&p, n));
    return p;
}

/* Memory of the program's own: a leak when live at exit. */
__attribute__((noinline)) static CUdeviceptr program_buffer(size_t n)
{
    CUdeviceptr p;
    TL_CHECK(cuMemAlloc(&p, n));
    return p;
}

/* A segment of a pool that says nothing of itself to NVTX: a pool:zone line names it. */
__attribute__((noinline)) static CUdeviceptr zone_grow(size_t n)
{
    CUdeviceptr p;
    TL_CHECK(cuMemAlloc(&p, n));
    return p;
}

static CUcontext ctx;

/* Reports built on several threads at once (the public API builds one). */
static void *query(void *arg)
{
    (void)arg;
    unsigned long long (*leaked)(int) = (unsigned long long (*)(int))dlsym(RTLD_DEFAULT, "gpumemguard_leaked_bytes");
    for (int i = 0; leaked && i < 25; i++)
        leaked(-1);
    return NULL;
}

static void *worker(void *arg)
{
    const size_t KiB = 1 << 10;
    char name[8];
    snprintf(name, sizeof name, "t%d", (int)(intptr_t)arg);
    TL_CHECK(cuCtxSetCurrent(ctx));
    CUdeviceptr seg = arena_segment(1024 * KiB);
    nvtxMemHeapHandle_t heap = make_heap(seg, 1024 * KiB, name);
    for (int i = 0; i < 4000; i++) {
        CUdeviceptr p = seg + (CUdeviceptr)(i % 64) * 4 * KiB;
        pool_hand_out(heap, p, 4 * KiB);
        pool_take_back(p);
        if (i % 50 == 0) { /* a heap made and gone: its slot is the next one's */
            CUdeviceptr tseg = arena_segment(64 * KiB);
            nvtxMemHeapHandle_t t = make_heap(tseg, 64 * KiB, "churn");
            pool_hand_out(t, tseg, 4 * KiB);
            pool_take_back(tseg);
            pool_hand_out(t, tseg + 8 * KiB, 4 * KiB);
            nvtxMemHeapUnregister(dom, t); /* its region goes with it */
            TL_CHECK(cuMemFree(tseg));
        }
    }
    for (int k = 0; k < 3; k++)
        pool_hand_out(heap, seg + (CUdeviceptr)k * 8 * KiB, 4 * KiB);
    return NULL;
}

int main(int argc, char **argv)
{
    const char *c = argc > 1 ? argv[1] : "leak";
    ctx = tl_setup(0);
    if (strcmp(c, "threads") == 0) {
        dom = nvtxDomainCreateA("nvtxpool");
        /* NVTX attaches its memory module at the first call of it, in the
         * program's own NVTX code: made here, before the threads race it */
        CUdeviceptr first = arena_segment(64 << 10);
        nvtxMemHeapUnregister(dom, make_heap(first, 64 << 10, "first"));
        TL_CHECK(cuMemFree(first));
        pthread_t t[4];
        for (int i = 0; i < 4; i++)
            if (pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i) != 0)
                return 1;
        for (int i = 0; i < 4; i++)
            pthread_join(t[i], NULL);
        printf("nvtxpool %s done; guard live %llu\n", c, tl_guard_live(0));
        return 0;
    }
    dom = nvtxDomainCreateA("nvtxpool");
    const size_t MiB = 1 << 20;
    int (*mark)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "gpumemguard_mark");
    int m = mark ? mark() : -1; /* what the program holds since its start, pools' segments left out */
    if (strncmp(c, "vmm", 3) == 0) { /* a pool over mapped physical memory, as expandable segments are */
        CUmemAllocationProp prop = tl_vmm_prop(0);
        size_t g, sz = 4 * MiB;
        TL_CHECK(cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
        sz = (sz + g - 1) / g * g;
        CUdeviceptr va;
        CUmemGenericAllocationHandle mh, mh2;
        TL_CHECK(cuMemAddressReserve(&va, 2 * sz, 0, 0, 0));
        TL_CHECK(cuMemCreate(&mh, sz, &prop, 0));
        TL_CHECK(cuMemMap(va, sz, 0, mh, 0));
        if (strcmp(c, "vmmtwo") == 0) {
            TL_CHECK(cuMemCreate(&mh2, sz, &prop, 0));
            TL_CHECK(cuMemMap(va + sz, sz, 0, mh2, 0));
        }
        nvtxMemHeapHandle_t h = make_heap(va, strcmp(c, "vmmtwo") == 0 ? 2 * sz : sz, "vmmpool");
        pool_hand_out(h, va + MiB, MiB);
        pool_take_back(va + MiB);
        if (strcmp(c, "vmmrel") == 0) { /* the heap left registered */
            TL_CHECK(cuMemUnmap(va, sz));
            TL_CHECK(cuMemRelease(mh));
        }
        printf("nvtxpool %s done; guard live %llu\n", c, tl_guard_live(0));
        return 0;
    }
    CUdeviceptr segs[2] = { 0, 0 }; /* "other": two segments of one call site */
    for (int i = 0; i < (strcmp(c, "other") == 0 ? 2 : 1); i++)
        segs[i] = arena_segment(8 * MiB);
    CUdeviceptr seg = segs[0];
    const char *name = getenv("NVTXPOOL_NAME"); /* the heap's name, "arena" unless set */
    nvtxMemHeapHandle_t heap = make_heap(seg, 8 * MiB, name ? name : "arena");
    pool_hand_out(heap, seg, MiB);
    pool_hand_out(heap, seg + MiB, 2 * MiB);
    pool_hand_out(heap, seg + 4 * MiB, MiB / 2);
    pool_take_back(seg + MiB);
    pool_resize(seg + 4 * MiB, MiB);
    if (strcmp(c, "clean") == 0) {
        pool_take_back(seg);
        pool_take_back(seg + 4 * MiB);
    } else if (strcmp(c, "reset") == 0) {
        nvtxMemHeapReset(dom, heap);
    } else if (strcmp(c, "unreg") == 0) {
        nvtxMemHeapUnregister(dom, heap);
        TL_CHECK(cuMemFree(seg));
    } else if (strcmp(c, "zone") == 0) { /* a heap named "zone", and a segment a pool:zone line names */
        make_heap(arena_segment(8 * MiB), 8 * MiB, "zone");
        zone_grow(4 * MiB);
    } else if (strcmp(c, "twoheaps") == 0) { /* another heap of the same name, nothing handed out of it */
        CUdeviceptr seg2 = arena_segment(8 * MiB);
        make_heap(seg2, 8 * MiB, "arena");
    } else if (strcmp(c, "orphan") == 0) {
        CUdeviceptr more;
        TL_CHECK(cuMemAlloc(&more, MiB));
        TL_CHECK(cuMemFree(seg));
    } else if (strcmp(c, "segfree") == 0) {
        pool_take_back(seg);
        pool_take_back(seg + 4 * MiB);
        TL_CHECK(cuMemFree(seg));
    } else if (strcmp(c, "resize_out") == 0) {
        pool_resize(seg + 4 * MiB, 64 * MiB);
    } else if (strcmp(c, "nested") == 0) {
        nvtxMemHeapHandle_t inner = make_heap(seg + 6 * MiB, 2 * MiB, "inner");
        pool_hand_out(inner, seg + 6 * MiB, MiB);
        pool_hand_out(heap, seg + 7 * MiB, MiB / 2); /* arena's, in inner's range */
        pool_take_back(seg + 6 * MiB);
        nvtxMemHeapUnregister(dom, inner);
    } else if (strcmp(c, "block") == 0 || strcmp(c, "blockheap") == 0) {
        /* arena hands a 2 MiB block to an inner sub-allocator, never given back */
        pool_hand_out(heap, seg + 6 * MiB, 2 * MiB);
        nvtxMemHeapHandle_t inner = make_heap(seg + 6 * MiB, 2 * MiB, "inner");
        pool_hand_out(inner, seg + 6 * MiB, MiB / 2); /* at the block's own address */
        if (strcmp(c, "block") == 0)
            pool_take_back(seg + 6 * MiB); /* the inner region, the one registered last */
        nvtxMemHeapUnregister(dom, inner);
    } else if (strcmp(c, "sameaddr") == 0 || strcmp(c, "sameleak") == 0) {
        make_heap(seg, MiB, "head");
        pool_hand_out(heap, seg + 6 * MiB, MiB);
        if (strcmp(c, "sameleak") == 0)
            program_buffer(8 * MiB);
    } else if (strcmp(c, "oneline") == 0) {
        CUdeviceptr a = arena_segment(MiB), b2 = arena_segment(MiB), c2 = arena_segment(MiB); /* one site */
        (void)c2;
        make_heap(a, MiB, "first");
        pool_hand_out(make_heap(b2, MiB, "later"), b2, MiB / 2);
    } else if (strcmp(c, "queries") == 0) {
        for (int i = 0; i < 2000; i++)
            make_heap(seg + (CUdeviceptr)(i % 64) * 4096, 4096, i % 2 ? "odd" : "even");
        pthread_t t[4];
        for (int i = 0; i < 4; i++)
            if (pthread_create(&t[i], NULL, query, NULL) != 0)
                return 1;
        for (int i = 0; i < 4; i++)
            pthread_join(t[i], NULL);
    } else if (strcmp(c, "other") == 0) {
        pool_hand_out(make_heap(segs[1], 8 * MiB, "other"), segs[1], 2 * MiB);
    } else if (strcmp(c, "dump") == 0) {
        int (*dump)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "gpumemguard_dump");
        if (!dump || dump() != 0)
            printf("FAIL dump\n");
    } else if (strcmp(c, "byaddr") == 0) {
        printf("nvtxpool heap handle is its address: %s\n", heap == (nvtxMemHeapHandle_t)(uintptr_t)seg ? "yes" : "no");
        pool_hand_out((nvtxMemHeapHandle_t)(uintptr_t)seg, seg + 2 * MiB, MiB);
    } else if (strcmp(c, "quota") == 0) {
        CUdeviceptr more;
        TL_CHECK(cuMemAlloc(&more, MiB / 2));
    } else if (strcmp(c, "garbage") == 0) {
        pool_take_back(seg + MiB);                 /* unregistered already */
        pool_take_back(seg + MiB);
        pool_hand_out(heap, seg + 8 * MiB, MiB);   /* past the heap's end */
        pool_hand_out(heap, seg - MiB, MiB);
        pool_hand_out((nvtxMemHeapHandle_t)(uintptr_t)0xdeadbeef, seg, MiB); /* no such heap */
        nvtxMemRegionsRegisterBatch_t bad;
        memset(&bad, 0, sizeof bad);
        bad.extCompatID = 0x0999; /* another layout */
        bad.structSize = sizeof bad;
        bad.regionCount = 1;
        nvtxMemRegionsRegister(dom, &bad);
        bad.extCompatID = NVTX_EXT_COMPATID_MEM;
        bad.regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
        bad.heap = heap;
        bad.regionCount = 3;       /* and no elements */
        bad.regionDescElementSize = sizeof(nvtxMemVirtualRangeDesc_t);
        nvtxMemRegionsRegister(dom, &bad);
        nvtxMemRegionsRegister(dom, NULL);
        nvtxMemRegionsUnregister(dom, NULL);
        nvtxMemRegionsResize(dom, NULL);
        nvtxMemHeapRegister(dom, NULL);
        nvtxMemHeapRegister(dom, (const nvtxMemHeapDesc_t *)(uintptr_t)0x10); /* unreadable: a warning, no crash */
        nvtxMemHeapDesc_t hd;
        memset(&hd, 0, sizeof hd);
        hd.extCompatID = NVTX_EXT_COMPATID_MEM;
        hd.structSize = sizeof hd;
        hd.usage = NVTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR;
        hd.type = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
        hd.typeSpecificDescSize = sizeof(nvtxMemVirtualRangeDesc_t);
        hd.typeSpecificDesc = (const void *)(uintptr_t)0x20; /* its range unreadable */
        nvtxMemHeapRegister(dom, &hd);
        nvtxMemHeapUnregister(dom, (nvtxMemHeapHandle_t)(uintptr_t)0x12345);
        nvtxMemHeapReset(dom, (nvtxMemHeapHandle_t)(uintptr_t)0x12345);
    }
    printf("nvtxpool %s done; guard live %llu\n", c, tl_guard_live(0));
    /* the public API's leaked and retained bytes, of every device and of device 0 */
    unsigned long long (*leaked)(int) = (unsigned long long (*)(int))dlsym(RTLD_DEFAULT, "gpumemguard_leaked_bytes");
    unsigned long long (*retained)(int) = (unsigned long long (*)(int))dlsym(RTLD_DEFAULT, "gpumemguard_retained_bytes");
    if (leaked && retained)
        printf("nvtxpool api: leaked %llu %llu, retained %llu %llu\n", leaked(-1), leaked(0), retained(-1), retained(0));
    int (*since)(int, int, int, unsigned long long *, unsigned long long *) =
        (int (*)(int, int, int, unsigned long long *, unsigned long long *))dlsym(RTLD_DEFAULT, "gpumemguard_since");
    unsigned long long sb = 0, sn = 0;
    if (since && m > 0 && since(m, -1, 1 /* GPUMEMGUARD_SINCE_NO_POOLS */, &sb, &sn) == 0)
        printf("nvtxpool since, no pools: %llu bytes in %llu\n", sb, sn);
    return 0;
}
