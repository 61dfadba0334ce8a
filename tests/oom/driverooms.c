/*
 * driverooms.c - the driver's own out of memory, and what was live at the
 * peak, against the simulated driver's capacity (GPUSIM_MEM):
 *   routes   every allocation route asks for more than the device has, twice
 *            from one call site, and linear once more from another; prints
 *            each answer ("ROUTE rc N")
 *   peak     a known peak: 3 x 1 MiB (peak_a) and 2 x 2 MiB (peak_b) live at
 *            once, then peak_b freed and 1 MiB (peak_c) made: the peak is
 *            7 MiB of peak_a and peak_b; then a driver OOM
 *   window   dumps through the API: 5 MiB (win_big) made and freed, dump;
 *            2 MiB (win_mid) made and freed, 1 MiB (win_small) kept, dump
 *   tie      5 MiB (win_big) made and freed, dump; 5 MiB (win_tie) made
 *            and kept, then a driver OOM: the run's peak is the first of
 *            the two equal ones, in the message as in every report
 *   storm    THREADS threads in pairs, each pair on a call site of its own
 *            (a recursion depth) and size (4 KiB x (pair + 1)): each makes
 *            K blocks, then frees and makes again one of them, ROUNDS
 *            times, all at once; a barrier; then they free everything.
 *            No thread ever holds more than K, so the true peak is every
 *            block at once: K x 2 x 4 KiB x (1 + 2 + ... + THREADS/2), each
 *            pair's site 2K blocks. Prints "storm peak BYTES". With
 *            STORM_ONE_SITE set, every thread on the first pair's site and
 *            size: THREADS x K blocks of 4 KiB at one site, and the first
 *            thread's K still live at exit. STORM_OOMS=N: once every
 *            thread holds its K, N driver OOMs 2 ms apart, each from a
 *            call site of its own, while each thread makes one more block
 *            and frees it, again and again, until the last message is out:
 *            each message sees THREADS x K to THREADS x (K + 1) blocks live
 *            at a storm site. STORM_LATE set: thread 0 makes half its
 *            rounds alone before the others start (the table's shards and
 *            the device's word are its own until they come, base/bias.h).
 *   slowdump 4096 allocations from 4096 call stacks, a SIGUSR1 dump (long:
 *            its reader, stderr, is slow), and while it is written, a
 *            driver OOM: its message must not land inside the dump
 *   hostoom  1 MiB on the device (dev_small), 9 x 100 MiB of pinned host
 *            memory (pin_big), then 200 MiB more (pin_more), which
 *            GPUSIM_HOST_MEM=150M refuses
 */
#include "../integration/testlib.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#define BIG (100ull << 30) /* 100 GiB: more than the simulated device has */

static int (*dump_fn)(void);
static volatile int three = 3, two = 2; /* loops not unrolled: one call site each */

static __attribute__((noinline)) CUresult oom_linear(void) { CUdeviceptr p; return cuMemAlloc_v2(&p, BIG); }
static __attribute__((noinline)) CUresult oom_linear_other(void) { CUdeviceptr p; return cuMemAlloc_v2(&p, BIG); }
static __attribute__((noinline)) CUresult oom_pitch(void)
{
    CUdeviceptr p;
    size_t pitch;
    return cuMemAllocPitch_v2(&p, &pitch, (1u << 20) + 1, 100u << 10, 4); /* rows of 1 MiB + 512 at the usual pitch */
}
static __attribute__((noinline)) CUresult oom_managed(void) { CUdeviceptr p; return cuMemAllocManaged(&p, BIG, CU_MEM_ATTACH_GLOBAL); }
static __attribute__((noinline)) CUresult oom_async(void) { CUdeviceptr p; return cuMemAllocAsync(&p, BIG, 0); }
static __attribute__((noinline)) CUresult oom_pool(void)
{
    static CUmemoryPool pool;
    if (!pool) {
        CUmemPoolProps pp;
        memset(&pp, 0, sizeof pp);
        pp.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
        pp.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        pp.location.id = 0;
        TL_CHECK(cuMemPoolCreate(&pool, &pp));
    }
    CUdeviceptr p;
    return cuMemAllocFromPoolAsync(&p, BIG, pool, 0);
}
static __attribute__((noinline)) CUresult oom_vmm(void)
{
    CUmemAllocationProp prop = tl_vmm_prop(0);
    CUmemGenericAllocationHandle h;
    return cuMemCreate(&h, BIG, &prop, 0);
}
static __attribute__((noinline)) CUresult oom_array(void)
{
    CUDA_ARRAY_DESCRIPTOR d;
    memset(&d, 0, sizeof d);
    d.Width = 1u << 15;
    d.Height = 1u << 15;
    d.Format = CU_AD_FORMAT_FLOAT;
    d.NumChannels = 4; /* 16 GiB */
    CUarray a;
    return cuArrayCreate_v2(&a, &d);
}
static __attribute__((noinline)) CUresult oom_host(void) { void *p; return cuMemAllocHost_v2(&p, BIG); }

/* one call site for both calls */
static __attribute__((noinline)) CUresult call_twice(CUresult (*fn)(void), CUresult *second)
{
    CUresult r = 0;
    for (int k = 0; k < two; k++) {
        r = fn();
        if (k == 0)
            *second = r;
    }
    return r;
}

static void routes(void)
{
    static const struct { const char *name; CUresult (*fn)(void); } r[] = {
        { "linear", oom_linear }, { "pitch", oom_pitch }, { "managed", oom_managed }, { "async", oom_async },
        { "pool", oom_pool }, { "vmm", oom_vmm }, { "array", oom_array }, { "host", oom_host },
    };
    for (size_t i = 0; i < sizeof r / sizeof r[0]; i++) {
        CUresult a, b = call_twice(r[i].fn, &a); /* twice from one site: explained once */
        printf("%s rc %d %d\n", r[i].name, (int)a, (int)b);
        fprintf(stderr, "ROUTE %s returned\n", r[i].name); /* after its message: written before the call returns */
    }
    printf("linear_other rc %d\n", (int)oom_linear_other());
}

static __attribute__((noinline)) CUdeviceptr peak_a(void) { CUdeviceptr p; TL_CHECK(cuMemAlloc_v2(&p, 1u << 20)); return p; }
static __attribute__((noinline)) CUdeviceptr peak_b(void) { CUdeviceptr p; TL_CHECK(cuMemAlloc_v2(&p, 2u << 20)); return p; }
static __attribute__((noinline)) CUdeviceptr peak_c(void) { CUdeviceptr p; TL_CHECK(cuMemAlloc_v2(&p, 1u << 20)); return p; }


static void peak(void)
{
    CUdeviceptr b[2];
    for (int i = 0; i < three; i++)
        peak_a();
    for (int i = 0; i < two; i++)
        b[i] = peak_b();
    for (int i = 0; i < two; i++)
        TL_CHECK(cuMemFree_v2(b[i]));
    peak_c();
    printf("peak oom rc %d\n", (int)oom_linear());
}

static __attribute__((noinline)) CUdeviceptr win_big(void) { CUdeviceptr p; TL_CHECK(cuMemAlloc_v2(&p, 5u << 20)); return p; }
static __attribute__((noinline)) CUdeviceptr win_mid(void) { CUdeviceptr p; TL_CHECK(cuMemAlloc_v2(&p, 2u << 20)); return p; }
static __attribute__((noinline)) CUdeviceptr win_small(void) { CUdeviceptr p; TL_CHECK(cuMemAlloc_v2(&p, 1u << 20)); return p; }

static void window(void)
{
    TL_CHECK(cuMemFree_v2(win_big()));
    printf("dump %d\n", dump_fn ? dump_fn() : -1);
    TL_CHECK(cuMemFree_v2(win_mid()));
    win_small();
    printf("dump %d\n", dump_fn ? dump_fn() : -1);
}

static __attribute__((noinline)) CUdeviceptr win_tie(void) { CUdeviceptr p; TL_CHECK(cuMemAlloc_v2(&p, 5u << 20)); return p; }

static CUresult too_big(void);

static void tie(void)
{
    TL_CHECK(cuMemFree_v2(win_big()));
    printf("dump %d\n", dump_fn ? dump_fn() : -1);
    win_tie();
    printf("tie: oom rc %d\n", (int)too_big());
}

/* ------------------------------------------------------------------ storm */

#define K 64
#define ROUNDS 3000
static int threads = 8;
static int one_site; /* STORM_ONE_SITE: every thread on pair 0's site and size */
static pthread_barrier_t bar, bar_main; /* bar_main: the threads and main, with STORM_OOMS */
static int ooms;                         /* STORM_OOMS */
static int late, late_go;                /* STORM_LATE: the others start once thread 0 is half done */
static CUcontext ctx;

static __attribute__((noinline)) CUdeviceptr storm_alloc(int depth, size_t bytes)
{
    if (depth > 0) {
        CUdeviceptr p = storm_alloc(depth - 1, bytes);
        __asm__ __volatile__("" ::: "memory"); /* not a tail call: each depth its own stack */
        return p;
    }
    CUdeviceptr p;
    TL_CHECK(cuMemAlloc_v2(&p, bytes));
    return p;
}

static void *storm_thread(void *arg)
{
    int i = (int)(intptr_t)arg, pair = one_site ? 0 : i / 2;
    size_t bytes = 4096u * (size_t)(pair + 1);
    TL_CHECK(cuCtxSetCurrent(ctx));
    CUdeviceptr held[K];
    unsigned seed = (unsigned)i * 7919u + 1;
    pthread_barrier_wait(&bar);
    while (late && i != 0 && !__atomic_load_n(&late_go, __ATOMIC_ACQUIRE))
        usleep(100);
    /* K made, then one freed and made again: never more than K held; with
     * OOMs, until main has made them all (it starts once every thread holds K) */
    for (int r = -K; ooms ? r < 0 || !__atomic_load_n(&tl_stop, __ATOMIC_RELAXED) : r < ROUNDS; r++) {
        if (ooms && r == 0)
            pthread_barrier_wait(&bar_main);
        int k = r + K;
        if (!ooms && r >= 0) {
            seed = seed * 1103515245u + 12345u;
            k = (int)((seed >> 8) % K);
            TL_CHECK(cuMemFree_v2(held[k]));
        }
        CUdeviceptr p = storm_alloc(pair + 1, bytes); /* one call site: the pair's stack */
        if (ooms && r >= 0) { /* one more made and freed: K or K + 1 held */
            TL_CHECK(cuMemFree_v2(p));
            continue;
        }
        held[k] = p;
        if (late && i == 0 && r == ROUNDS / 2)
            __atomic_store_n(&late_go, 1, __ATOMIC_RELEASE);
    }
    pthread_barrier_wait(&bar);
    if (one_site && i == 0)
        return NULL; /* its K blocks live at exit */
    for (int k = 0; k < K; k++)
        TL_CHECK(cuMemFree_v2(held[k]));
    return NULL;
}

/* A driver OOM from a call site d frames deeper than oom_linear's. */
__attribute__((noinline)) static CUresult oom_deep(int d)
{
    CUresult r = d ? oom_deep(d - 1) : oom_linear();
    __asm__ __volatile__("" ::: "memory");
    return r;
}

static void storm(void)
{
    const char *t = getenv("STORM_THREADS");
    if (t && atoi(t) >= 2)
        threads = atoi(t) & ~1;
    one_site = getenv("STORM_ONE_SITE") != NULL;
    late = getenv("STORM_LATE") != NULL;
    ctx = tl_setup(0);
    pthread_t th[64];
    pthread_barrier_init(&bar, NULL, (unsigned)threads);
    const char *o = getenv("STORM_OOMS");
    ooms = o && atoi(o) > 0 ? atoi(o) > 30 ? 30 : atoi(o) : 0;
    pthread_barrier_init(&bar_main, NULL, (unsigned)threads + 1);
    for (int i = 0; i < threads; i++)
        pthread_create(&th[i], NULL, storm_thread, (void *)(intptr_t)i);
    /* STORM_OOMS=N: once every thread holds its K, and while they churn, N
     * driver OOMs from N call sites, 2 ms apart, whose messages read the
     * live totals of the storm's sites; then 200 ms for the last message */
    if (ooms) {
        pthread_barrier_wait(&bar_main);
        for (int i = 0; i < ooms; i++) {
            usleep(2000);
            if (oom_deep(i) != CUDA_ERROR_OUT_OF_MEMORY)
                printf("storm: oom %d not refused\n", i);
        }
        usleep(200000);
        __atomic_store_n(&tl_stop, 1, __ATOMIC_RELAXED);
    }
    for (int i = 0; i < threads; i++)
        pthread_join(th[i], NULL);
    unsigned long long want = 0;
    for (int p = 0; p < threads / 2; p++)
        want += 2ull * K * 4096u * (unsigned long long)(one_site ? 1 : p + 1);
    printf("storm peak %llu\n", want);
}

#define NI __attribute__((noinline))
NI static void go_l(int d, unsigned bits);
NI static void go_r(int d, unsigned bits);
static void go(int d, unsigned bits)
{
    if (d == 0) {
        CUdeviceptr p;
        TL_CHECK(cuMemAlloc_v2(&p, 4096));
    } else if (bits & 1) {
        go_r(d - 1, bits >> 1);
    } else {
        go_l(d - 1, bits >> 1);
    }
}
NI static void go_l(int d, unsigned bits) { go(d, bits); __asm__ __volatile__("" ::: "memory"); }
NI static void go_r(int d, unsigned bits) { go(d, bits); __asm__ __volatile__("" ::: "memory"); }

static void slowdump(void)
{
    for (unsigned b = 0; b < 4096; b++)
        go(12, b);
    raise(SIGUSR1);
    usleep(300000);
    printf("slowdump: oom rc %d\n", (int)oom_linear());
}

NI static void *pin_big(void)
{
    void *p;
    TL_CHECK(cuMemHostAlloc(&p, 100u << 20, 0));
    return p;
}
NI static CUresult pin_more(void) { void *p; return cuMemHostAlloc(&p, 200u << 20, 0); }
NI static CUdeviceptr dev_small(void)
{
    CUdeviceptr p;
    TL_CHECK(cuMemAlloc_v2(&p, 1 << 20));
    return p;
}

static void hostoom(void)
{
    dev_small();
    for (volatile int i = 0; i < 9; i++)
        pin_big();
    printf("hostoom: %d\n", (int)pin_more());
}

/* One call site refused on device 0, then twice on device 1 (under
 * GPUMEM_LIMIT=1M: the quota's; without, 100 MiB past GPUSIM_MEM: the
 * driver's), with a context current on each in turn. */
NI static CUresult too_big(void)
{
    CUdeviceptr p;
    return cuMemAlloc_v2(&p, 100u << 20);
}

static void twodev(void)
{
    CUdevice dev;
    CUcontext ctx;
    int r[3];
    for (int i = 0; i < 3; i++) { /* one call site */
        if (i == 1) {
            TL_CHECK(cuDeviceGet(&dev, 1));
            TL_CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
            TL_CHECK(cuCtxSetCurrent(ctx));
        }
        r[i] = (int)too_big();
    }
    printf("twodev: %d %d %d\n", r[0], r[1], r[2]);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "routes";
    dump_fn = (int (*)(void))dlsym(RTLD_DEFAULT, "gpumemguard_dump");
    if (strcmp(mode, "storm") == 0) {
        storm();
        return 0;
    }
    tl_setup(0);
    if (strcmp(mode, "routes") == 0)
        routes();
    else if (strcmp(mode, "peak") == 0)
        peak();
    else if (strcmp(mode, "window") == 0)
        window();
    else if (strcmp(mode, "tie") == 0)
        tie();
    else if (strcmp(mode, "slowdump") == 0)
        slowdump();
    else if (strcmp(mode, "hostoom") == 0)
        hostoom();
    else if (strcmp(mode, "twodev") == 0)
        twodev();
    fflush(stdout);
    return 0;
}
