/*
 * sweeps.c - the programs of make stress's sweeps of the guard's own out of
 * memory (scripts/stress.sh, with tests/integration/oomshim.c preloaded
 * after the guard): each prints one line that says whether the guard ever
 * counted fewer bytes than the simulated driver held. No main of its own:
 * built into tests/stress/stress.c, which runs them as
 *
 *   trust nomem_fork N      N allocations held, 3 forks while a thread
 *                           allocates; each child allocates, frees, exits
 *   trust nomem_maps N      N rounds of handles created, mapped twice,
 *                           released while mapped, unmapped in one call over
 *                           two mappings; then handles up to the limit
 *   trust nomem_dumps N     N allocations held, a dump signal or a
 *                           gpumemguard_dump() after each, while a thread
 *                           allocates and frees
 *   trust nomem_gpa N       N rounds of every counted family through
 *                           pointers from cuGetProcAddress(_v2)
 *   trust nomem_pool N      N rounds of stream-ordered allocations from the
 *                           current pool and a pool of the program's; then
 *                           up to the limit
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include "../integration/testlib.h"

#include <cudaTypedefs.h>

#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Set when the guard counted fewer bytes than the driver held at one of
 * the points the sweeps look (never while another thread allocates). */
static int under;

static void not_under(void)
{
    if (tl_guard_live(0) < tl_sim(0).live)
        under++;
}

/* churn, with a pause while it holds each allocation: the allocations
 * still cross the other threads' reports and forks, and leave the other
 * core of a small machine to them (a sweep makes hundreds of runs) */
static void *churn_paced(void *arg)
{
    (void)arg;
    CHECK(cuCtxSetCurrent(tl_ctx));
    struct timespec ts = { 0, 20000 };
    while (!__atomic_load_n(&tl_stop, __ATOMIC_ACQUIRE)) {
        CUdeviceptr d;
        if (cuMemAlloc_v2(&d, 4096) == CUDA_SUCCESS) {
            nanosleep(&ts, NULL);
            cuMemFree_v2(d);
        }
    }
    return NULL;
}

/* A forked child: its table starts empty, its allocations are counted
 * (never fewer bytes than it holds), its exit report is its own; `leak`
 * allocations are left for it to list. */
static int fork_child(int leak)
{
    CUdeviceptr d[4];
    if (cuCtxSetCurrent(tl_ctx) != CUDA_SUCCESS || tl_guard_live(0) != 0)
        return 2;
    for (int i = 0; i < 4; i++)
        if (cuMemAlloc_v2(&d[i], 8192) != CUDA_SUCCESS)
            return 3;
    if (tl_guard_live(0) < 4 * 8192)
        return 4;
    for (int i = 0; i < 4 - leak; i++)
        if (cuMemFree_v2(d[i]) != CUDA_SUCCESS)
            return 5;
    return tl_guard_live(0) >= (unsigned long long)leak * 8192 && tl_guard_live(0) <= 4 * 8192 ? 0 : 6;
}

static void nomem_fork(int n)
{
    CUdeviceptr *p = calloc((size_t)n, sizeof *p);
    for (int i = 0; p && i < n; i++)
        CHECK(cuMemAlloc_v2(&p[i], 4096));
    unsigned long long held = tl_guard_live(0);
    not_under();
    pthread_t t;
    pthread_create(&t, NULL, churn_paced, NULL);
    int fine = 0;
    for (int k = 0; k < 3; k++) {
        pid_t pid = fork();
        if (pid == 0) {
            alarm(10); /* a child that inherited a held lock would hang */
            exit(fork_child(k == 2)); /* exit, not _exit: the child's exit report; the last one has a leak */
        }
        int st;
        waitpid(pid, &st, 0);
        fine += WIFEXITED(st) && WEXITSTATUS(st) == 0;
    }
    __atomic_store_n(&tl_stop, 1, __ATOMIC_RELEASE);
    pthread_join(t, NULL);
    not_under();
    int same = tl_guard_live(0) >= held; /* the children's frees are not the parent's */
    for (int i = 0; p && i < n; i++)
        CHECK(cuMemFree_v2(p[i]));
    not_under();
    printf("nomem_fork: %d of 3 children fine; parent %s; guard %s the driver; sim %llu at the end\n", fine,
           same ? "kept its bytes" : "lost bytes", under ? "below" : "never below", (unsigned long long)tl_sim(0).live);
    free(p);
}

/* Handles mapped twice and released while mapped: the guard counts each
 * handle until its last mapping goes, whatever it could not record. */
static void maps_round(void)
{
    const size_t G = 2 << 20;
    CUmemAllocationProp prop = tl_vmm_prop(0);
    CUdeviceptr va;
    CUmemGenericAllocationHandle h[3];
    CHECK(cuMemAddressReserve(&va, 8 * G, 0, 0, 0));
    CHECK(cuMemCreate(&h[0], G, &prop, 0)); not_under();
    CHECK(cuMemCreate(&h[1], 2 * G, &prop, 0)); not_under();
    CHECK(cuMemCreate(&h[2], G, &prop, 0)); not_under();
    CHECK(cuMemMap(va, G, 0, h[0], 0)); not_under();
    CHECK(cuMemMap(va + G, G, 0, h[0], 0)); not_under();
    CHECK(cuMemMap(va + 2 * G, 2 * G, 0, h[1], 0)); not_under();
    CHECK(cuMemRelease(h[2])); not_under();        /* never mapped */
    CHECK(cuMemRelease(h[0])); not_under();        /* mapped twice */
    CHECK(cuMemUnmap(va, G)); not_under();         /* still mapped once */
    CHECK(cuMemRelease(h[1])); not_under();
    CHECK(cuMemUnmap(va + G, 3 * G)); not_under(); /* one call, two mappings */
    CHECK(cuMemAddressFree(va, 8 * G)); not_under();
}

static void nomem_maps(int rounds)
{
    for (int r = 0; r < rounds; r++)
        maps_round();
    /* then handles up to the limit, mapped, released while mapped */
    enum { MAX = 64 };
    CUmemGenericAllocationHandle h[MAX];
    CUmemAllocationProp prop = tl_vmm_prop(0);
    CUdeviceptr va;
    CHECK(cuMemAddressReserve(&va, (size_t)MAX << 21, 0, 0, 0));
    int n = 0;
    CUresult r = CUDA_SUCCESS;
    while (n < MAX && (r = cuMemCreate(&h[n], 2 << 20, &prop, 0)) == CUDA_SUCCESS) {
        not_under();
        CHECK(cuMemMap(va + ((size_t)n << 21), 2 << 20, 0, h[n], 0));
        CHECK(cuMemRelease(h[n]));
        n++;
    }
    not_under();
    CHECK(cuMemUnmap(va, (size_t)n << 21));
    not_under();
    CHECK(cuMemAddressFree(va, (size_t)MAX << 21));
    printf("nomem_maps: %d rounds, %d handles then %s; guard %s the driver; sim %llu at the end\n", rounds, n,
           r == CUDA_ERROR_OUT_OF_MEMORY ? "refused" : "not refused", under ? "below" : "never below",
           (unsigned long long)tl_sim(0).live);
}

/* n allocations held, a dump after each (signal and API in turn) while
 * another thread allocates and frees: every report must be whole */
static void nomem_dumps(int n)
{
    int (*dump)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "gpumemguard_dump");
    CUdeviceptr *p = calloc((size_t)n, sizeof *p);
    if (!dump || !p)
        exit(7);
    leak_before_exit();
    pthread_t t;
    pthread_create(&t, NULL, churn_paced, NULL);
    for (int i = 0; i < n; i++) {
        CHECK(cuMemAlloc_v2(&p[i], (size_t)(i + 1) << 12));
        if (i % 2)
            kill(getpid(), SIGUSR1);
        else
            dump();
    }
    __atomic_store_n(&tl_stop, 1, __ATOMIC_RELEASE);
    pthread_join(t, NULL);
    not_under();
    for (int i = 0; i < n; i++)
        CHECK(cuMemFree_v2(p[i]));
    not_under();
    printf("nomem_dumps: %d dumps asked; guard %s the driver\n", n, under ? "below" : "never below");
    free(p);
}

/* Every counted family through pointers cuGetProcAddress(_v2) handed out,
 * as the CUDA runtime gets them (also per thread, also the lookup of
 * cuGetProcAddress itself). */
struct gpa_api {
    PFN_cuMemAlloc_v3020 alloc;
    PFN_cuMemFree_v3020 free;
    PFN_cuMemAllocPitch_v3020 pitch;
    PFN_cuMemAllocManaged_v6000 managed;
    PFN_cuMemAllocAsync_v11020 async;
    PFN_cuMemAllocAsync_v11020_ptsz async_ptsz;
    PFN_cuMemFreeAsync_v11020 free_async;
    PFN_cuMemCreate_v10020 create;
    PFN_cuMemRelease_v10020 release;
    PFN_cuArrayCreate_v3020 array;
    PFN_cuArrayDestroy_v2000 array_destroy;
};

static void *gpa_get(PFN_cuGetProcAddress_v12000 gpa, const char *name, int version, cuuint64_t flags)
{
    void *fn = NULL;
    CUdriverProcAddressQueryResult st;
    if (gpa(name, &fn, version, flags, &st) != CUDA_SUCCESS || !fn) {
        fprintf(stderr, "cuGetProcAddress_v2(%s, %d) failed\n", name, version);
        exit(8);
    }
    return fn;
}

static void gpa_load(struct gpa_api *a)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    PFN_cuGetProcAddress_v12000 first = h ? (PFN_cuGetProcAddress_v12000)dlsym(h, "cuGetProcAddress_v2") : NULL;
    PFN_cuGetProcAddress_v11030 legacy = h ? (PFN_cuGetProcAddress_v11030)dlsym(h, "cuGetProcAddress") : NULL;
    if (!first || !legacy)
        exit(8);
    PFN_cuGetProcAddress_v12000 gpa = (PFN_cuGetProcAddress_v12000)gpa_get(first, "cuGetProcAddress", 12000, 0);
    const cuuint64_t PT = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
    a->alloc = (PFN_cuMemAlloc_v3020)gpa_get(gpa, "cuMemAlloc", 3020, 0);
    a->free = (PFN_cuMemFree_v3020)gpa_get(gpa, "cuMemFree", 3020, 0);
    a->pitch = (PFN_cuMemAllocPitch_v3020)gpa_get(gpa, "cuMemAllocPitch", 3020, 0);
    a->managed = (PFN_cuMemAllocManaged_v6000)gpa_get(gpa, "cuMemAllocManaged", 6000, 0);
    a->async = (PFN_cuMemAllocAsync_v11020)gpa_get(gpa, "cuMemAllocAsync", 11020, 0);
    a->async_ptsz = (PFN_cuMemAllocAsync_v11020_ptsz)gpa_get(gpa, "cuMemAllocAsync", 11020, PT);
    a->free_async = (PFN_cuMemFreeAsync_v11020)gpa_get(gpa, "cuMemFreeAsync", 11020, 0);
    a->create = (PFN_cuMemCreate_v10020)gpa_get(gpa, "cuMemCreate", 10020, 0);
    a->release = (PFN_cuMemRelease_v10020)gpa_get(gpa, "cuMemRelease", 10020, 0);
    a->array_destroy = (PFN_cuArrayDestroy_v2000)gpa_get(gpa, "cuArrayDestroy", 2000, 0);
    void *fn = NULL; /* one through the 4-argument ABI */
    if (legacy("cuArrayCreate", &fn, 3020, 0) != CUDA_SUCCESS || !fn)
        exit(8);
    a->array = (PFN_cuArrayCreate_v3020)fn;
}

static void nomem_gpa(int rounds)
{
    struct gpa_api a;
    gpa_load(&a);
    CUmemAllocationProp prop = tl_vmm_prop(0);
    CUDA_ARRAY_DESCRIPTOR ad = { 256, 64, CU_AD_FORMAT_FLOAT, 1 };
    for (int i = 0; i < rounds; i++) {
        CUdeviceptr d, pd, m, as, ap;
        size_t pitch;
        CUmemGenericAllocationHandle h;
        CUarray arr;
        CHECK(a.alloc(&d, 1 << 16)); not_under();
        CHECK(a.pitch(&pd, &pitch, 1000, 16, 4)); not_under();
        CHECK(a.managed(&m, 1 << 15, CU_MEM_ATTACH_GLOBAL)); not_under();
        CHECK(a.async(&as, 3 << 12, NULL)); not_under();
        CHECK(a.async_ptsz(&ap, 5 << 12, NULL)); not_under();
        CHECK(a.create(&h, 2 << 20, &prop, 0)); not_under();
        CHECK(a.array(&arr, &ad)); not_under();
        if (tl_guard_live(0) == 0)
            under++; /* a route that bypassed the guard */
        CHECK(a.free(d)); not_under();
        CHECK(a.free(pd)); not_under();
        CHECK(a.free(m)); not_under();
        CHECK(a.free_async(as, NULL)); not_under();
        CHECK(a.free_async(ap, NULL)); not_under();
        CHECK(a.release(h)); not_under();
        CHECK(a.array_destroy(arr)); not_under();
    }
    printf("nomem_gpa: %d rounds through cuGetProcAddress; guard %s the driver; sim %llu at the end\n", rounds,
           under ? "below" : "never below", (unsigned long long)tl_sim(0).live);
}

/* Stream-ordered allocations from the device's current pool and from one
 * of the program's own, then up to the limit. */
static void nomem_pool(int rounds)
{
    CUmemoryPool pool;
    CUmemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = 0;
    CHECK(cuMemPoolCreate(&pool, &props));
    for (int i = 0; i < rounds; i++) {
        CUdeviceptr a, b, c;
        CHECK(cuMemAllocAsync(&a, 1 << 16, NULL)); not_under();
        CHECK(cuMemAllocFromPoolAsync(&b, 3 << 14, pool, NULL)); not_under();
        CHECK(cuMemAllocFromPoolAsync_ptsz(&c, 5 << 12, pool, NULL)); not_under();
        CHECK(cuMemFreeAsync(b, NULL)); not_under();
        CHECK(cuMemFreeAsync_ptsz(a, NULL)); not_under();
        CHECK(cuMemFreeAsync(c, NULL)); not_under();
    }
    enum { MAX = 80 };
    CUdeviceptr p[MAX];
    int n = 0;
    CUresult r = CUDA_SUCCESS;
    while (n < MAX && (r = cuMemAllocFromPoolAsync(&p[n], 1 << 20, pool, NULL)) == CUDA_SUCCESS) {
        not_under();
        n++;
    }
    not_under();
    for (int i = 0; i < n; i++)
        CHECK(cuMemFreeAsync(p[i], NULL));
    not_under();
    CHECK(cuMemPoolDestroy(pool));
    printf("nomem_pool: %d rounds, %d from the pool then %s; guard %s the driver; sim %llu at the end\n", rounds, n,
           r == CUDA_ERROR_OUT_OF_MEMORY ? "refused" : "not refused", under ? "below" : "never below",
           (unsigned long long)tl_sim(0).live);
}

static int sweeps_mode(int argc, char **argv)
{
    const char *m = argv[1];
    int n = argc > 2 ? atoi(argv[2]) : 0;
    if (!strcmp(m, "nomem_fork")) nomem_fork(n);
    else if (!strcmp(m, "nomem_maps")) nomem_maps(n);
    else if (!strcmp(m, "nomem_dumps")) nomem_dumps(n);
    else if (!strcmp(m, "nomem_gpa")) nomem_gpa(n);
    else if (!strcmp(m, "nomem_pool")) nomem_pool(n);
    else return 0;
    return 1;
}
