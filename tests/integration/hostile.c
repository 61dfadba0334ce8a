/*
 * hostile.c - adversarial cases of the newer hooks (graph memory nodes,
 * stream capture, memory pools, VMM handle references, arrays): error
 * paths, races between threads, the quota's exactness at its boundary,
 * and what the reports list. Linked to the simulated driver directly.
 *
 *   hostile MODE [N]   (tests/hostile.sh says what each must print)
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib.h"

#define NOINLINE __attribute__((noinline))
#define CHECK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { \
    printf("FAIL %s:%d: %s = %d\n", __FILE__, __LINE__, #x, (int)r_); fflush(stdout); exit(1); } } while (0)
#define MiB (1024ull * 1024)

static CUcontext ctx;

static void setup(void) { ctx = tl_setup(0); }
static unsigned long long sim_live(int dev) { return (unsigned long long)tl_sim(dev).live; }

static CUDA_MEM_ALLOC_NODE_PARAMS graph_params(size_t bytes, int dev)
{
    CUDA_MEM_ALLOC_NODE_PARAMS a;
    memset(&a, 0, sizeof a);
    a.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    a.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    a.poolProps.location.id = dev;
    a.bytesize = bytes;
    return a;
}

/* ------------------------------------------------------------ VMM races */

struct vmm_job {
    pthread_barrier_t *go;
    CUmemGenericAllocationHandle h;
    CUdeviceptr va;
    size_t size;
    int op; /* 0 release, 1 unmap, 2 retain+release */
    CUresult r;
};

static void *vmm_worker(void *p)
{
    struct vmm_job *j = p;
    CHECK(cuCtxSetCurrent(ctx));
    pthread_barrier_wait(j->go);
    if (j->op == 0) {
        j->r = cuMemRelease(j->h);
    } else if (j->op == 1) {
        j->r = cuMemUnmap(j->va, j->size);
    } else {
        CUmemGenericAllocationHandle again;
        j->r = cuMemRetainAllocationHandle(&again, (void *)(uintptr_t)j->va);
        if (j->r == CUDA_SUCCESS)
            j->r = cuMemRelease(again);
    }
    return NULL;
}

static void race2(struct vmm_job *a, struct vmm_job *b)
{
    pthread_barrier_t go;
    pthread_t t[2];
    pthread_barrier_init(&go, NULL, 2);
    a->go = b->go = &go;
    pthread_create(&t[0], NULL, vmm_worker, a);
    pthread_create(&t[1], NULL, vmm_worker, b);
    pthread_join(t[0], NULL);
    pthread_join(t[1], NULL);
    pthread_barrier_destroy(&go);
}

/* A handle mapped once: released by one thread while another unmaps its
 * mapping, or released twice at once (the driver refuses one), or a retain's
 * reference taken and dropped while the handle's own goes; a handle never
 * mapped released twice at once. Every round ends
 * with the memory gone: the guard's count must follow the driver's. */
static void vmm_races(int rounds)
{
    CUmemAllocationProp prop = tl_vmm_prop(0);
    CUdeviceptr va;
    const size_t sz = 2 * MiB;
    int bad = 0;
    CHECK(cuMemAddressReserve(&va, sz, 0, 0, 0));
    for (int i = 0; i < rounds; i++) {
        CUmemGenericAllocationHandle h;
        CHECK(cuMemCreate(&h, sz, &prop, 0));
        if (i % 4 != 3)
            CHECK(cuMemMap(va, sz, 0, h, 0));
        struct vmm_job a = { .h = h, .va = va, .size = sz }, b = a;
        switch (i % 4) {
        case 0: /* release || unmap */
            a.op = 0; b.op = 1;
            race2(&a, &b);
            break;
        case 1: /* release || release (one is refused), then unmap */
            a.op = 0; b.op = 0;
            race2(&a, &b);
            if ((a.r == CUDA_SUCCESS) + (b.r == CUDA_SUCCESS) != 1)
                bad++;
            CHECK(cuMemUnmap(va, sz));
            break;
        case 2: /* retain+release || release, then unmap */
            a.op = 2; b.op = 0;
            race2(&a, &b);
            CHECK(cuMemUnmap(va, sz));
            break;
        case 3: /* never mapped: release || release (one is refused) */
            a.op = 0; b.op = 0;
            race2(&a, &b);
            if ((a.r == CUDA_SUCCESS) + (b.r == CUDA_SUCCESS) != 1)
                bad++;
            break;
        }
        if (a.r != CUDA_SUCCESS && a.op != 0)
            bad++;
        if (tl_guard_live(0) != sim_live(0)) {
            printf("vmm races: round %d (case %d): guard %llu sim %llu\n", i, i % 4, tl_guard_live(0), sim_live(0));
            bad++;
        }
    }
    CHECK(cuMemAddressFree(va, sz));
    printf("vmm races: %d rounds, %d wrong; guard %llu sim %llu\n", rounds, bad, tl_guard_live(0), sim_live(0));
}

/* ------------------------------------------------- graph free node races */

struct gjob {
    pthread_barrier_t *go;
    CUgraph g;
    CUdeviceptr p;
    int op; /* 0 free node, 1 cuMemFree_v2 */
    CUresult r;
};

static void *graph_worker(void *p)
{
    struct gjob *j = p;
    CHECK(cuCtxSetCurrent(ctx));
    pthread_barrier_wait(j->go);
    CUgraphNode n;
    j->r = j->op == 0 ? cuGraphAddMemFreeNode(&n, j->g, NULL, 0, j->p) : cuMemFree_v2(j->p);
    return NULL;
}

/* A graph allocation freed by a free node in another graph on one thread
 * and by cuMemFree on another, at once; and two free nodes for it in two
 * graphs at once (the driver takes one). Nothing may stay listed, nothing
 * be counted. */
static void graph_races(int rounds)
{
    int left = 0;
    for (int i = 0; i < rounds; i++) {
        CUgraph a, b, c;
        CUgraphNode n;
        CHECK(cuGraphCreate(&a, 0));
        CHECK(cuGraphCreate(&b, 0));
        CHECK(cuGraphCreate(&c, 0));
        CUDA_MEM_ALLOC_NODE_PARAMS x = graph_params(65536, 0);
        CHECK(cuGraphAddMemAllocNode(&n, a, NULL, 0, &x));
        struct gjob j0 = { .g = b, .p = x.dptr, .op = 0 }, j1 = { .g = c, .p = x.dptr, .op = i % 2 };
        pthread_barrier_t go;
        pthread_t t[2];
        pthread_barrier_init(&go, NULL, 2);
        j0.go = j1.go = &go;
        pthread_create(&t[0], NULL, graph_worker, &j0);
        pthread_create(&t[1], NULL, graph_worker, &j1);
        pthread_join(t[0], NULL);
        pthread_join(t[1], NULL);
        pthread_barrier_destroy(&go);
        CHECK(cuGraphDestroy(c));
        CHECK(cuGraphDestroy(b));
        CHECK(cuGraphDestroy(a));
    }
    (void)left;
    printf("graph races: %d rounds; guard %llu sim %llu\n", rounds, tl_guard_live(0), sim_live(0));
}

/* -------------------------------------------------- capture, many threads */

static CUresult capture_limit_alloc(CUstream s, CUdeviceptr *p) { return cuMemAllocAsync(p, 8 * MiB, s); }

struct cjob {
    int rounds, ptds;
    int refused_captured, bad_counted;
};

/* Each thread captures on a stream of its own (or its own per-thread
 * default stream), allocates 8 MiB in the capture (a graph's: never refused
 * under a 4 MiB limit), frees it in the capture, ends it; then allocates
 * 1 MiB on the same stream, outside any capture: counted. */
static void *capture_worker(void *p)
{
    struct cjob *j = p;
    CHECK(cuCtxSetCurrent(ctx));
    CUstream s = NULL;
    if (!j->ptds)
        CHECK(cuStreamCreate(&s, 0));
    for (int i = 0; i < j->rounds; i++) {
        CUdeviceptr x, y;
        CUgraph g;
        if (j->ptds)
            CHECK(cuStreamBeginCapture_v2_ptsz(NULL, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
        else
            CHECK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_RELAXED));
        CUresult r = j->ptds ? cuMemAllocAsync_ptsz(&x, 8 * MiB, NULL) : capture_limit_alloc(s, &x);
        if (r != CUDA_SUCCESS)
            j->refused_captured++;
        else
            CHECK(j->ptds ? cuMemFreeAsync_ptsz(x, NULL) : cuMemFreeAsync(x, s));
        CHECK(j->ptds ? cuStreamEndCapture_ptsz(NULL, &g) : cuStreamEndCapture(s, &g));
        CHECK(cuGraphDestroy(g));
        r = j->ptds ? cuMemAllocAsync_ptsz(&y, 256 * 1024, NULL) : cuMemAllocAsync(&y, 256 * 1024, s);
        if (r == CUDA_SUCCESS)
            CHECK(j->ptds ? cuMemFreeAsync_ptsz(y, NULL) : cuMemFreeAsync(y, s));
        else if (r != CUDA_ERROR_OUT_OF_MEMORY)
            j->bad_counted++;
    }
    if (s)
        CHECK(cuStreamDestroy_v2(s));
    return NULL;
}

static void capture_threads(int rounds, int ptds)
{
    enum { N = 8 };
    pthread_t t[N];
    struct cjob j[N];
    for (int i = 0; i < N; i++) {
        j[i] = (struct cjob){ .rounds = rounds, .ptds = ptds || (i % 2) };
        pthread_create(&t[i], NULL, capture_worker, &j[i]);
    }
    int refused = 0, bad = 0;
    for (int i = 0; i < N; i++) {
        pthread_join(t[i], NULL);
        refused += j[i].refused_captured;
        bad += j[i].bad_counted;
    }
    /* every capture ended: the next 8 MiB is memory, refused under 4 MiB */
    CUstream s;
    CUdeviceptr p;
    CHECK(cuStreamCreate(&s, 0));
    CUresult after = cuMemAllocAsync(&p, 8 * MiB, s);
    CHECK(cuStreamDestroy_v2(s));
    printf("capture threads: %d x %d rounds, captured refused %d, bad %d; after all ended 8 MiB %d; guard %llu sim %llu\n",
           N, rounds, refused, bad, (int)after, tl_guard_live(0), sim_live(0));
}

/* ------------------------------------------------- capture error paths */

/* The driver's refusals of capture calls change nothing: a second begin on
 * a capturing stream, an end with a NULL graph output, an end of a stream
 * that never captured, the legacy stream (cannot capture). Under a 4 MiB
 * limit, 8 MiB goes through while the stream captures, and is refused once
 * the capture has ended. */
static void capture_errors(void)
{
    CUstream s, other;
    CUdeviceptr p, q;
    CUgraph g;
    CHECK(cuStreamCreate(&s, 0));
    CHECK(cuStreamCreate(&other, 0));
    CHECK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_RELAXED));
    CUresult again = cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_RELAXED);
    CUresult legacy = cuStreamBeginCapture(NULL);
    CUresult nullg = cuStreamEndCapture(s, NULL);
    CUresult never = cuStreamEndCapture(other, &g);
    CUresult never_legacy = cuStreamEndCapture(NULL, &g);
    CUresult in = cuMemAllocAsync(&p, 8 * MiB, s);
    CHECK(cuStreamEndCapture(s, &g));
    CUresult out = cuMemAllocAsync(&q, 8 * MiB, s);
    printf("capture errors: again %d legacy %d null graph %d never %d never legacy %d; captured 8 MiB %d, after 8 MiB %d; "
           "guard %llu sim %llu\n", (int)again, (int)legacy, (int)nullg, (int)never, (int)never_legacy, (int)in, (int)out,
           tl_guard_live(0), sim_live(0));
    if (in == CUDA_SUCCESS)
        CHECK(cuMemFree_v2(p));
    if (out == CUDA_SUCCESS)
        CHECK(cuMemFree_v2(q));
    CHECK(cuGraphDestroy(g));
    CHECK(cuStreamDestroy_v2(s));
    CHECK(cuStreamDestroy_v2(other));
}

/* ------------------------------------------------------- pools, threads */

struct pjob {
    int rounds, dev;
    int bad;
};

static void *pool_worker(void *p)
{
    struct pjob *j = p;
    CHECK(cuCtxSetCurrent(ctx)); /* device 0's context, whichever pool */
    CUmemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = j->dev;
    for (int i = 0; i < j->rounds; i++) {
        CUmemoryPool pool;
        CUdeviceptr a;
        CHECK(cuMemPoolCreate(&pool, &props));
        CUresult r = cuMemAllocFromPoolAsync(&a, 1 * MiB, pool, NULL);
        if (r == CUDA_SUCCESS)
            CHECK(cuMemFreeAsync(a, NULL));
        else
            j->bad++;
        CHECK(cuMemPoolDestroy(pool));
    }
    return NULL;
}

/* Threads make, use and destroy pools of device 0 and device 1 at once,
 * all with device 0's context current; device 1's limit is 4 MiB, device
 * 0's 64 MiB: each pool's allocation must count on its own device. */
static void pool_threads(int rounds)
{
    enum { N = 8 };
    pthread_t t[N];
    struct pjob j[N];
    for (int i = 0; i < N; i++) {
        j[i] = (struct pjob){ .rounds = rounds, .dev = i % 2 };
        pthread_create(&t[i], NULL, pool_worker, &j[i]);
    }
    int bad = 0;
    for (int i = 0; i < N; i++) {
        pthread_join(t[i], NULL);
        bad += j[i].bad;
    }
    printf("pool threads: %d x %d rounds, refused %d; device 0 guard %llu sim %llu; device 1 guard %llu sim %llu\n", N,
           rounds, bad, tl_guard_live(0), sim_live(0), tl_guard_live(1), sim_live(1));
}

/* ---------------------------------------------- the quota at its boundary */

/* GPUMEM_LIMIT=0:8M,1:8M. Each family fills device 1 to the byte, and one
 * byte more is refused; device 0 never moves. Then everything is freed: 0. */
static void boundary(void)
{
    CUmemoryPool p1;
    CUdeviceptr a, b;
    CUresult r[16];
    int k = 0;
    CHECK(cuDeviceGetDefaultMemPool(&p1, 1));
    /* pool of device 1, device 0 current */
    r[k++] = cuMemAllocFromPoolAsync(&a, 8 * MiB, p1, NULL);
    r[k++] = cuMemAllocFromPoolAsync(&b, 1, p1, NULL);
    CHECK(cuMemFreeAsync(a, NULL));
    /* cuMemCreate on device 1 */
    CUmemAllocationProp prop = tl_vmm_prop(1);
    CUmemGenericAllocationHandle h, h2;
    r[k++] = cuMemCreate(&h, 8 * MiB, &prop, 0);
    r[k++] = cuMemCreate(&h2, 2 * MiB, &prop, 0);
    /* released while mapped: still counted until the unmap */
    CUdeviceptr va;
    CHECK(cuMemAddressReserve(&va, 8 * MiB, 0, 0, 0));
    CHECK(cuMemMap(va, 8 * MiB, 0, h, 0));
    CHECK(cuMemRelease(h));
    r[k++] = cuMemCreate(&h2, 2 * MiB, &prop, 0);
    CHECK(cuMemUnmap(va, 8 * MiB));
    r[k++] = cuMemCreate(&h2, 8 * MiB, &prop, 0);
    CHECK(cuMemRelease(h2));
    CHECK(cuMemAddressFree(va, 8 * MiB));
    /* a graph's allocation on device 1: never refused, never counted */
    CUgraph g;
    CUgraphNode n;
    CHECK(cuGraphCreate(&g, 0));
    CUDA_MEM_ALLOC_NODE_PARAMS gp = graph_params(64 * MiB, 1);
    r[k++] = cuGraphAddMemAllocNode(&n, g, NULL, 0, &gp);
    r[k++] = cuMemAllocFromPoolAsync(&a, 8 * MiB, p1, NULL);
    CHECK(cuMemFreeAsync(a, NULL));
    CHECK(cuGraphAddMemFreeNode(&n, g, NULL, 0, gp.dptr));
    CHECK(cuGraphDestroy(g));
    /* device 0: arrays and mipmaps to the byte */
    CUDA_ARRAY_DESCRIPTOR d = { 1024, 512, CU_AD_FORMAT_FLOAT, 4 }; /* 8 MiB */
    CUDA_ARRAY_DESCRIPTOR d1 = { 1, 1, CU_AD_FORMAT_UNSIGNED_INT8, 1 };
    CUarray ar, ar1;
    r[k++] = cuArrayCreate_v2(&ar, &d);
    r[k++] = cuArrayCreate_v2(&ar1, &d1);
    CHECK(cuArrayDestroy(ar));
    CUDA_ARRAY3D_DESCRIPTOR m3 = { 1024, 1024, 0, CU_AD_FORMAT_UNSIGNED_INT8, 4, 0 }; /* 4 MiB + 1 MiB + ... */
    CUmipmappedArray m;
    r[k++] = cuMipmappedArrayCreate(&m, &m3, 11); /* 4*(1M+256K+64K+16K+4K+1K+256+64+16+4+1) = 5592404 */
    CUdeviceptr rest;
    r[k++] = cuMemAlloc_v2(&rest, 8 * MiB - 5592404);
    r[k++] = cuMemAlloc_v2(&b, 1);
    CHECK(cuMipmappedArrayDestroy(m));
    CHECK(cuMemFree_v2(rest));
    printf("boundary:");
    for (int i = 0; i < k; i++)
        printf(" %d", (int)r[i]);
    printf("; device 0 guard %llu sim %llu; device 1 guard %llu sim %llu\n", tl_guard_live(0), sim_live(0), tl_guard_live(1),
           sim_live(1));
}

/* ------------------------------------------------ injected driver errors */

/* GPUSIM_FAIL=cuMemCreate:2,cuArrayCreate_v2:1,cuMemAllocAsync:2,cuMemRelease:1,cuMemFreeAsync:1:
 * each failure passes through, the quota keeps nothing of a failed
 * allocation, and a failed free keeps its record counted. */
static void injected(void)
{
    CUmemAllocationProp prop = tl_vmm_prop(0);
    CUmemGenericAllocationHandle h1, h2;
    CUdeviceptr a1, a2;
    CUarray ar;
    CUDA_ARRAY_DESCRIPTOR d = { 256, 256, CU_AD_FORMAT_FLOAT, 1 };
    CUresult c1 = cuMemCreate(&h1, 2 * MiB, &prop, 0), c2 = cuMemCreate(&h2, 2 * MiB, &prop, 0);
    CUresult ar1 = cuArrayCreate_v2(&ar, &d), ar2 = cuArrayCreate_v2(&ar, &d);
    CUresult as1 = cuMemAllocAsync(&a1, MiB, NULL), as2 = cuMemAllocAsync(&a2, MiB, NULL);
    unsigned long long g1 = tl_guard_live(0), s1 = sim_live(0);
    CUresult rel1 = cuMemRelease(h1), rel2 = cuMemRelease(h1);
    CUresult fa1 = cuMemFreeAsync(a1, NULL), fa2 = cuMemFreeAsync(a1, NULL);
    CHECK(cuArrayDestroy(ar));
    printf("injected: create %d %d array %d %d async %d %d (guard %llu sim %llu); release %d %d freeasync %d %d; "
           "guard %llu sim %llu\n", (int)c1, (int)c2, (int)ar1, (int)ar2, (int)as1, (int)as2, g1, s1, (int)rel1,
           (int)rel2, (int)fa1, (int)fa2, tl_guard_live(0), sim_live(0));
}

/* ----------------------------------------------- arrays: sparse, formats */

NOINLINE static void leak_sparse(CUarray *a)
{
    CUDA_ARRAY3D_DESCRIPTOR d = { 4096, 4096, 0, CU_AD_FORMAT_FLOAT, 4, CUDA_ARRAY3D_SPARSE };
    CHECK(cuArray3DCreate_v2(a, &d));
}

/* A sparse array holds no memory: allowed over the limit (GPUMEM_LIMIT=4M),
 * listed at 0 bytes; destroyed twice: the second is the driver's to answer. */
static void arrays(void)
{
    CUarray a, b;
    leak_sparse(&a);
    CUDA_ARRAY3D_DESCRIPTOR dd = { 4096, 4096, 0, CU_AD_FORMAT_FLOAT, 4, CUDA_ARRAY3D_DEFERRED_MAPPING };
    CUresult deferred = cuArray3DCreate_v2(&b, &dd);
    CUDA_ARRAY3D_DESCRIPTOR big = { 4096, 4096, 0, CU_AD_FORMAT_FLOAT, 4, 0 };
    CUarray c;
    CUresult dense = cuArray3DCreate_v2(&c, &big);
    CHECK(cuArrayDestroy(b));
    printf("arrays: deferred %d dense %d; guard %llu sim %llu\n", (int)deferred, (int)dense, tl_guard_live(0), sim_live(0));
}

/* Mipmapped arrays whose Depth is layers (CUDA_ARRAY3D_LAYERED) or cube
 * faces (CUDA_ARRAY3D_CUBEMAP): every level has all of them, only width and
 * height halve (cuda.h, cuArray3DCreate's flags). A cubemap 64x64 of 7
 * levels, 1 byte a texel: 6 x 5461 = 32766 bytes; 10 layers of 32x32, 6
 * levels: 10 x 1365 = 13650; a 1D layered array of 64, 4 layers, 7 levels:
 * 4 x 127 = 508. In all 46924, the limit's every byte (GPUMEM_LIMIT=46924):
 * one byte more is refused. */
static void mipmap_layered(void)
{
    CUDA_ARRAY3D_DESCRIPTOR cube = { 64, 64, 6, CU_AD_FORMAT_UNSIGNED_INT8, 1, CUDA_ARRAY3D_CUBEMAP };
    CUDA_ARRAY3D_DESCRIPTOR layers = { 32, 32, 10, CU_AD_FORMAT_UNSIGNED_INT8, 1, CUDA_ARRAY3D_LAYERED };
    CUDA_ARRAY3D_DESCRIPTOR line = { 64, 0, 4, CU_AD_FORMAT_UNSIGNED_INT8, 1, CUDA_ARRAY3D_LAYERED };
    CUmipmappedArray a, b, c;
    CUresult ra = cuMipmappedArrayCreate(&a, &cube, 7), rb = cuMipmappedArrayCreate(&b, &layers, 6),
             rc = cuMipmappedArrayCreate(&c, &line, 7);
    CUdeviceptr p;
    CUresult more = cuMemAlloc_v2(&p, 1);
    printf("mipmap layered: %d %d %d, 1 byte more %d; guard %llu sim %llu\n", (int)ra, (int)rb, (int)rc, (int)more,
           tl_guard_live(0), sim_live(0));
    if (ra == CUDA_SUCCESS)
        CHECK(cuMipmappedArrayDestroy(a));
    if (rb == CUDA_SUCCESS)
        CHECK(cuMipmappedArrayDestroy(b));
    if (rc == CUDA_SUCCESS)
        CHECK(cuMipmappedArrayDestroy(c));
    printf("mipmap layered: destroyed; guard %llu sim %llu\n", tl_guard_live(0), sim_live(0));
}

/* The driver clamps a mipmapped array's level count to [1, 1 +
 * floor(log2(max(width, height, depth)))] (cuda.h): 0 levels of a 64x64
 * array of bytes is level 0, 4096 bytes; 100 levels are 7, 5461 bytes. In
 * all 9557, the limit's every byte (GPUMEM_LIMIT=9557): one more refused. */
static void mipmap_levels(void)
{
    CUDA_ARRAY3D_DESCRIPTOR d = { 64, 64, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1, 0 };
    CUmipmappedArray a, b;
    CUresult ra = cuMipmappedArrayCreate(&a, &d, 0), rb = cuMipmappedArrayCreate(&b, &d, 100);
    CUdeviceptr p;
    CUresult more = cuMemAlloc_v2(&p, 1);
    printf("mipmap levels: %d %d, 1 byte more %d; guard %llu sim %llu\n", (int)ra, (int)rb, (int)more,
           tl_guard_live(0), sim_live(0));
    if (more == CUDA_SUCCESS)
        CHECK(cuMemFree_v2(p));
    if (ra == CUDA_SUCCESS)
        CHECK(cuMipmappedArrayDestroy(a));
    if (rb == CUDA_SUCCESS)
        CHECK(cuMipmappedArrayDestroy(b));
    printf("mipmap levels: destroyed; guard %llu sim %llu\n", tl_guard_live(0), sim_live(0));
}

/* NULL outputs and invalid handles of the newer hooks: every return code
 * is the driver's (compared with an unguarded run), nothing recorded. */
static void nulls2(void)
{
    CUmemoryPool pool, def;
    CUmemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = 0;
    CUmemLocation loc = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0 };
    CUdeviceptr p, va;
    CUmemGenericAllocationHandle h;
    CUgraph g;
    CUgraphNode n;
    CHECK(cuDeviceGetDefaultMemPool(&def, 0));
    CHECK(cuMemAddressReserve(&va, 2 * MiB, 0, 0, 0));
    CHECK(cuGraphCreate(&g, 0));
    CUDA_ARRAY3D_DESCRIPTOR d3 = { 16, 16, 0, CU_AD_FORMAT_FLOAT, 1, 0 };
    CUmipmappedArray m = NULL; /* 0 levels are 1 (cuda.h clamps): that one is made */
    CUarray a;
    CUgraphNodeParams fp;
    memset(&fp, 0, sizeof fp);
    fp.type = CU_GRAPH_NODE_TYPE_MEM_FREE;
    fp.free.dptr = va;
    CUDA_MEM_ALLOC_NODE_PARAMS gp = graph_params(4096, 0);
    gp.poolProps.location.id = 1000; /* no such device */
    CUresult r[] = {
        cuMemPoolCreate(NULL, &props), cuMemPoolCreate(&pool, NULL), cuMemPoolDestroy(NULL),
        cuDeviceGetDefaultMemPool(NULL, 0), cuDeviceGetDefaultMemPool(&pool, 1000), cuDeviceGetMemPool(NULL, 0),
        cuMemGetDefaultMemPool(NULL, &loc, CU_MEM_ALLOCATION_TYPE_PINNED),
        cuMemGetMemPool(NULL, &loc, CU_MEM_ALLOCATION_TYPE_PINNED),
        cuMemAllocFromPoolAsync(NULL, 16, def, NULL), cuMemAllocFromPoolAsync(&p, 16, NULL, NULL),
        cuMemAllocFromPoolAsync(&p, 16, def, (CUstream)(uintptr_t)0x1234),
        cuMemRetainAllocationHandle(NULL, (void *)(uintptr_t)va), cuMemRetainAllocationHandle(&h, (void *)(uintptr_t)va),
        cuMemImportFromShareableHandle(NULL, (void *)(uintptr_t)0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
        cuMemImportFromShareableHandle(&h, (void *)(uintptr_t)987, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
        cuMemMap(va, 2 * MiB, 0, 0, 0), cuMemUnmap(va, 2 * MiB), cuMemRelease(0),
        cuMipmappedArrayCreate(NULL, &d3, 2), cuMipmappedArrayCreate(&m, NULL, 2), cuMipmappedArrayCreate(&m, &d3, 0),
        cuArray3DCreate_v2(NULL, &d3), cuArray3DCreate_v2(&a, NULL),
        cuStreamBeginCapture_v2(NULL, CU_STREAM_CAPTURE_MODE_GLOBAL), cuStreamEndCapture(NULL, NULL),
        cuStreamEndCapture_ptsz(NULL, NULL), cuStreamBeginCapture_v2((CUstream)(uintptr_t)0x1234, 0),
        cuGraphAddNode(&n, g, NULL, 0, &fp), cuGraphAddMemAllocNode(&n, g, NULL, 0, &gp),
        cuMemAllocAsync(&p, 16, (CUstream)(uintptr_t)0x1234),
    };
    for (size_t i = 0; i < sizeof r / sizeof r[0]; i++)
        printf("%d ", (int)r[i]);
    printf("\n");
    if (m)
        CHECK(cuMipmappedArrayDestroy(m));
    CHECK(cuGraphDestroy(g));
    CHECK(cuMemAddressFree(va, 2 * MiB));
}

/* A refusal's message lists what holds the device's quota: not pinned host
 * memory made with cuMemCreate (three 64 MiB handles in host memory, which
 * would fill the three places the message has), nor a sparse array (0
 * bytes). GPUMEM_LIMIT=4M: the 4 MiB on the device is what it must name. */
NOINLINE static void leak_host_handle(void)
{
    CUmemAllocationProp p = tl_vmm_prop(0);
    p.location.type = CU_MEM_LOCATION_TYPE_HOST;
    CUmemGenericAllocationHandle h;
    CHECK(cuMemCreate(&h, 64 * MiB, &p, 0));
}
NOINLINE static void leak_on_device(void)
{
    CUdeviceptr p;
    CHECK(cuMemAlloc_v2(&p, 4 * MiB));
}

static void refusal_lists(void)
{
    CUarray a;
    leak_sparse(&a);
    leak_host_handle(); /* three call sites: three groups, whatever the compiler unrolls */
    leak_host_handle();
    leak_host_handle();
    leak_on_device();
    CUdeviceptr p;
    printf("refusal lists: 1 byte more %d; guard %llu sim %llu\n", (int)cuMemAlloc_v2(&p, 1), tl_guard_live(0), sim_live(0));
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: hostile MODE [N]\n");
        return 2;
    }
    setup();
    const char *m = argv[1];
    int n = argc > 2 ? atoi(argv[2]) : 100;
    if (!strcmp(m, "vmm_races")) vmm_races(n);
    else if (!strcmp(m, "graph_races")) graph_races(n);
    else if (!strcmp(m, "capture_threads")) capture_threads(n, 0);
    else if (!strcmp(m, "capture_ptds")) capture_threads(n, 1);
    else if (!strcmp(m, "capture_errors")) capture_errors();
    else if (!strcmp(m, "pool_threads")) pool_threads(n);
    else if (!strcmp(m, "boundary")) boundary();
    else if (!strcmp(m, "injected")) injected();
    else if (!strcmp(m, "arrays")) arrays();
    else if (!strcmp(m, "nulls2")) nulls2();
    else if (!strcmp(m, "refusal_lists")) refusal_lists();
    else if (!strcmp(m, "mipmap_layered")) mipmap_layered();
    else if (!strcmp(m, "mipmap_levels")) mipmap_levels();
    else { fprintf(stderr, "unknown mode %s\n", m); return 2; }
    fflush(stdout);
    return 0;
}
