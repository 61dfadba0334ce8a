/*
 * bench.c - the guard's costs at scale, against the simulated driver. The
 * same binary runs with and without the guard (scripts/bench.sh compares
 * them in one run).
 *
 *   bench pairs PAIRS LIVE THREADS DEPTH
 *       cuMemAlloc_v2+cuMemFree_v2 pairs of 4 KiB, LIVE allocations of
 *       512 bytes held live meanwhile; each thread first recurses DEPTH
 *       frames so that its allocations have a stack that deep, then makes
 *       PAIRS pairs in 80 rounds (BENCH_LIVE_HERE set: the LIVE
 *       allocations are made by the first thread, before its rounds, not
 *       by the main thread before the threads start): 40 through cuMemAlloc_v2/cuMemFree_v2
 *       (the guard's, when it is preloaded) alternating with 40 through the
 *       simulated driver's own names for them, which nothing intercepts.
 *       Prints "CPU_NS WALL_NS SLEEPS RAW_CPU_NS RAW_SLEEPS": CPU time per
 *       pair through the entry points, in the least disturbed of their 40
 *       rounds (each thread's own CPU time over its own pairs, averaged
 *       over the threads; on a shared machine other programs only ever add
 *       to it; every round starts on all threads at once, at a barrier);
 *       the wall time per pair (all threads, whole run, barriers
 *       included); "SLEEPS": how many times per 1,000 pairs a worker thread
 *       went to sleep of its own accord (voluntary context switches within
 *       those rounds, not at the barriers): a thread that waits for a lock
 *       another thread holds sleeps in the kernel, which costs it CPU time
 *       no instruction count shows; then the same two for the driver's own
 *       names, the driver alone in the same moments; then, with
 *       BENCH_LINE=1 (40 more rounds), the same two for the driver alone
 *       plus the quota counter's two atomic operations on one line all
 *       threads share (see line_alloc), else "- -". BENCH_SITES=2: the
 *       pairs alternate between two call sites (see two_sites);
 *       BENCH_SITES=own: each thread on a call site of its own.
 *   bench rss LIVE
 *       holds LIVE allocations of 512 bytes; prints VmRSS in kB.
 *   bench report LIVE DEPTH
 *       holds LIVE allocations, then asks for a report through the public
 *       API (gpumemguard_dump, found with dlsym: "- -" without the guard);
 *       prints "SECONDS PEAK_EXTRA_KB": the report's time and the most
 *       memory it added while written (VmHWM after, reset just before,
 *       minus VmRSS before).
 *   bench refusal LIVE DEPTH [N]
 *       runs itself as a child whose stderr is a pipe; the child holds LIVE
 *       allocations under GPUMEM_LIMIT (set by the caller), then makes an
 *       allocation the quota refuses, and (N = 2, the default) once its
 *       message is out another from a new call site (stacks must be on for
 *       it to be explained; BENCH_STACKS=N: the LIVE allocations come from
 *       N distinct stacks, as in atpeak). Prints the milliseconds from each refused call
 *       to its message on the child's stderr: the first message makes the
 *       guard's symbolizer, the next finds it made. Without GPUMEM_LIMIT
 *       the allocation (1 TiB) is the driver's out of memory (GPUSIM_MEM
 *       below it), whose message is timed the same way.
 *   bench atpeak LIVE STACKS
 *       holds LIVE allocations of 512 bytes made from STACKS distinct call
 *       stacks (a path of up to 17 calls of two functions, one per bit of
 *       the stack's number), then asks for a report through the public API;
 *       prints its seconds (scripts/bench.sh runs it with a library built
 *       with and without peak tracking, GMG_NO_PEAK, in the folded format,
 *       which builds what was live at the peak and prints only the live
 *       stacks: the difference is what the peak's make-up costs a report).
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <nvtx3/nvToolsExtMem.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 40

/* tests/sim/sim.c's own names for cuMemAlloc_v2/cuMemFree_v2 (see pair_loop) */
CUresult simBenchMemAlloc(CUdeviceptr *dptr, size_t bytes);
CUresult simBenchMemFree(CUdeviceptr p);

static CUcontext ctx;
static long pairs;
static int depth;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Recurse `n` frames, then run fn: every allocation fn makes has a stack
 * at least that deep. The volatile sum keeps each frame (no tail call). */
static __attribute__((noinline)) long deep(int n, long (*fn)(void *), void *arg)
{
    volatile long pad = n;
    if (n > 0)
        return deep(n - 1, fn, arg) + pad - n;
    return fn(arg);
}

/* Rounds alternate between the two paths to the same driver: even rounds
 * call cuMemAlloc_v2/cuMemFree_v2 (the guard's wrappers when it is
 * preloaded), odd rounds the simulated driver's own simBenchMemAlloc/
 * simBenchMemFree, which no guard intercepts. So a guarded process times
 * both, in the same moments, and whatever slows the machine for a while
 * slows both alike. */
enum { VIA_ENTRY, VIA_RAW, VIA_LINE };
struct worker { double round_cpu[3][ROUNDS]; long sleeps[3]; int index; };

/* BENCH_LINE=1: a third kind of round, the driver alone plus what SPEC §6
 * allows every allocation to write: one line that all threads share, the
 * device's quota counter. The same two atomic operations as the guard's
 * quota (core/quota.c, no limit): an add before the driver's alloc (and a
 * read of the peak beside it), a subtract after its free. Its rounds less
 * the driver's alone are the floor that line puts under a thread row. */
static int paths = 2;
static struct { unsigned long used, peak; } __attribute__((aligned(64))) line;

static CUresult line_alloc(CUdeviceptr *dptr, size_t bytes)
{
    unsigned long now = __atomic_add_fetch(&line.used, bytes, __ATOMIC_ACQ_REL);
    if (now > __atomic_load_n(&line.peak, __ATOMIC_RELAXED))
        __atomic_store_n(&line.peak, now, __ATOMIC_RELAXED);
    return simBenchMemAlloc(dptr, bytes);
}

static CUresult line_free(CUdeviceptr p)
{
    CUresult r = simBenchMemFree(p);
    __atomic_fetch_sub(&line.used, 4096, __ATOMIC_ACQ_REL); /* pair_loop's size */
    return r;
}

/* Every round starts on all threads at once: a round's figure is then the
 * threads' cost while they all ran, not partly one thread's alone (a thread
 * that started late, or one whose partner had finished). */
static pthread_barrier_t round_start;

static long voluntary_switches(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_THREAD, &ru) == 0 ? ru.ru_nvcsw : 0;
}

/* BENCH_SITES=2: the pairs alternate between two call sites of one frame
 * size, so that every walk starts where the last one did and its stack
 * differs from the last one's in one return address: the guard's memo of
 * its last walk is checked, word for word, and misses every time (its
 * worst case). Two bodies: the compiler must not fold them into one. */
static int two_sites;

static __attribute__((noinline)) CUresult site_a(CUresult (*alloc)(CUdeviceptr *, size_t), CUdeviceptr *p)
{
    volatile int pad = 1;
    CUresult r = alloc(p, 4096);
    pad++;
    return r;
}

static __attribute__((noinline)) CUresult site_b(CUresult (*alloc)(CUdeviceptr *, size_t), CUdeviceptr *p)
{
    volatile int pad = 2;
    CUresult r = alloc(p, 4096);
    pad++;
    return r;
}

/* BENCH_SITES=own: each thread allocates from a call site of its own
 * (thread i calls through i more frames), as threads running different
 * code do: their call sites' totals are apart, and must not share a line. */
static int own_sites;

static __attribute__((noinline)) CUresult nest(int n, CUresult (*alloc)(CUdeviceptr *, size_t), CUdeviceptr *p)
{
    volatile int pad = n;
    CUresult r = n ? nest(n - 1, alloc, p) : alloc(p, 4096);
    pad++;
    return r;
}

static long pair_loop(void *arg)
{
    struct worker *w = arg;
    long per = pairs / ROUNDS / 2;
    for (int r = 0; r < paths * ROUNDS; r++) {
        int via = r % paths;
        CUresult (*alloc)(CUdeviceptr *, size_t) = via == VIA_RAW ? simBenchMemAlloc : via == VIA_LINE ? line_alloc : cuMemAlloc_v2;
        CUresult (*release)(CUdeviceptr) = via == VIA_RAW ? simBenchMemFree : via == VIA_LINE ? line_free : cuMemFree_v2;
        pthread_barrier_wait(&round_start);
        long s0 = voluntary_switches(); /* the barrier's own sleeps are not counted */
        double c0 = cpu_now();
        for (long i = 0; i < per; i++) {
            CUdeviceptr p;
            if ((two_sites ? (i & 1 ? site_b : site_a)(alloc, &p) : own_sites ? nest(w->index, alloc, &p)
                                                                               : alloc(&p, 4096)) != CUDA_SUCCESS)
                abort();
            release(p);
        }
        w->round_cpu[via][r / paths] = (cpu_now() - c0) / (double)per;
        w->sleeps[via] += voluntary_switches() - s0;
    }
    return 0;
}

static long hold_loop(void *arg)
{
    long live = *(long *)arg;
    for (long i = 0; i < live; i++) {
        CUdeviceptr p;
        if (cuMemAlloc_v2(&p, 512) != CUDA_SUCCESS)
            abort();
    }
    return 0;
}

static void hold(long live)
{
    deep(depth, hold_loop, &live);
}

static long live_here; /* BENCH_LIVE_HERE: the live allocations, made by the first worker */

static void *thread_main(void *arg)
{
    cuCtxSetCurrent(ctx);
    if (live_here && ((struct worker *)arg)->index == 0)
        hold(live_here);
    deep(depth, pair_loop, arg);
    return NULL;
}

static long status_kb(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    size_t n = strlen(field);
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, field, n) == 0 && line[n] == ':')
            v = atol(line + n + 1);
    if (f)
        fclose(f);
    return v;
}

static void start(void)
{
    cuInit(0);
    cuDevicePrimaryCtxRetain(&ctx, 0);
    cuCtxSetCurrent(ctx);
}

static int mode_pairs(long live, int threads)
{
    start();
    if (getenv("BENCH_LIVE_HERE"))
        live_here = live; /* before the first round's barrier */
    else
        hold(live);
    pthread_t t[64];
    struct worker *w = calloc((size_t)threads, sizeof *w);
    pthread_barrier_init(&round_start, NULL, (unsigned)threads);
    double t0 = now();
    for (int i = 0; i < threads; i++) {
        w[i].index = i;
        pthread_create(&t[i], NULL, thread_main, &w[i]);
    }
    for (int i = 0; i < threads; i++)
        pthread_join(t[i], NULL);
    double wall = now() - t0;
    double total = (double)(pairs / ROUNDS / 2 * ROUNDS * threads); /* pairs of each path */
    double best[3], sleeps[3];
    for (int via = 0; via < paths; via++) {
        double per_round[ROUNDS];
        sleeps[via] = 0;
        for (int i = 0; i < threads; i++)
            sleeps[via] += (double)w[i].sleeps[via];
        for (int r = 0; r < ROUNDS; r++) {
            per_round[r] = 0;
            for (int i = 0; i < threads; i++)
                per_round[r] += w[i].round_cpu[via][r];
            per_round[r] /= threads; /* CPU per pair: each thread did its own pairs */
        }
        if (getenv("BENCH_ROUNDS")) /* every round, for a closer look */
            for (int r = 0; r < ROUNDS; r++)
                fprintf(stderr, "%.0f%c", per_round[r] * 1e9, r + 1 < ROUNDS ? ' ' : '\n');
        qsort(per_round, ROUNDS, sizeof *per_round, cmp_double);
        best[via] = per_round[0];
    }
    printf("%.1f %.1f %.2f %.1f %.2f", best[VIA_ENTRY] * 1e9, wall * 1e9 / (paths * total),
           sleeps[VIA_ENTRY] * 1000.0 / total, best[VIA_RAW] * 1e9, sleeps[VIA_RAW] * 1000.0 / total);
    if (paths > VIA_LINE)
        printf(" %.1f %.2f\n", best[VIA_LINE] * 1e9, sleeps[VIA_LINE] * 1000.0 / total);
    else
        printf(" - -\n");
    free(w);
    return 0;
}

/* bench nvtx PAIRS DEPTH: nvtxMemRegionsRegister + nvtxMemRegionsUnregister
 * pairs of 4 KiB regions in one heap over a 64 MiB segment, DEPTH frames
 * deep; prints the least CPU ns per pair of 40 rounds. Without an NVTX
 * injection (NVTX_INJECTION64_PATH unset) the calls are NVTX's no-ops.
 * BENCH_HEAPS=N (up to 1024): N heaps of 64 KiB over the segment, each
 * pair in the next heap in turn. */
#define NVTX_HEAPS_MAX 1024
static nvtxMemHeapHandle_t nvtx_heaps[NVTX_HEAPS_MAX];
static unsigned nvtx_nheaps = 1;
static CUdeviceptr nvtx_seg;

static long nvtx_loop(void *arg)
{
    double best = 1e30;
    long per = *(long *)arg / ROUNDS;
    for (int r = 0; r < ROUNDS; r++) {
        double c0 = cpu_now();
        for (long i = 0; i < per; i++) {
            unsigned k = (unsigned)i % nvtx_nheaps;
            uint64_t at = nvtx_nheaps == 1 ? (uint64_t)(i & 1023) * 4096
                                           : (uint64_t)k * 65536 + (uint64_t)((i / nvtx_nheaps) & 15) * 4096;
            nvtxMemVirtualRangeDesc_t d = { 4096, (void *)(uintptr_t)(nvtx_seg + at) };
            nvtxMemRegionsRegisterBatch_t b = { NVTX_EXT_COMPATID_MEM, sizeof b, NVTX_MEM_TYPE_VIRTUAL_ADDRESS,
                                                nvtx_heaps[k], 1, sizeof d, &d, NULL };
            nvtxMemRegionsRegister(NULL, &b);
            nvtxMemRegionRef_t ref;
            ref.pointer = d.ptr;
            nvtxMemRegionsUnregisterBatch_t u = { NVTX_EXT_COMPATID_MEM, sizeof u, NVTX_MEM_REGION_REF_TYPE_POINTER,
                                                  1, sizeof ref, &ref };
            nvtxMemRegionsUnregister(NULL, &u);
        }
        double t = (cpu_now() - c0) * 1e9 / (double)per;
        if (t < best)
            best = t;
    }
    printf("%.1f\n", best);
    return 0;
}

static int mode_nvtx(long n)
{
    start();
    if (cuMemAlloc_v2(&nvtx_seg, 64 << 20) != CUDA_SUCCESS)
        return 1;
    const char *e = getenv("BENCH_HEAPS");
    if (e && atoi(e) > 1)
        nvtx_nheaps = atoi(e) < NVTX_HEAPS_MAX ? (unsigned)atoi(e) : NVTX_HEAPS_MAX;
    for (unsigned k = 0; k < nvtx_nheaps; k++) {
        nvtxMemVirtualRangeDesc_t range = { nvtx_nheaps == 1 ? 64 << 20 : 65536,
                                            (void *)(uintptr_t)(nvtx_seg + (uint64_t)k * 65536) };
        nvtxMemHeapDesc_t h;
        memset(&h, 0, sizeof h);
        h.extCompatID = NVTX_EXT_COMPATID_MEM;
        h.structSize = sizeof h;
        h.usage = NVTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR;
        h.type = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
        h.typeSpecificDescSize = sizeof range;
        h.typeSpecificDesc = &range;
        nvtx_heaps[k] = nvtxMemHeapRegister(NULL, &h);
    }
    deep(depth, nvtx_loop, &n);
    return 0;
}

static int mode_report(long live)
{
    int (*dump)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "gpumemguard_dump");
    start();
    hold(live);
    if (!dump) {
        printf("- -\n");
        return 0;
    }
    int fd = open("/proc/self/clear_refs", O_WRONLY);
    if (fd < 0 || write(fd, "5", 1) != 1) /* VmHWM := VmRSS */
        perror("clear_refs");
    if (fd >= 0)
        close(fd);
    long rss0 = status_kb("VmRSS");
    double t0 = now();
    dump();
    double dt = now() - t0;
    long hwm = status_kb("VmHWM");
    printf("%.3f %ld\n", dt, hwm - rss0);
    return 0;
}

static __attribute__((noinline)) long refuse(void *arg)
{
    CUdeviceptr p;
    struct timespec *ts = arg;
    clock_gettime(CLOCK_MONOTONIC, ts);
    return cuMemAlloc_v2(&p, 1ull << 40); /* over any limit the caller sets */
}

static __attribute__((noinline)) long refuse_elsewhere(void *arg)
{
    volatile long pad = 1;
    return refuse(arg) + pad - 1; /* another call site */
}

static int refusals = 2;
static void path(int level, unsigned idx, long n);

static int refusal_child(long live)
{
    start();
    const char *st = getenv("BENCH_STACKS"); /* the live allocations from that many distinct stacks */
    long stacks = st ? atol(st) : 0;
    if (stacks > 1)
        for (long s = 0; s < stacks; s++)
            path(17, (unsigned)s, live / stacks + (s < live % stacks));
    else
        hold(live);
    for (int k = 0; k < refusals; k++) {
        struct timespec ts;
        long r = deep(depth, k ? refuse_elsewhere : refuse, &ts); /* its stack: DEPTH frames of ours */
        dprintf(1, "%lld %ld\n", (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec, r);
        char c;
        if (read(0, &c, 1) != 1) /* the parent has the message */
            break;
    }
    return 0;
}

static long long ns_of(const struct timespec *t) { return (long long)t->tv_sec * 1000000000ll + t->tv_nsec; }

static int mode_refusal(char **argv)
{
    int err[2], out[2], in[2];
    if (pipe(err) || pipe(out) || pipe(in))
        return 1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        dup2(err[1], 2);
        close(in[1]);
        close(out[0]);
        close(err[0]);
        setenv("BENCH_REFUSAL_CHILD", "1", 1);
        execv("/proc/self/exe", argv);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    close(err[1]);
    FILE *child_out = fdopen(out[0], "r");
    static char text[1 << 20];
    size_t len = 0;
    double ms[2] = { -1, -1 };
    int k;
    for (k = 0; k < refusals; k++) {
        struct timespec t1 = { 0, 0 };
        char *from = text + len;
        while (len < sizeof text - 1) {
            struct pollfd pf = { .fd = err[0], .events = POLLIN };
            if (poll(&pf, 1, 30000) != 1)
                break; /* no message */
            ssize_t n = read(err[0], text + len, sizeof text - 1 - len);
            if (n <= 0)
                break;
            len += (size_t)n;
            text[len] = 0;
            if (strstr(from, "gpumemguard: refused") || strstr(from, "gpumemguard: the driver refused")) {
                clock_gettime(CLOCK_MONOTONIC, &t1);
                break;
            }
        }
        long long t0 = 0;
        long r = 0;
        if (!child_out || fscanf(child_out, "%lld %ld", &t0, &r) != 2 || !t1.tv_sec)
            break;
        ms[k] = (double)(ns_of(&t1) - t0) / 1e6;
        if (write(in[1], "x", 1) != 1)
            break;
    }
    close(in[1]);
    if (k < refusals)
        kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    for (int i = 0; i < refusals; i++) {
        if (ms[i] < 0)
            printf("-");
        else
            printf("%.3f", ms[i]);
        printf("%s", i + 1 < refusals ? " " : "\n");
    }
    return 0;
}

/* Allocations from one of 2^17 call stacks: bit l of idx picks which of
 * two functions is called at level l. */
static __attribute__((noinline)) void path0(int level, unsigned idx, long n);
static __attribute__((noinline)) void path1(int level, unsigned idx, long n);
static void path(int level, unsigned idx, long n)
{
    if (level == 0) {
        for (long i = 0; i < n; i++) {
            CUdeviceptr p;
            if (cuMemAlloc_v2(&p, 512) != CUDA_SUCCESS)
                abort();
        }
    } else if (idx >> (level - 1) & 1) {
        path1(level - 1, idx, n);
    } else {
        path0(level - 1, idx, n);
    }
}
static __attribute__((noinline)) void path0(int level, unsigned idx, long n)
{
    path(level, idx, n);
    __asm__ __volatile__("" ::: "memory"); /* no tail call: a frame of its own */
}
static __attribute__((noinline)) void path1(int level, unsigned idx, long n)
{
    path(level, idx, n);
    __asm__ __volatile__("" ::: "memory");
}

static int mode_atpeak(long live, long stacks)
{
    int (*dump)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "gpumemguard_dump");
    start();
    if (stacks < 1)
        stacks = 1;
    for (long s = 0; s < stacks; s++)
        path(17, (unsigned)s, live / stacks + (s < live % stacks));
    if (!dump) {
        printf("-\n");
        return 0;
    }
    double t0 = now();
    dump();
    printf("%.3f\n", now() - t0);
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "pairs";
    if (strcmp(mode, "pairs") == 0) {
        pairs = argc > 2 ? atol(argv[2]) : 200000;
        two_sites = getenv("BENCH_SITES") && !strcmp(getenv("BENCH_SITES"), "2");
        own_sites = getenv("BENCH_SITES") && !strcmp(getenv("BENCH_SITES"), "own");
        if (getenv("BENCH_LINE") && *getenv("BENCH_LINE") == '1')
            paths = 3;
        long live = argc > 3 ? atol(argv[3]) : 0;
        int threads = argc > 4 ? atoi(argv[4]) : 1;
        depth = argc > 5 ? atoi(argv[5]) : 0;
        if (threads < 1 || threads > 64 || pairs < 2 * ROUNDS)
            return 2;
        return mode_pairs(live, threads);
    }
    long live = argc > 2 ? atol(argv[2]) : 0;
    depth = argc > 3 ? atoi(argv[3]) : 0;
    if (strcmp(mode, "rss") == 0) {
        start();
        hold(live);
        printf("%ld\n", status_kb("VmRSS"));
        return 0;
    }
    if (strcmp(mode, "atpeak") == 0)
        return mode_atpeak(live, argc > 3 ? atol(argv[3]) : 1);
    if (strcmp(mode, "report") == 0)
        return mode_report(live);
    if (strcmp(mode, "nvtx") == 0)
        return mode_nvtx(live);
    if (strcmp(mode, "refusal") == 0) {
        refusals = argc > 4 && atoi(argv[4]) == 1 ? 1 : 2;
        return getenv("BENCH_REFUSAL_CHILD") ? refusal_child(live) : mode_refusal(argv);
    }
    fprintf(stderr, "usage: bench pairs PAIRS LIVE THREADS DEPTH | rss LIVE | report LIVE DEPTH | refusal LIVE DEPTH [N] | nvtx PAIRS DEPTH\n");
    return 2;
}
