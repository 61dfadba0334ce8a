/*
 * apitest.c - drives every allocation family through a chosen route against
 * the simulated driver. Each leak is made from its own named function so
 * reports can be checked by function name and exact bytes.
 *
 *   apitest ROUTE families      one leak per family, plus alloc/free pairs
 *   apitest ROUTE limit BYTES   each counted family: exactly BYTES succeeds,
 *                               BYTES+1 (more) is refused with OOM
 *   apitest ROUTE reset         leak, then cuDevicePrimaryCtxReset
 *   apitest ROUTE ctxdestroy    leak in a created context, then destroy it
 *   apitest ROUTE threads       8 threads x 20000 random alloc/free
 *   apitest ROUTE hammer        8 threads allocating near the limit
 *   apitest ROUTE fork          parent and child each leak their own
 *   apitest ROUTE info          print cuMemGetInfo / cuDeviceTotalMem
 *   apitest ROUTE nulls         NULL output pointers everywhere
 *   apitest ROUTE unknownfree   free pointers the guard never saw
 *   apitest ROUTE vmmrefs       VMM handle references: NCCL's free (retain,
 *                               release, unmap, release), an imported handle
 *   apitest ROUTE importsame    (GPUSIM_IMPORT_SAME) an import that gives back
 *                               a handle the process holds: one reference more
 *   apitest ROUTE poolimport    a pool's pointer exported and imported
 *                               (as another process would): reported as
 *                               imported, never counted, freed by
 *                               cuMemFreeAsync and cuMemFree
 *   apitest ROUTE pooldev       (2 devices) allocations from device 1's pools
 *                               while device 0's context is current
 *   apitest ROUTE poolat        (2 devices) CUDA 13's pools by location: the
 *                               host's default pool and device 1's, from
 *                               cuMemGetDefaultMemPool / cuMemGetMemPool
 *   apitest ROUTE graphs        graph allocations freed in another graph
 *   apitest ROUTE capture       cuMemAllocAsync while a stream captures
 *                               (GPUMEM_LIMIT=4M)
 *   apitest ROUTE captureptds   the same on the per-thread default stream, named
 *                               NULL in the _ptsz calls (GPUMEM_LIMIT=4M)
 *   apitest ROUTE capturerace   two threads end one capture while another
 *                               goes on (GPUMEM_LIMIT=4M,
 *                               GPUSIM_END_CAPTURE_DELAY_US)
 */
#define _GNU_SOURCE
#include "api.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

#include "../sim/sim.h" /* struct sim_stats, simGetStats */

static CUcontext ctx;

static void setup(void)
{
    CUdevice d;
    CHECK(A.cuInit(0));
    CHECK(A.cuDeviceGet(&d, 0));
    CHECK(A.cuDevicePrimaryCtxRetain(&ctx, d));
    CHECK(A.cuCtxSetCurrent(ctx));
}

static struct sim_stats sim(int dev)
{
    struct sim_stats s;
    memset(&s, 0, sizeof s);
    int (*get)(int, struct sim_stats *) = (int (*)(int, struct sim_stats *))dlsym(RTLD_DEFAULT, "simGetStats");
    if (!get) {
        void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
        get = h ? (int (*)(int, struct sim_stats *))dlsym(h, "simGetStats") : NULL;
    }
    if (get)
        get(dev, &s);
    return s;
}

static unsigned long long guard_live(void)
{
    unsigned long long (*f)(int) = (unsigned long long (*)(int))dlsym(RTLD_DEFAULT, "gpumemguard_live_bytes");
    return f ? f(-1) : 0;
}

static CUmemAllocationProp vmm_prop(void)
{
    CUmemAllocationProp p;
    memset(&p, 0, sizeof p);
    p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    p.location.id = 0;
    return p;
}

/* ------------------------------------------------------------ leak sites */

NOINLINE static void leak_linear(void) { CUdeviceptr p; CHECK(A.cuMemAlloc_v2(&p, 1048576)); }
NOINLINE static void leak_legacy(void) { CUdeviceptr_v1 p; CHECK(A.cuMemAlloc(&p, 12288)); }
NOINLINE static void leak_pitch(void) { CUdeviceptr p; size_t pitch; CHECK(A.cuMemAllocPitch_v2(&p, &pitch, 1000, 100, 4)); }
NOINLINE static void leak_managed(void) { CUdeviceptr p; CHECK(A.cuMemAllocManaged(&p, 2097152, CU_MEM_ATTACH_GLOBAL)); }
NOINLINE static void leak_async(void) { CUdeviceptr p; CHECK(A.cuMemAllocAsync(&p, 3145728, NULL)); }
NOINLINE static void leak_async_ptsz(void) { CUdeviceptr p; CHECK(A.cuMemAllocAsync_ptsz(&p, 3670016, NULL)); }
NOINLINE static void leak_pool(void)
{
    CUmemoryPool pool;
    CUdeviceptr p;
    CHECK(A.cuDeviceGetDefaultMemPool(&pool, 0));
    CHECK(A.cuMemAllocFromPoolAsync(&p, 4194304, pool, NULL));
}
NOINLINE static void leak_vmm(void)
{
    CUmemAllocationProp prop = vmm_prop();
    CUmemGenericAllocationHandle h;
    CUdeviceptr va;
    CHECK(A.cuMemCreate(&h, 6291456, &prop, 0));
    CHECK(A.cuMemAddressReserve(&va, 8388608, 0, 0, 0));
    CHECK(A.cuMemMap(va, 6291456, 0, h, 0));
}
NOINLINE static void leak_array(void)
{
    CUDA_ARRAY_DESCRIPTOR d = { 256, 128, CU_AD_FORMAT_FLOAT, 4 }; /* 524288 bytes */
    CUarray a;
    CHECK(A.cuArrayCreate_v2(&a, &d));
}
NOINLINE static void leak_array3d(void)
{
    CUDA_ARRAY3D_DESCRIPTOR d = { 64, 64, 16, CU_AD_FORMAT_UNSIGNED_INT16, 2, 0 }; /* 262144 bytes */
    CUarray a;
    CHECK(A.cuArray3DCreate_v2(&a, &d));
}
NOINLINE static void leak_mipmap(void)
{
    CUDA_ARRAY3D_DESCRIPTOR d = { 64, 64, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1, 0 }; /* 4096+1024+256 = 5376 */
    CUmipmappedArray m;
    CHECK(A.cuMipmappedArrayCreate(&m, &d, 3));
}
NOINLINE static void leak_host(void) { void *p; CHECK(A.cuMemAllocHost_v2(&p, 65536)); }
NOINLINE static void leak_hostalloc(void) { void *p; CHECK(A.cuMemHostAlloc(&p, 69632, 0)); }
NOINLINE static void leak_register(void)
{
    static char buf[73728];
    CHECK(A.cuMemHostRegister_v2(buf, sizeof buf, 0));
}
NOINLINE static void leak_ipc(void)
{
    CUdeviceptr p, q;
    CUipcMemHandle h;
    CHECK(A.cuMemAlloc_v2(&p, 524288 + 512));
    CHECK(A.cuIpcGetMemHandle(&h, p));
    CHECK(A.cuIpcOpenMemHandle_v2(&q, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
    CHECK(A.cuMemFree_v2(p));
}

/* A graph memory node's parameters on device 0 (cuGraphAddMemAllocNode's
 * and, in cuGraphAddNode's union, the same layout). */
static CUDA_MEM_ALLOC_NODE_PARAMS graph_params(size_t bytes)
{
    CUDA_MEM_ALLOC_NODE_PARAMS a;
    memset(&a, 0, sizeof a);
    a.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    a.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    a.poolProps.location.id = 0;
    a.bytesize = bytes;
    return a;
}

static CUgraphNodeParams graph_node_params(CUgraphNodeType type, size_t bytes, CUdeviceptr free_ptr)
{
    CUgraphNodeParams n;
    memset(&n, 0, sizeof n);
    n.type = type;
    if (type == CU_GRAPH_NODE_TYPE_MEM_ALLOC) {
        CUDA_MEM_ALLOC_NODE_PARAMS a = graph_params(bytes);
        memcpy(&n.alloc, &a, sizeof a);
    } else {
        n.free.dptr = free_ptr;
    }
    return n;
}

/* Graph memory nodes: reported, never counted. Freed neither in a graph nor
 * by the program, an allocation node's memory outlives its launch. */
NOINLINE static void leak_graph(void)
{
    CUgraph g;
    CUgraphNode n;
    CHECK(A.cuGraphCreate(&g, 0));
    CUDA_MEM_ALLOC_NODE_PARAMS a = graph_params(1114112);
    CHECK(A.cuGraphAddMemAllocNode(&n, g, NULL, 0, &a));
}
NOINLINE static void leak_graph_node(void)
{
    CUgraph g;
    CUgraphNode n;
    CHECK(A.cuGraphCreate(&g, 0));
    CUgraphNodeParams p = graph_node_params(CU_GRAPH_NODE_TYPE_MEM_ALLOC, 1179648, 0);
    CHECK(A.cuGraphAddNode_v2(&n, g, NULL, NULL, 0, &p));
}

/* Each family allocated and freed again: nothing of these may be reported. */
NOINLINE static void freed_everything(void)
{
    CUdeviceptr p;
    CUdeviceptr_v1 p1;
    size_t pitch;
    CHECK(A.cuMemAlloc_v2(&p, 777)); CHECK(A.cuMemFree_v2(p));
    CHECK(A.cuMemAlloc(&p1, 778)); CHECK(A.cuMemFree(p1));
    CHECK(A.cuMemAllocPitch_v2(&p, &pitch, 100, 10, 4)); CHECK(A.cuMemFree_v2(p));
    CHECK(A.cuMemAllocManaged(&p, 779, CU_MEM_ATTACH_GLOBAL)); CHECK(A.cuMemFree_v2(p));
    CHECK(A.cuMemAllocAsync(&p, 780, NULL)); CHECK(A.cuMemFreeAsync(p, NULL));
    CHECK(A.cuMemAllocAsync_ptsz(&p, 781, NULL)); CHECK(A.cuMemFreeAsync_ptsz(p, NULL));
    CUmemAllocationProp prop = vmm_prop();
    CUmemGenericAllocationHandle h;
    CUdeviceptr va;
    CHECK(A.cuMemCreate(&h, 2097152, &prop, 0));
    CHECK(A.cuMemAddressReserve(&va, 2097152, 0, 0, 0));
    CHECK(A.cuMemMap(va, 2097152, 0, h, 0));
    CHECK(A.cuMemUnmap(va, 2097152));
    CHECK(A.cuMemAddressFree(va, 2097152));
    CHECK(A.cuMemRelease(h));
    CUDA_ARRAY_DESCRIPTOR d = { 16, 16, CU_AD_FORMAT_FLOAT, 1 };
    CUarray a;
    CHECK(A.cuArrayCreate_v2(&a, &d)); CHECK(A.cuArrayDestroy(a));
    CUDA_ARRAY3D_DESCRIPTOR d3 = { 16, 16, 0, CU_AD_FORMAT_FLOAT, 1, 0 };
    CUmipmappedArray m;
    CHECK(A.cuMipmappedArrayCreate(&m, &d3, 2)); CHECK(A.cuMipmappedArrayDestroy(m));
    void *hp;
    CHECK(A.cuMemAllocHost_v2(&hp, 4096)); CHECK(A.cuMemFreeHost(hp));
    CHECK(A.cuMemHostAlloc(&hp, 4096, 0)); CHECK(A.cuMemFreeHost(hp));
    static char buf[8192];
    CHECK(A.cuMemHostRegister_v2(buf, sizeof buf, 0)); CHECK(A.cuMemHostUnregister(buf));
    CUipcMemHandle ih;
    CUdeviceptr q;
    CHECK(A.cuMemAlloc_v2(&p, 1024));
    CHECK(A.cuIpcGetMemHandle(&ih, p));
    CHECK(A.cuIpcOpenMemHandle_v2(&q, ih, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
    CHECK(A.cuIpcCloseMemHandle(q));
    CHECK(A.cuMemFree_v2(p));
    /* graph memory nodes: freed in the graph (both calls, both ABIs of
     * cuGraphAddNode), or by the program after the graph */
    CUgraph g;
    CUgraphNode n;
    CHECK(A.cuGraphCreate(&g, 0));
    CUDA_MEM_ALLOC_NODE_PARAMS ga = graph_params(4096);
    CHECK(A.cuGraphAddMemAllocNode(&n, g, NULL, 0, &ga));
    CHECK(A.cuGraphAddMemFreeNode(&n, g, NULL, 0, ga.dptr));
    ga = graph_params(8192);
    CHECK(A.cuGraphAddMemAllocNode(&n, g, NULL, 0, &ga));
    CHECK(A.cuMemFree_v2(ga.dptr));
    CUgraphNodeParams gp = graph_node_params(CU_GRAPH_NODE_TYPE_MEM_ALLOC, 12288, 0);
    CHECK(A.cuGraphAddNode(&n, g, NULL, 0, &gp));
    CUgraphNodeParams gf = graph_node_params(CU_GRAPH_NODE_TYPE_MEM_FREE, 0, gp.alloc.dptr);
    CHECK(A.cuGraphAddNode_v2(&n, g, NULL, NULL, 0, &gf));
    gp = graph_node_params(CU_GRAPH_NODE_TYPE_MEM_ALLOC, 16384, 0);
    CHECK(A.cuGraphAddNode_v2(&n, g, NULL, NULL, 0, &gp));
    gf = graph_node_params(CU_GRAPH_NODE_TYPE_MEM_FREE, 0, gp.alloc.dptr);
    CHECK(A.cuGraphAddNode(&n, g, NULL, 0, &gf));
    /* the driver's refusal of a second free node keeps nothing wrong */
    if (A.cuGraphAddMemFreeNode(&n, g, NULL, 0, ga.dptr) == CUDA_SUCCESS)
        printf("FAIL: a second free node was accepted\n");
    CHECK(A.cuGraphDestroy(g));
}

static void families(void)
{
    leak_linear(); leak_legacy(); leak_pitch(); leak_managed(); leak_async(); leak_async_ptsz(); leak_pool();
    leak_vmm(); leak_array(); leak_array3d(); leak_mipmap(); leak_host(); leak_hostalloc(); leak_register();
    leak_ipc(); leak_graph(); leak_graph_node();
    freed_everything();
    struct sim_stats s = sim(0);
    printf("sim live %llu guard live %llu\n", (unsigned long long)s.live, guard_live());
}

/* ----------------------------------------------------------------- limit */

static int refused(CUresult r) { return r == CUDA_ERROR_OUT_OF_MEMORY; }

static void limit(uint64_t L)
{
    int bad = 0;
    CUdeviceptr p;
    size_t pitch;
    CUmemoryPool pool;
    CHECK(A.cuDeviceGetDefaultMemPool(&pool, 0));
#define EXACT_AND_OVER(name, alloc_exact, alloc_over, release) do { \
        CUresult r1 = (alloc_exact); \
        CUresult r2 = (alloc_over); \
        int ok = r1 == CUDA_SUCCESS && refused(r2); \
        printf("%s: exact %d over %d %s\n", name, (int)r1, (int)r2, ok ? "ok" : "FAIL"); \
        bad |= !ok; \
        if (r1 == CUDA_SUCCESS) { release; } \
    } while (0)
    EXACT_AND_OVER("cuMemAlloc_v2", A.cuMemAlloc_v2(&p, L), A.cuMemAlloc_v2(&p, 1), A.cuMemFree_v2(p));
    {
        CUdeviceptr_v1 p1;
        EXACT_AND_OVER("cuMemAlloc", A.cuMemAlloc(&p1, (unsigned)L), A.cuMemAlloc(&p1, 1), A.cuMemFree(p1));
    }
    EXACT_AND_OVER("cuMemAllocManaged", A.cuMemAllocManaged(&p, L, 1), A.cuMemAllocManaged(&p, 1, 1), A.cuMemFree_v2(p));
    EXACT_AND_OVER("cuMemAllocAsync", A.cuMemAllocAsync(&p, L, NULL), A.cuMemAllocAsync(&p, 1, NULL), A.cuMemFreeAsync(p, NULL));
    EXACT_AND_OVER("cuMemAllocAsync_ptsz", A.cuMemAllocAsync_ptsz(&p, L, NULL), A.cuMemAllocAsync_ptsz(&p, 1, NULL),
                   A.cuMemFreeAsync_ptsz(p, NULL));
    EXACT_AND_OVER("cuMemAllocFromPoolAsync", A.cuMemAllocFromPoolAsync(&p, L, pool, NULL),
                   A.cuMemAllocFromPoolAsync(&p, 1, pool, NULL), A.cuMemFreeAsync(p, NULL));
    /* pitch: 512-byte rows, so L/512 rows fill the limit exactly */
    EXACT_AND_OVER("cuMemAllocPitch_v2", A.cuMemAllocPitch_v2(&p, &pitch, 512, L / 512, 4),
                   A.cuMemAllocPitch_v2(&p, &pitch, 1, 1, 4), A.cuMemFree_v2(p));
    {
        CUmemAllocationProp prop = vmm_prop();
        CUmemGenericAllocationHandle h, h2;
        EXACT_AND_OVER("cuMemCreate", A.cuMemCreate(&h, L, &prop, 0), A.cuMemCreate(&h2, 2097152, &prop, 0),
                       A.cuMemRelease(h));
    }
    {
        /* L bytes of float4 elements: width = L / 16 */
        CUDA_ARRAY_DESCRIPTOR d = { L / 16, 1, CU_AD_FORMAT_FLOAT, 4 }, d1 = { 1, 1, CU_AD_FORMAT_UNSIGNED_INT8, 1 };
        CUarray a, a2;
        EXACT_AND_OVER("cuArrayCreate_v2", A.cuArrayCreate_v2(&a, &d), A.cuArrayCreate_v2(&a2, &d1), A.cuArrayDestroy(a));
        CUDA_ARRAY3D_DESCRIPTOR d3 = { L / 16, 0, 0, CU_AD_FORMAT_FLOAT, 4, 0 }, d31 = { 1, 0, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1, 0 };
        EXACT_AND_OVER("cuArray3DCreate_v2", A.cuArray3DCreate_v2(&a, &d3), A.cuArray3DCreate_v2(&a2, &d31),
                       A.cuArrayDestroy(a));
        CUmipmappedArray m, m2;
        EXACT_AND_OVER("cuMipmappedArrayCreate", A.cuMipmappedArrayCreate(&m, &d3, 1),
                       A.cuMipmappedArrayCreate(&m2, &d31, 1), A.cuMipmappedArrayDestroy(m));
    }
    /* not counted: host memory and reserved address space go through */
    void *hp;
    CUresult rh = A.cuMemAllocHost_v2(&hp, L + 4096);
    printf("cuMemAllocHost_v2 over the limit: %d %s\n", (int)rh, rh == CUDA_SUCCESS ? "ok" : "FAIL");
    bad |= rh != CUDA_SUCCESS;
    if (rh == CUDA_SUCCESS)
        A.cuMemFreeHost(hp);
    CUgraph g;
    CUgraphNode n;
    CHECK(A.cuGraphCreate(&g, 0));
    CUDA_MEM_ALLOC_NODE_PARAMS ga = graph_params(L + 4096);
    CUresult rg = A.cuGraphAddMemAllocNode(&n, g, NULL, 0, &ga);
    printf("cuGraphAddMemAllocNode over the limit: %d %s\n", (int)rg, rg == CUDA_SUCCESS ? "ok" : "FAIL");
    bad |= rg != CUDA_SUCCESS;
    /* free makes room again; the graph's allocation, live, takes none */
    CUresult r3 = A.cuMemAlloc_v2(&p, L);
    printf("after frees: %d %s\n", (int)r3, r3 == CUDA_SUCCESS ? "ok" : "FAIL");
    bad |= r3 != CUDA_SUCCESS;
    if (rg == CUDA_SUCCESS)
        CHECK(A.cuMemFree_v2(ga.dptr));
    struct sim_stats s = sim(0);
    printf("sim peak %llu limit %llu %s\n", (unsigned long long)s.peak, (unsigned long long)L,
           s.peak <= L ? "ok" : "FAIL");
    bad |= s.peak > L;
    printf("%s\n", bad ? "LIMIT FAIL" : "LIMIT OK");
}

/* ------------------------------------------------------- reset, destroy */

NOINLINE static void leak_before_reset(void) { CUdeviceptr p; CHECK(A.cuMemAlloc_v2(&p, 5242880)); }
NOINLINE static void leak_after_reset(void) { CUdeviceptr p; CHECK(A.cuMemAlloc_v2(&p, 131072)); }

static void reset(void)
{
    leak_before_reset();
    CHECK(A.cuDevicePrimaryCtxReset_v2(0));
    CUcontext c;
    CHECK(A.cuDevicePrimaryCtxRetain(&c, 0));
    CHECK(A.cuCtxSetCurrent(c));
    leak_after_reset();
    printf("guard live %llu sim live %llu\n", guard_live(), (unsigned long long)sim(0).live);
}

NOINLINE static void leak_in_created_ctx(void) { CUdeviceptr p; CHECK(A.cuMemAlloc_v2(&p, 393216)); }

static void ctxdestroy(void)
{
    CUcontext c;
    CHECK(A.cuCtxCreate_v2(&c, 0, 0));
    CHECK(A.cuCtxSetCurrent(c));
    leak_in_created_ctx();
    leak_graph(); /* its address goes with the context */
    CHECK(A.cuCtxDestroy_v2(c));
    CHECK(A.cuCtxSetCurrent(ctx));
    printf("guard live %llu sim live %llu\n", guard_live(), (unsigned long long)sim(0).live);
}

/* --------------------------------------------------------------- threads */

struct worker { unsigned seed; int iters; int hammer; uint64_t refusals; };

static void *work(void *arg)
{
    struct worker *w = arg;
    CHECK(A.cuCtxSetCurrent(ctx));
    enum { SLOTS = 64 };
    CUdeviceptr live[SLOTS] = { 0 };
    for (int i = 0; i < w->iters; i++) {
        int k = rand_r(&w->seed) % SLOTS;
        if (live[k]) {
            int which = rand_r(&w->seed) % 2;
            CHECK(which ? A.cuMemFree_v2(live[k]) : A.cuMemFreeAsync(live[k], NULL));
            live[k] = 0;
        } else {
            size_t sz = w->hammer ? 65536 + (size_t)(rand_r(&w->seed) % 65536) : 1 + (size_t)(rand_r(&w->seed) % 100000);
            int which = rand_r(&w->seed) % 3;
            CUresult r = which == 0 ? A.cuMemAlloc_v2(&live[k], sz)
                       : which == 1 ? A.cuMemAllocAsync(&live[k], sz, NULL)
                                    : A.cuMemAllocManaged(&live[k], sz, 1);
            if (r == CUDA_ERROR_OUT_OF_MEMORY) {
                w->refusals++;
                live[k] = 0;
            } else if (r != CUDA_SUCCESS) {
                fprintf(stderr, "alloc failed %d\n", (int)r);
                exit(1);
            }
        }
    }
    for (int k = 0; k < SLOTS; k++)
        if (live[k])
            CHECK(A.cuMemFree_v2(live[k]));
    return NULL;
}

static void threads(int hammer)
{
    pthread_t t[8];
    struct worker w[8];
    for (int i = 0; i < 8; i++) {
        w[i] = (struct worker){ .seed = 1234u + (unsigned)i, .iters = 20000, .hammer = hammer };
        pthread_create(&t[i], NULL, work, &w[i]);
    }
    uint64_t refusals = 0;
    for (int i = 0; i < 8; i++) {
        pthread_join(t[i], NULL);
        refusals += w[i].refusals;
    }
    struct sim_stats s = sim(0);
    printf("refusals %llu sim live %llu sim peak %llu guard live %llu allocs %llu frees %llu\n",
           (unsigned long long)refusals, (unsigned long long)s.live, (unsigned long long)s.peak, guard_live(),
           (unsigned long long)s.allocs, (unsigned long long)s.frees);
}

/* ------------------------------------------------------------------ fork */

NOINLINE static void parent_leak(void) { CUdeviceptr p; CHECK(A.cuMemAlloc_v2(&p, 1111552)); }
NOINLINE static void child_leak(void) { CUdeviceptr p; CHECK(A.cuMemAlloc_v2(&p, 2222080)); }

static void forktest(void)
{
    parent_leak();
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        child_leak();
        exit(0);
    }
    int st;
    waitpid(pid, &st, 0);
    printf("child exit %d\n", WEXITSTATUS(st));
}

/* ----------------------------------------------------------------- other */

static void info(void)
{
    size_t f = 0, t = 0, dt = 0;
    CHECK(A.cuMemGetInfo_v2(&f, &t));
    CHECK(A.cuDeviceTotalMem_v2(&dt, 0));
    printf("free %zu total %zu devtotal %zu\n", f, t, dt);
    CUdeviceptr p;
    if (A.cuMemAlloc_v2(&p, 1048576) == CUDA_SUCCESS) {
        CHECK(A.cuMemGetInfo_v2(&f, &t));
        printf("after 1MiB: free %zu total %zu\n", f, t);
    }
    CUresult r = A.cuMemGetInfo_v2(&f, NULL);
    printf("null total: %d\n", (int)r);
}

static void nulls(void)
{
    size_t pitch;
    CUmemAllocationProp prop = vmm_prop();
    printf("%d %d %d %d %d %d %d %d %d %d\n", (int)A.cuMemAlloc_v2(NULL, 16), (int)A.cuMemAllocPitch_v2(NULL, &pitch, 4, 4, 4),
           (int)A.cuMemAllocManaged(NULL, 16, 1), (int)A.cuMemAllocAsync(NULL, 16, NULL),
           (int)A.cuMemCreate(NULL, 2097152, &prop, 0), (int)A.cuMemAddressReserve(NULL, 2097152, 0, 0, 0),
           (int)A.cuArrayCreate_v2(NULL, NULL), (int)A.cuMemAllocHost_v2(NULL, 16),
           (int)A.cuMemGetInfo_v2(NULL, NULL), (int)A.cuDeviceTotalMem_v2(NULL, 0));
    CUgraph g;
    CUgraphNode n;
    CHECK(A.cuGraphCreate(&g, 0));
    CUDA_MEM_ALLOC_NODE_PARAMS ga = graph_params(4096), gz = graph_params(0);
    printf("graph %d %d %d %d %d %d %d\n", (int)A.cuGraphAddMemAllocNode(&n, g, NULL, 0, NULL),
           (int)A.cuGraphAddMemAllocNode(NULL, g, NULL, 0, &ga), (int)A.cuGraphAddMemAllocNode(&n, NULL, NULL, 0, &ga),
           (int)A.cuGraphAddMemAllocNode(&n, g, NULL, 0, &gz), (int)A.cuGraphAddNode(&n, g, NULL, 0, NULL),
           (int)A.cuGraphAddNode_v2(NULL, g, NULL, NULL, 0, NULL), (int)A.cuGraphAddMemFreeNode(&n, g, NULL, 0, 0x1234));
    CHECK(A.cuGraphDestroy(g));
    CUdeviceptr p;
    CUresult r = A.cuMemAlloc_v2(&p, 0);
    printf("zero bytes: %d\n", (int)r);
    printf("nulls survived\n");
}

/* Graph memory nodes freed in another graph than the one that allocates
 * them (cuda.h, cuGraphAddMemAllocNode): the driver's answers, which the
 * guard must pass through unchanged. x is freed in b; y in its own graph a;
 * z in b too. Destroying b ends x's free node, not x: its allocation node
 * lives on in a, and the program may free it. z, not freed in its own
 * graph, may be freed by the program while b lives. y is a's alone: never
 * outside a, and gone with a. */
static void graphs(void)
{
    CUgraph a, b;
    CUgraphNode n;
    CHECK(A.cuGraphCreate(&a, 0));
    CHECK(A.cuGraphCreate(&b, 0));
    CUDA_MEM_ALLOC_NODE_PARAMS x = graph_params(65536), y = graph_params(131072), z = graph_params(196608);
    CHECK(A.cuGraphAddMemAllocNode(&n, a, NULL, 0, &x));
    CHECK(A.cuGraphAddMemAllocNode(&n, a, NULL, 0, &y));
    CHECK(A.cuGraphAddMemAllocNode(&n, a, NULL, 0, &z));
    int x_b = A.cuGraphAddMemFreeNode(&n, b, NULL, 0, x.dptr), x_a = A.cuGraphAddMemFreeNode(&n, a, NULL, 0, x.dptr);
    int y_a = A.cuGraphAddMemFreeNode(&n, a, NULL, 0, y.dptr), y_b = A.cuGraphAddMemFreeNode(&n, b, NULL, 0, y.dptr);
    int z_b = A.cuGraphAddMemFreeNode(&n, b, NULL, 0, z.dptr);
    int z_free = A.cuMemFree_v2(z.dptr), y_free = A.cuMemFree_v2(y.dptr);
    CHECK(A.cuGraphDestroy(b));
    int x_free = A.cuMemFree_v2(x.dptr);
    CHECK(A.cuGraphDestroy(a));
    int y_gone = A.cuMemFree_v2(y.dptr);
    printf("graphs: free nodes x %d %d, y %d %d, z %d; cuMemFree z %d, y %d; after b x %d; after a y %d\n", x_b, x_a,
           y_a, y_b, z_b, z_free, y_free, x_free, y_gone);
}

static void unknownfree(void)
{
    printf("free unknown: %d %d\n", (int)A.cuMemFree_v2((CUdeviceptr)0x1234), (int)A.cuMemFree_v2(0));
}

/* Stream capture makes graph allocation nodes of cuMemAllocAsync calls:
 * 8 MiB captured under a 4 MiB limit goes through, counted nowhere, and is
 * reported as a graph's; freed in the capture it is gone; the same stream
 * after the capture allocates memory again, counted. */
NOINLINE static void leak_captured(CUstream s, CUdeviceptr *p) { CHECK(A.cuMemAllocAsync(p, 8388608, s)); }

static void capture(void)
{
    CUstream s;
    CUgraph g;
    CUdeviceptr p, q, r, x;
    CUmemoryPool pool;
    CHECK(A.cuStreamCreate(&s, 0));
    CHECK(A.cuDeviceGetDefaultMemPool(&pool, 0));
    CHECK(A.cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    leak_captured(s, &p);
    CHECK(A.cuMemAllocAsync(&q, 1048576, s));
    CHECK(A.cuMemAllocFromPoolAsync(&x, 6291456, pool, s));
    CHECK(A.cuMemFreeAsync(q, s));
    CHECK(A.cuMemFreeAsync(x, s));
    printf("capture: while capturing guard %llu sim %llu\n", guard_live(), (unsigned long long)sim(0).live);
    CHECK(A.cuStreamEndCapture(s, &g));
    CUresult r1 = A.cuMemAllocAsync(&r, 3145728, s), r2 = A.cuMemAllocAsync(&q, 2097152, s);
    printf("capture: after it 3 MiB %d, 2 MiB more %d; guard %llu sim %llu\n", (int)r1, (int)r2, guard_live(),
           (unsigned long long)sim(0).live);
    if (r1 == CUDA_SUCCESS)
        CHECK(A.cuMemFreeAsync(r, s));
    if (r2 == CUDA_SUCCESS)
        CHECK(A.cuMemFreeAsync(q, s));
    CHECK(A.cuStreamDestroy_v2(s));
}

/* Two threads end the same capture at once (one of them in error: the
 * stream no longer captures when its call reaches the driver) while another
 * stream's capture goes on: only the end that ended it may count it ended,
 * so the other stream's captured 8 MiB (GPUMEM_LIMIT=4M) still go through,
 * a graph's, uncounted. Run with GPUSIM_END_CAPTURE_DELAY_US. */
static void *end_capture_thread(void *arg)
{
    CUgraph g;
    return (void *)(intptr_t)A.cuStreamEndCapture(*(CUstream *)arg, &g);
}

static void capturerace(void)
{
    CUstream s1, s2;
    CUdeviceptr p;
    pthread_t t[2];
    void *r[2];
    CHECK(A.cuStreamCreate(&s1, 0));
    CHECK(A.cuStreamCreate(&s2, 0));
    CHECK(A.cuStreamBeginCapture_v2(s1, CU_STREAM_CAPTURE_MODE_RELAXED));
    CHECK(A.cuStreamBeginCapture_v2(s2, CU_STREAM_CAPTURE_MODE_RELAXED));
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, end_capture_thread, &s1);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], &r[i]);
    int ok = (r[0] == NULL) + (r[1] == NULL);
    CUresult a = A.cuMemAllocAsync(&p, 8388608, s2);
    printf("capturerace: ends that succeeded %d; 8 MiB on the other capture %d; guard %llu\n", ok, (int)a,
           guard_live());
    if (a == CUDA_SUCCESS)
        CHECK(A.cuMemFreeAsync(p, s2));
    CUgraph g;
    CHECK(A.cuStreamEndCapture(s2, &g));
    CHECK(A.cuStreamDestroy_v2(s1));
    CHECK(A.cuStreamDestroy_v2(s2));
}

/* The per-thread default stream captures too; the _ptsz calls name it NULL,
 * which the guard must not take for the legacy stream (which cannot). */
static void captureptds(void)
{
    CUgraph g;
    CUdeviceptr p, q, r;
    CHECK(A.cuStreamBeginCapture_v2_ptsz(NULL, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    CHECK(A.cuMemAllocAsync_ptsz(&p, 8388608, NULL));
    CHECK(A.cuMemAllocAsync_ptsz(&q, 1048576, NULL));
    CHECK(A.cuMemFreeAsync_ptsz(q, NULL));
    printf("captureptds: while capturing guard %llu sim %llu\n", guard_live(), (unsigned long long)sim(0).live);
    CHECK(A.cuStreamEndCapture_ptsz(NULL, &g));
    CUresult r1 = A.cuMemAllocAsync_ptsz(&r, 3145728, NULL);
    printf("captureptds: after it 3 MiB %d; guard %llu sim %llu\n", (int)r1, guard_live(), (unsigned long long)sim(0).live);
    if (r1 == CUDA_SUCCESS)
        CHECK(A.cuMemFreeAsync_ptsz(r, NULL));
    CHECK(A.cuMemFree_v2(p)); /* not freed in its graph: the program's to free */
}

/* A handle's references as the driver counts them: the guard's count and the
 * driver's must agree at each step, and no release may be an unknown free. */
static void vmmrefs(void)
{
    CUmemAllocationProp prop = vmm_prop();
    CUmemGenericAllocationHandle h, again, imported;
    CUdeviceptr va, va2;
    CHECK(A.cuMemCreate(&h, 2097152, &prop, 0));
    CHECK(A.cuMemAddressReserve(&va, 2097152, 0, 0, 0));
    CHECK(A.cuMemMap(va, 2097152, 0, h, 0));
    /* NCCL's ncclCuMemFree */
    CHECK(A.cuMemRetainAllocationHandle(&again, (void *)(uintptr_t)va));
    CHECK(A.cuMemRelease(again));
    printf("vmmrefs: retained and released once: guard %llu sim %llu\n", guard_live(), (unsigned long long)sim(0).live);
    CHECK(A.cuMemUnmap(va, 2097152));
    printf("vmmrefs: unmapped, a reference left: guard %llu sim %llu\n", guard_live(), (unsigned long long)sim(0).live);
    CHECK(A.cuMemRelease(again));
    printf("vmmrefs: released again: guard %llu sim %llu\n", guard_live(), (unsigned long long)sim(0).live);
    /* another process's handle, imported (here from this one) */
    CHECK(A.cuMemCreate(&h, 2097152, &prop, 0));
    int fd = -1;
    CHECK(A.cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    CHECK(A.cuMemImportFromShareableHandle(&imported, (void *)(uintptr_t)fd, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
    CHECK(A.cuMemMap(va, 2097152, 0, imported, 0));
    printf("vmmrefs: imported and mapped: guard %llu sim %llu\n", guard_live(), (unsigned long long)sim(0).live);
    CHECK(A.cuMemRelease(imported));
    CHECK(A.cuMemUnmap(va, 2097152));
    CHECK(A.cuMemRelease(h));
    CHECK(A.cuMemAddressFree(va, 2097152));
    /* one imported and kept: a leak of the IPC family, sized by its mapping */
    CHECK(A.cuMemCreate(&h, 2097152, &prop, 0));
    CHECK(A.cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    CHECK(A.cuMemImportFromShareableHandle(&imported, (void *)(uintptr_t)fd, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
    CHECK(A.cuMemAddressReserve(&va2, 4194304, 0, 0, 0));
    CHECK(A.cuMemMap(va2 + 2097152, 1048576, 1048576, imported, 0));
    CHECK(A.cuMemUnmap(va2 + 2097152, 1048576));
    CHECK(A.cuMemAddressFree(va2, 4194304));
    CHECK(A.cuMemRelease(h));
    printf("vmmrefs: done: guard %llu sim %llu\n", guard_live(), (unsigned long long)sim(0).live);
}

/* An import may give back the handle this process already holds (cuda.h:
 * no guarantee of a handle of its own; GPUSIM_IMPORT_SAME): one reference
 * more to a counted handle, which stays counted until its last release. */
static void importsame(void)
{
    CUmemAllocationProp prop = vmm_prop();
    CUmemGenericAllocationHandle h, imported;
    CUdeviceptr va;
    int fd = -1;
    CHECK(A.cuMemCreate(&h, 2097152, &prop, 0));
    CHECK(A.cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    CHECK(A.cuMemImportFromShareableHandle(&imported, (void *)(uintptr_t)fd, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
    printf("importsame: same handle %d: guard %llu sim %llu\n", imported == h, guard_live(), (unsigned long long)sim(0).live);
    CHECK(A.cuMemAddressReserve(&va, 2097152, 0, 0, 0));
    CHECK(A.cuMemMap(va, 2097152, 0, imported, 0));
    CHECK(A.cuMemRelease(imported));
    printf("importsame: one released: guard %llu sim %llu\n", guard_live(), (unsigned long long)sim(0).live);
    CHECK(A.cuMemUnmap(va, 2097152));
    printf("importsame: unmapped: guard %llu sim %llu\n", guard_live(), (unsigned long long)sim(0).live);
    CHECK(A.cuMemRelease(h));
    CHECK(A.cuMemAddressFree(va, 2097152));
    printf("importsame: done: guard %llu sim %llu\n", guard_live(), (unsigned long long)sim(0).live);
}

/* A pool's allocation exported, and imported as another process would
 * (here from the same pool; the simulator maps the same block again): the
 * import is imported memory, reported and never counted (SPEC §2), and its
 * frees are frees of a pointer the guard knows. */
NOINLINE static void import_leak(CUdeviceptr *p, CUmemoryPool pool, CUmemPoolPtrExportData *d)
{
    CHECK(A.cuMemPoolImportPointer(p, pool, d));
}

static void poolimport(void)
{
    CUmemPoolProps props = { 0 };
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = 0;
    CUmemoryPool pool;
    CUdeviceptr p, q1, q2, q3;
    CUmemPoolPtrExportData d;
    CHECK(A.cuMemPoolCreate(&pool, &props));
    CHECK(A.cuMemAllocFromPoolAsync(&p, 3 << 20, pool, NULL));
    CHECK(A.cuMemPoolExportPointer(&d, p));
    printf("poolimport: null out %d\n", (int)A.cuMemPoolImportPointer(NULL, pool, &d));
    import_leak(&q1, pool, &d);
    import_leak(&q2, pool, &d);
    import_leak(&q3, pool, &d);
    printf("poolimport: imported 3: guard %llu sim %llu\n", guard_live(), (unsigned long long)sim(0).live);
    CHECK(A.cuMemFreeAsync(q1, NULL));
    CHECK(A.cuMemFree_v2(q2));
    CHECK(A.cuMemFreeAsync(p, NULL));
    printf("poolimport: freed: guard %llu sim %llu\n", guard_live(), (unsigned long long)sim(0).live);
    CHECK(A.cuMemPoolDestroy(pool));
}

/* A pool's allocations are its device's, whichever context is current:
 * counted there, refused by that device's limit (GPUMEM_LIMIT=0:64M,1:4M). */
static unsigned long long guard_live_on(int dev)
{
    unsigned long long (*f)(int) = (unsigned long long (*)(int))dlsym(RTLD_DEFAULT, "gpumemguard_live_bytes");
    return f ? f(dev) : 0;
}

static void pooldev(void)
{
    CUmemoryPool def1, cur1, made1;
    CUdeviceptr a, b, c, d;
    CHECK(A.cuDeviceGetDefaultMemPool(&def1, 1));
    CHECK(A.cuMemAllocFromPoolAsync(&a, 1048576, def1, NULL));
    CUmemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = 1;
    CHECK(A.cuMemPoolCreate(&made1, &props));
    CHECK(A.cuMemAllocFromPoolAsync(&b, 2097152, made1, NULL));
    CHECK(A.cuDeviceGetMemPool(&cur1, 1));
    CHECK(A.cuMemAllocFromPoolAsync(&c, 524288, cur1, NULL));
    printf("pooldev: device 0 guard %llu sim %llu; device 1 guard %llu sim %llu\n", guard_live_on(0),
           (unsigned long long)sim(0).live, guard_live_on(1), (unsigned long long)sim(1).live);
    CUresult over = A.cuMemAllocFromPoolAsync(&d, 1048576, made1, NULL);
    CUresult fits0 = A.cuMemAlloc_v2(&d, 8388608);
    printf("pooldev: over device 1's limit %d, device 0 %d\n", (int)over, (int)fits0);
    if (fits0 == CUDA_SUCCESS)
        CHECK(A.cuMemFree_v2(d));
    /* a host pool: pinned host memory, over every device's limit, counted on none */
    CUmemoryPool hostp;
    props.location.type = CU_MEM_LOCATION_TYPE_HOST;
    props.location.id = 0;
    CHECK(A.cuMemPoolCreate(&hostp, &props));
    CUresult rh = A.cuMemAllocFromPoolAsync(&d, 134217728, hostp, NULL);
    printf("pooldev: host pool %d; device 0 guard %llu, device 1 guard %llu\n", (int)rh, guard_live_on(0), guard_live_on(1));
    CUdeviceptr e;
    CUresult r0 = A.cuMemAlloc_v2(&e, 68157440); /* refused: its message lists what holds device 0, not host memory */
    printf("pooldev: over device 0's limit %d\n", (int)r0);
    if (rh == CUDA_SUCCESS)
        CHECK(A.cuMemFreeAsync(d, NULL));
    CHECK(A.cuMemPoolDestroy(hostp));
    CHECK(A.cuMemFreeAsync(a, NULL));
    CHECK(A.cuMemFreeAsync(b, NULL));
    CHECK(A.cuMemFreeAsync(c, NULL));
    CHECK(A.cuMemPoolDestroy(made1));
    /* pools made and destroyed by the thousand: the last is still known */
    props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = 1;
    for (int i = 0; i < 3000; i++) {
        CHECK(A.cuMemPoolCreate(&made1, &props));
        if (i < 2999)
            CHECK(A.cuMemPoolDestroy(made1));
    }
    CHECK(A.cuMemAllocFromPoolAsync(&d, 1048576, made1, NULL));
    printf("pooldev: the 3000th pool: device 0 guard %llu, device 1 guard %llu\n", guard_live_on(0), guard_live_on(1));
    CHECK(A.cuMemFreeAsync(d, NULL));
    CHECK(A.cuMemPoolDestroy(made1));
    printf("pooldev: after the frees device 1 guard %llu sim %llu\n", guard_live_on(1), (unsigned long long)sim(1).live);
}

/* CUDA 13 names pools by location (cudaMemGetDefaultMemPool): the host's
 * default pool counts against no device, device 1's against device 1,
 * whichever context is current (GPUMEM_LIMIT=0:4M,1:4M). */
static void poolat(void)
{
    CUmemLocation host = { .type = CU_MEM_LOCATION_TYPE_HOST, .id = 0 };
    CUmemLocation dev1 = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 1 };
    CUmemoryPool hostp, def1, cur1;
    CUdeviceptr h = 0, a = 0, b = 0;
    CHECK(A.cuMemGetDefaultMemPool(&hostp, &host, CU_MEM_ALLOCATION_TYPE_PINNED));
    CHECK(A.cuMemGetDefaultMemPool(&def1, &dev1, CU_MEM_ALLOCATION_TYPE_PINNED));
    CHECK(A.cuMemGetMemPool(&cur1, &dev1, CU_MEM_ALLOCATION_TYPE_PINNED));
    CUresult rh = A.cuMemAllocFromPoolAsync(&h, 8388608, hostp, NULL);
    CUresult ra = A.cuMemAllocFromPoolAsync(&a, 2097152, def1, NULL);
    CUresult rb = A.cuMemAllocFromPoolAsync(&b, 1048576, cur1, NULL);
    printf("poolat: host %d, device 1 %d %d; device 0 guard %llu, device 1 guard %llu sim %llu\n", (int)rh, (int)ra,
           (int)rb, guard_live_on(0), guard_live_on(1), (unsigned long long)sim(1).live);
    if (rh == CUDA_SUCCESS)
        CHECK(A.cuMemFreeAsync(h, NULL));
    if (ra == CUDA_SUCCESS)
        CHECK(A.cuMemFreeAsync(a, NULL));
    if (rb == CUDA_SUCCESS)
        CHECK(A.cuMemFreeAsync(b, NULL));
}

static void no_context(void)
{
    CHECK(A.cuCtxSetCurrent(NULL));
    CUdeviceptr p;
    printf("no context: %d\n", (int)A.cuMemAlloc_v2(&p, 4096));
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: apitest ROUTE TEST [ARG]\n");
        return 2;
    }
    api_load(argv[1]);
    setup();
    const char *t = argv[2];
    if (!strcmp(t, "families")) families();
    else if (!strcmp(t, "limit")) limit(strtoull(argv[3], NULL, 0));
    else if (!strcmp(t, "reset")) reset();
    else if (!strcmp(t, "ctxdestroy")) ctxdestroy();
    else if (!strcmp(t, "threads")) threads(0);
    else if (!strcmp(t, "hammer")) threads(1);
    else if (!strcmp(t, "fork")) forktest();
    else if (!strcmp(t, "info")) info();
    else if (!strcmp(t, "nulls")) nulls();
    else if (!strcmp(t, "unknownfree")) unknownfree();
    else if (!strcmp(t, "graphs")) graphs();
    else if (!strcmp(t, "nocontext")) no_context();
    else if (!strcmp(t, "pooldev")) pooldev();
    else if (!strcmp(t, "poolat")) poolat();
    else if (!strcmp(t, "vmmrefs")) vmmrefs();
    else if (!strcmp(t, "capture")) capture();
    else if (!strcmp(t, "captureptds")) captureptds();
    else if (!strcmp(t, "capturerace")) capturerace();
    else if (!strcmp(t, "importsame")) importsame();
    else if (!strcmp(t, "poolimport")) poolimport();
    else { fprintf(stderr, "unknown test %s\n", t); return 2; }
    fflush(stdout);
    return 0;
}
