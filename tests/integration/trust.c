/*
 * trust.c - hostile cases (what works against the guard), each a mode, against the simulated
 * driver (linked directly: the guard's exported wrappers see every call).
 * Each mode prints what the test script checks; `stress` modes are bounded
 * storms for `make stress`.
 *
 *   trust vmm_bypass        cuMemCreate -> cuMemMap -> cuMemRelease keeps counting until unmapped
 *   trust vmm_badloc        failed cuMemCreate at location -1 leaks no quota
 *   trust huge              failed SIZE_MAX-sized calls leave the counters exact
 *   trust double_free N     two threads free one pointer at once, N rounds
 *   trust legacy2dev        equal legacy pointers on two devices are two records
 *   trust nulls             NULL outputs of the info calls under a limit
 *   trust sim_sizes         the simulated driver refuses sizes that overflow
 *   trust sim_fork N        fork while another thread is inside the driver
 *   trust sigstorm N        handlers re-installed from 3 threads while N signals arrive
 *   trust sigsem            the program's sa_flags, sa_mask and SA_RESETHAND are kept
 *   trust dump_exit         a dump signalled just before exit
 *   trust dumps N           N signal dumps, one at a time, then exit
 *   trust forkreport        parent and forked child each write their exit report
 *   trust apidumps N        4 threads x N gpumemguard_dump() at once
 *   trust dumplost DIR      a dump that cannot be written (DIR removed; the
 *                           caller sends stderr to /dev/full), then one that
 *                           can: its growth is both allocations
 *   trust stale_tmp PATH    stale temporaries for this pid exist beside PATH
 *   trust fd2 FILE          descriptor 2 closed, reopened as the program's data file
 *   trust closefrom FILE DUMP  descriptors 3..1023 closed after the guard started
 *                           (a daemon's closefrom), then the program's own pipe
 *                           and FILE opened, one allocation refused and a dump
 *                           signalled: its pipe must hold what it wrote, FILE
 *                           nothing, and DUMP (the signal dump) exist while it runs
 *   trust dlclose LIB1 LIB2 a leak from a library then unloaded, LIB2 loaded after
 *   trust symfds FILE LIB   a report made (the guard's symbolizer opens ELF files),
 *                           descriptors 3..1023 closed, FILE opened 32 times, LIB
 *                           loaded (the symbolizer is made anew) and another report
 *                           made: every one of the 32 must still be FILE
 *   trust early_signal      the dump signal before any allocation
 *   trust exit_in_dump FIFO the program's SIGALRM handler calls exit() while
 *                           this thread writes a dump to FIFO (which it
 *                           opens and never reads)
 *   trust installers HOW DIR  after the guard armed SIGUSR1, a handler installed with
 *                           HOW (signal, bsd_signal, ssignal, sysv_signal, __sysv_signal,
 *                           sigset, sigignore), then two signals, each waited for in
 *                           its dump (GPUMEM_REPORT=DIR/d.%n.txt); sigset also holds
 *                           the signal (SIG_HOLD) and releases it
 *   trust free_reuse N      two threads free one pointer, a third reuses the address
 *   trust ctxrace           a context torn down while a thread frees its memory
 *   trust forksig N         fork while threads install the dump signal's handler
 *   trust injected          every family while the simulator fails calls (GPUSIM_FAIL)
 *   trust perdev            per-device limits on two devices
 *   trust ctxreuse          a destroyed context's handle handed out again (GPUSIM_REUSE_CTX)
 *   trust pitch             a pitch other than the guard's guess (GPUSIM_PITCH)
 *   trust rounding          large requests rounded to 2 MiB (GPUSIM_ROUND_LARGE)
 *   trust cxx LIB           a leak from a C++ plugin loaded RTLD_LOCAL
 *   trust ctor_refuse LIB   LIB loaded, whose constructor is refused an allocation
 *                           (tests/integration/ctorrefuse.c), with the loader's lock held
 *   trust nohandler_fork HOW  a refusal in the parent, then a child made without fork
 *                           handlers (HOW: _Fork, glibc's; clone, the raw system call)
 *                           refused at two new call sites, timed; it exits (its exit
 *                           report); then the parent refused at a new site
 *   trust nohandler_dump HOW  an allocation (the guard armed), then a child made without
 *                           fork handlers (HOW as above) that allocates, is sent the
 *                           dump signal and exits; its pid on stdout
 *   trust refuse_timed      one refusal, timed, its return said on stderr (a write()
 *                           preloaded beside the guard slows the message down)
 *   trust storm N           16 threads, every family, near the limit (stress)
 *   trust forkstorm N       N forks while 4 threads allocate (stress)
 *   trust nomem N           N allocations held, then freed, while the guard's
 *                           table cannot grow (tests/integration/nomem.c)
 *   trust nomem_leak N      N allocations, all but the last freed, the same way
 *   trust nomem_refuse      three allocations of 1 MiB held and a fourth refused
 *                           (GPUMEM_LIMIT=3M), the same way
 *   trust nomem_vmm         a handle created, mapped, released and unmapped,
 *                           the same way: the guard never counts less than
 *                           the driver holds
 *   trust reclaimed_leak    one allocation never freed, reclaimed by
 *                           cuDevicePrimaryCtxReset (a leak all the same)
 *   trust nomem_ranges L    the same way: 50 allocations, all freed but the
 *                           last when L is 1; a handle mapped in a reserved
 *                           range, all undone; a second range reserved and
 *                           kept (no allocation, so no leak)
 *
 * Sweeps of the guard's own out of memory (make stress, oomshim.c): each
 * prints one line that says whether the guard ever counted fewer bytes than
 * the simulated driver held.
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
#include <cuda.h>
#include <cudaTypedefs.h>

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define CHECK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { \
    fprintf(stderr, "%s:%d: %s = %d\n", __FILE__, __LINE__, #x, (int)r_); exit(1); } } while (0)

#include "testlib.h"

static CUcontext ctx0;
static int stop;                    /* set once by the main thread, read by workers */
static void plain_handler(int sig);

static void setup(int dev) { ctx0 = tl_setup(dev); }

/* ---------------------------------------------------------------- quota */

NOINLINE static void vmm_bypass(void)
{
    const size_t MiB = 1 << 20, H = 32 * MiB;
    CUdeviceptr va;
    CHECK(cuMemAddressReserve(&va, 4 * H, 0, 0, 0));
    CUmemAllocationProp p = tl_vmm_prop(0);
    int made = 0;
    for (int i = 0; i < 4; i++) {
        CUmemGenericAllocationHandle h;
        CUresult r = cuMemCreate(&h, H, &p, 0);
        printf("create %d: %d\n", i, (int)r);
        if (r != CUDA_SUCCESS)
            continue;
        CHECK(cuMemMap(va + (size_t)i * H, H, 0, h, 0));
        CHECK(cuMemRelease(h)); /* as CUDA's samples do: memory lives until unmapped */
        made++;
    }
    CUdeviceptr d;
    CUresult r = cuMemAlloc_v2(&d, 60 * MiB);
    printf("while mapped: alloc 60MiB %d, guard %llu, sim %llu\n", (int)r, tl_guard_live(0),
           (unsigned long long)tl_sim(0).live);
    for (int i = 0; i < made; i++)
        CHECK(cuMemUnmap(va + (size_t)i * H, H));
    r = cuMemAlloc_v2(&d, 60 * MiB);
    printf("after unmap: alloc 60MiB %d, guard %llu, sim %llu, sim peak %llu\n", (int)r, tl_guard_live(0),
           (unsigned long long)tl_sim(0).live, (unsigned long long)tl_sim(0).peak);
}

static void vmm_badloc(void)
{
    CUmemAllocationProp p = tl_vmm_prop(-1);
    CUmemGenericAllocationHandle h;
    int failed = 0;
    for (int i = 0; i < 40; i++)
        failed += cuMemCreate(&h, 2 << 20, &p, 0) != CUDA_SUCCESS;
    CUdeviceptr d;
    CUresult r = cuMemAlloc_v2(&d, 8 << 20);
    printf("failed creates %d; then alloc of the whole limit: %d; guard %llu\n", failed, (int)r, tl_guard_live(0));
}

static void huge(void)
{
    CUdeviceptr d;
    size_t pitch;
    CUarray a;
    CUDA_ARRAY_DESCRIPTOR ad = { (size_t)1 << 40, (size_t)1 << 40, CU_AD_FORMAT_FLOAT, 4 };
    CUresult r0 = cuMemAlloc_v2(&d, SIZE_MAX); /* with nothing in use: no overflow, still no device has it */
    if (r0 == CUDA_SUCCESS)
        exit(5);
    CUdeviceptr before;
    CHECK(cuMemAlloc_v2(&before, 1 << 20)); /* something in use: the sum overflows */
    CUresult r1 = cuMemAlloc_v2(&d, SIZE_MAX - 4096);
    CUresult r2 = cuMemAllocPitch_v2(&d, &pitch, SIZE_MAX - 4096, 3, 4);
    CUresult r3 = cuArrayCreate_v2(&a, &ad);
    CUresult r4 = cuMemAllocManaged(&d, SIZE_MAX, CU_MEM_ATTACH_GLOBAL);
    size_t f = 0, t = 0;
    CHECK(cuMemGetInfo_v2(&f, &t));
    printf("huge: %d %d %d %d; guard %llu; free %zu of %zu\n", (int)r1, (int)r2, (int)r3, (int)r4, tl_guard_live(0),
           f, t);
    CHECK(cuMemAlloc_v2(&d, 1 << 20));
    printf("then 1MiB more: guard %llu\n", tl_guard_live(0));
}

static CUdeviceptr shared_ptr;
static pthread_barrier_t bar;

static void *freer(void *arg)
{
    int rounds = *(int *)arg;
    CHECK(cuCtxSetCurrent(ctx0));
    for (int i = 0; i < rounds; i++) {
        pthread_barrier_wait(&bar);
        cuMemFree_v2(shared_ptr);
        pthread_barrier_wait(&bar);
    }
    return NULL;
}

static void double_free(int rounds)
{
    pthread_t t[2];
    pthread_barrier_init(&bar, NULL, 3);
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, freer, &rounds);
    int phantoms = 0;
    for (int i = 0; i < rounds; i++) {
        CHECK(cuMemAlloc_v2(&shared_ptr, 4096));
        pthread_barrier_wait(&bar);
        pthread_barrier_wait(&bar);
        if (tl_guard_live(0) != 0) {
            phantoms++;
            /* the phantom would also hold quota: report once, then clean the slate */
            if (phantoms == 1)
                printf("phantom after round %d: guard %llu, sim %llu\n", i, tl_guard_live(0),
                       (unsigned long long)tl_sim(0).live);
            cuMemFree_v2(shared_ptr);
        }
    }
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("double free: %d rounds, %d phantoms, guard %llu, sim %llu\n", rounds, phantoms, tl_guard_live(0),
           (unsigned long long)tl_sim(0).live);
}

/* Two threads free p while a third takes the address again: the third's
 * allocation must stay counted. */
static CUdeviceptr reused;

static void *reuser(void *arg)
{
    int rounds = *(int *)arg;
    CHECK(cuCtxSetCurrent(ctx0));
    for (int i = 0; i < rounds; i++) {
        pthread_barrier_wait(&bar);
        usleep(500);
        CHECK(cuMemAlloc_v2(&reused, 4096));
        pthread_barrier_wait(&bar);
    }
    return NULL;
}

static void free_reuse(int rounds)
{
    pthread_t t[3];
    pthread_barrier_init(&bar, NULL, 4);
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, freer, &rounds);
    pthread_create(&t[2], NULL, reuser, &rounds);
    int wrong = 0;
    for (int i = 0; i < rounds; i++) {
        CHECK(cuMemAlloc_v2(&shared_ptr, 4096));
        pthread_barrier_wait(&bar);
        pthread_barrier_wait(&bar);
        /* Under-counting is the bug (the quota would let the program past
         * its limit). The other way round cannot be helped: when the second
         * free of p lands after the third thread got p back, the program
         * freed that thread's memory, and no interposer can tell whose
         * allocation a double free reached. */
        if (tl_guard_live(0) < tl_sim(0).live)
            wrong++;
        cuMemFree_v2(reused);
        if (tl_guard_live(0) != tl_sim(0).live) { /* start the next round even */
            CUdeviceptr d;
            while (cuMemAlloc_v2(&d, 4096) == CUDA_SUCCESS && tl_guard_live(0) < tl_sim(0).live)
                ;
        }
    }
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    printf("free and reuse: %d rounds, %d with the guard below the driver\n", rounds, wrong);
}

/* A context torn down while another thread frees memory of it. */
static CUcontext doomed;
static CUdeviceptr doomed_ptr;

static void *late_free(void *arg)
{
    (void)arg;
    CHECK(cuCtxSetCurrent(doomed));
    CUresult r = cuMemFree_v2(doomed_ptr); /* the simulator holds it GPUSIM_FREE_DELAY_US */
    printf("late free: %d\n", (int)r);
    return NULL;
}

NOINLINE static void leak_in_doomed(void) { CHECK(cuMemAlloc_v2(&doomed_ptr, 1 << 20)); }

static void ctxrace(void)
{
    CUdevice d;
    CHECK(cuDeviceGet(&d, 0));
    CHECK(cuCtxCreate_v2(&doomed, 0, d));
    leak_in_doomed();
    pthread_t t;
    pthread_create(&t, NULL, late_free, NULL);
    usleep(30000);
    CHECK(cuCtxDestroy_v2(doomed));
    pthread_join(t, NULL);
    CHECK(cuCtxSetCurrent(ctx0));
    printf("after teardown: guard %llu sim %llu\n", tl_guard_live(0), (unsigned long long)tl_sim(0).live);
}

/* fork while other threads install the program's handler for the dump
 * signal: each child installs its own and takes the signal */
static volatile sig_atomic_t child_handled;
static void child_handler(int sig) { (void)sig; child_handled = 1; }

static void *reinstaller(void *arg)
{
    (void)arg;
    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE))
        signal(SIGUSR1, plain_handler);
    return NULL;
}

static void forksig(int n)
{
    CUdeviceptr d;
    CHECK(cuMemAlloc_v2(&d, 4096));
    pthread_t t[3];
    for (int i = 0; i < 3; i++)
        pthread_create(&t[i], NULL, reinstaller, NULL);
    int ok = 0;
    for (int i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            alarm(5);
            signal(SIGUSR1, child_handler);
            raise(SIGUSR1);
            _exit(child_handled ? 0 : 1);
        }
        int st;
        waitpid(pid, &st, 0);
        ok += WIFEXITED(st) && WEXITSTATUS(st) == 0;
    }
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    printf("forksig: %d forks, %d children took their signal\n", n, ok);
}

/* Every family allocated and freed while the simulator fails some calls
 * (GPUSIM_FAIL): after each call, the guard counts what the driver holds. */
static int off_driver;

static void check_even(void)
{
    if (tl_guard_live(0) != tl_sim(0).live)
        off_driver++;
}

static void injected(void)
{
    CUmemAllocationProp p = tl_vmm_prop(0);
    int failures = 0;
    for (int i = 0; i < 12; i++) {
        CUdeviceptr d = 0, m = 0, a = 0, pd = 0;
        size_t pitch;
        CUarray arr = NULL;
        CUmemGenericAllocationHandle h = 0;
        CUDA_ARRAY_DESCRIPTOR ad = { 256, 256, CU_AD_FORMAT_FLOAT, 1 };
        failures += cuMemAlloc_v2(&d, 1 << 20) != CUDA_SUCCESS; check_even();
        failures += cuMemAllocManaged(&m, 1 << 19, CU_MEM_ATTACH_GLOBAL) != CUDA_SUCCESS; check_even();
        failures += cuMemAllocAsync(&a, 3 << 18, NULL) != CUDA_SUCCESS; check_even();
        failures += cuMemAllocPitch_v2(&pd, &pitch, 1000, 64, 4) != CUDA_SUCCESS; check_even();
        failures += cuArrayCreate_v2(&arr, &ad) != CUDA_SUCCESS; check_even();
        failures += cuMemCreate(&h, 2 << 20, &p, 0) != CUDA_SUCCESS; check_even();
        /* frees: a refused one leaves the memory with the driver; free it again */
        for (int k = 0; k < 2; k++) {
            if (d && cuMemFree_v2(d) == CUDA_SUCCESS) d = 0; else if (d) failures++;
            check_even();
            if (a && cuMemFreeAsync(a, NULL) == CUDA_SUCCESS) a = 0; else if (a) failures++;
            check_even();
            if (h && cuMemRelease(h) == CUDA_SUCCESS) h = 0; else if (h) failures++;
            check_even();
        }
        if (m) cuMemFree_v2(m);
        if (pd) cuMemFree_v2(pd);
        if (arr) cuArrayDestroy(arr);
        check_even();
    }
    printf("injected: %d failed calls, guard off the driver %d times, guard %llu sim %llu\n", failures, off_driver,
           tl_guard_live(0), (unsigned long long)tl_sim(0).live);
}

static void perdev(void)
{
    CUdevice d1;
    CUcontext c1;
    CUdeviceptr a, b;
    CUresult r0 = cuMemAlloc_v2(&a, 4 << 20), r0b = cuMemAlloc_v2(&b, 1);
    CHECK(cuDeviceGet(&d1, 1));
    CHECK(cuDevicePrimaryCtxRetain(&c1, d1));
    CHECK(cuCtxSetCurrent(c1));
    CUresult r1 = cuMemAlloc_v2(&a, 8 << 20), r1b = cuMemAlloc_v2(&b, 1);
    printf("perdev: dev0 4MiB %d +1 %d; dev1 8MiB %d +1 %d; dev0 %llu dev1 %llu\n", (int)r0, (int)r0b, (int)r1,
           (int)r1b, tl_guard_live(0), tl_guard_live(1));
}

static void ctxreuse(void)
{
    CUdevice d0, d1;
    CUcontext a, b;
    CUdeviceptr p, q;
    CHECK(cuDeviceGet(&d0, 0));
    CHECK(cuDeviceGet(&d1, 1));
    CHECK(cuCtxCreate_v2(&a, 0, d1));
    CHECK(cuCtxSetCurrent(a));
    CHECK(cuMemAlloc_v2(&p, 1 << 20));
    CHECK(cuCtxDestroy_v2(a));
    CHECK(cuCtxCreate_v2(&b, 0, d0));
    CHECK(cuCtxSetCurrent(b));
    CHECK(cuMemAlloc_v2(&q, 2 << 20));
    printf("ctxreuse: handle %s; dev0 %llu dev1 %llu; sim dev0 %llu dev1 %llu\n", a == b ? "reused" : "new",
           tl_guard_live(0), tl_guard_live(1), (unsigned long long)tl_sim(0).live, (unsigned long long)tl_sim(1).live);
}

static void pitch_case(void)
{
    CUdeviceptr d;
    size_t pitch = 0;
    CUresult r = cuMemAllocPitch_v2(&d, &pitch, 1000, 100, 4);
    printf("pitch: %d, pitch %zu, guard %llu sim %llu\n", (int)r, pitch, tl_guard_live(0), (unsigned long long)tl_sim(0).live);
}

/* GPUSIM_ROUND_LARGE: the driver grants 2 MiB pages for large requests */
static void rounding(void)
{
    CUdeviceptr p, q;
    CHECK(cuMemAlloc_v2(&p, (3 << 20) + 1));
    CHECK(cuMemAlloc_v2(&q, 1000));
}

static void legacy2dev(void)
{
    CUdevice d1;
    CUcontext c1;
    CHECK(cuDeviceGet(&d1, 1));
    CHECK(cuDevicePrimaryCtxRetain(&c1, d1));
    CUdeviceptr_v1 p0, p1;
    CHECK(cuMemAlloc(&p0, 1 << 20));
    CHECK(cuCtxSetCurrent(c1));
    CHECK(cuMemAlloc(&p1, 2 << 20));
    printf("legacy pointers %s; dev0 %llu dev1 %llu\n", p0 == p1 ? "equal" : "differ", tl_guard_live(0), tl_guard_live(1));
    CHECK(cuMemFree(p1));
    printf("after freeing dev1's: dev0 %llu dev1 %llu\n", tl_guard_live(0), tl_guard_live(1));
    CHECK(cuCtxSetCurrent(ctx0));
    CHECK(cuMemFree(p0));
    printf("after freeing dev0's: dev0 %llu dev1 %llu\n", tl_guard_live(0), tl_guard_live(1));
}

static void nulls(void)
{
    size_t f;
    unsigned f32;
    cuMemFree(0);
    cuMemFree_v2(0); /* no-ops: not unknown frees */
    printf("nulls: %d %d %d %d %d %d\n", (int)cuMemGetInfo_v2(NULL, NULL), (int)cuMemGetInfo_v2(&f, NULL),
           (int)cuMemGetInfo(NULL, NULL), (int)cuMemGetInfo(&f32, NULL), (int)cuDeviceTotalMem_v2(NULL, 0),
           (int)cuDeviceTotalMem(NULL, 0));
}

/* ------------------------------------------------------- simulated driver */

static void sim_sizes(void)
{
    CUdeviceptr d;
    size_t pitch;
    CUarray a;
    CUDA_ARRAY3D_DESCRIPTOR ad = { (size_t)1 << 30, (size_t)1 << 30, (size_t)1 << 30, CU_AD_FORMAT_FLOAT, 4, 0 };
    printf("sim sizes: %d %d %d\n", (int)cuMemAlloc_v2(&d, SIZE_MAX), (int)cuMemAllocPitch_v2(&d, &pitch, SIZE_MAX, 2, 4),
           (int)cuArray3DCreate_v2(&a, &ad));
}

static void *churn(void *arg)
{
    (void)arg;
    CHECK(cuCtxSetCurrent(ctx0));
    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
        CUdeviceptr d;
        if (cuMemAlloc_v2(&d, 4096) == CUDA_SUCCESS)
            cuMemFree_v2(d);
    }
    return NULL;
}

static void sim_fork(int n)
{
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, churn, NULL);
    int ok = 0;
    for (int i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            alarm(5); /* a child that inherited a held lock would hang here */
            CUdeviceptr d;
            CHECK(cuCtxSetCurrent(ctx0));
            _exit(cuMemAlloc_v2(&d, 4096) == CUDA_SUCCESS && cuMemFree_v2(d) == CUDA_SUCCESS ? 0 : 1);
        }
        int st;
        waitpid(pid, &st, 0);
        ok += WIFEXITED(st) && WEXITSTATUS(st) == 0;
    }
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("forks %d, children fine %d\n", n, ok);
}

/* --------------------------------------------------------------- signals */

static volatile sig_atomic_t plain_seen, info_seen, info_bad;

static void plain_handler(int sig) { (void)sig; plain_seen++; }

static void info_handler(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    if (sig != SIGUSR1 || !si || si->si_signo != SIGUSR1)
        info_bad++;
    info_seen++;
}

static void *installer(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        if (rand_r(&seed) & 1) {
            sa.sa_sigaction = info_handler;
            sa.sa_flags = SA_SIGINFO | SA_RESTART;
        } else {
            sa.sa_handler = plain_handler;
            sa.sa_flags = SA_RESTART;
        }
        sigemptyset(&sa.sa_mask);
        sigaction(SIGUSR1, &sa, NULL);
    }
    return NULL;
}

static void sigstorm(int n)
{
    signal(SIGUSR1, plain_handler);
    CUdeviceptr d;
    CHECK(cuMemAlloc_v2(&d, 4096)); /* the guard is armed */
    pthread_t t[3];
    for (int i = 0; i < 3; i++)
        pthread_create(&t[i], NULL, installer, (void *)(uintptr_t)(i + 1));
    struct timespec ts = { 0, 20000 };
    for (int i = 0; i < n; i++) {
        kill(getpid(), SIGUSR1);
        nanosleep(&ts, NULL);
    }
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    printf("sigstorm: %d signals, handlers ran %d, bad %d\n", n, (int)(plain_seen + info_seen), (int)info_bad);
}

static volatile sig_atomic_t usr2_blocked_in_handler, resethand_calls;

static void mask_handler(int sig)
{
    (void)sig;
    sigset_t cur;
    pthread_sigmask(SIG_BLOCK, NULL, &cur);
    usr2_blocked_in_handler = sigismember(&cur, SIGUSR2);
    resethand_calls++;
}

static void *reader(void *arg)
{
    int fd = *(int *)arg;
    char c;
    ssize_t n = read(fd, &c, 1);
    return (void *)(intptr_t)(n < 0 && errno == EINTR ? 1 : 0);
}

static void sigsem(void)
{
    CUdeviceptr d;
    CHECK(cuMemAlloc_v2(&d, 4096));
    /* 1. no SA_RESTART: a blocked read() is interrupted (EINTR) */
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = mask_handler;
    sa.sa_flags = 0;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGUSR2);
    sigaction(SIGUSR1, &sa, NULL);
    int p[2];
    if (pipe(p) != 0)
        exit(1);
    pthread_t t;
    pthread_create(&t, NULL, reader, &p[0]);
    usleep(200000);
    pthread_kill(t, SIGUSR1);
    alarm(10); /* with SA_RESTART forced on, the read never returns */
    void *eintr;
    pthread_join(t, &eintr);
    alarm(0);
    printf("read interrupted: %s\n", eintr ? "yes" : "no");
    printf("sa_mask kept: %s\n", usr2_blocked_in_handler ? "yes" : "no");
    /* 2. SA_RESETHAND: one call, then the disposition is SIG_DFL */
    resethand_calls = 0;
    sa.sa_flags = SA_RESETHAND | SA_RESTART;
    sigaction(SIGUSR1, &sa, NULL);
    kill(getpid(), SIGUSR1);
    usleep(100000);
    sigaction(SIGUSR1, NULL, &old);
    printf("resethand: calls %d, now %s\n", (int)resethand_calls, old.sa_handler == SIG_DFL ? "SIG_DFL" : "other");
    /* 3. what the program asked for is what it reads back */
    sa.sa_flags = SA_NODEFER;
    sigaction(SIGUSR1, &sa, NULL);
    sigaction(SIGUSR1, NULL, &old);
    printf("flags read back: %s\n", (old.sa_flags & (SA_NODEFER | SA_RESTART | SA_RESETHAND)) == SA_NODEFER &&
                                            sigismember(&old.sa_mask, SIGUSR2) ? "same" : "changed");
}

NOINLINE static void leak_before_exit(void) { CUdeviceptr d; CHECK(cuMemAlloc_v2(&d, 12345 * 16)); }

static void dump_exit(void)
{
    leak_before_exit();
    kill(getpid(), SIGUSR1); /* and exit at once */
}

static void dumps(int n)
{
    leak_before_exit();
    for (int i = 0; i < n; i++) {
        kill(getpid(), SIGUSR1);
        usleep(300000);
    }
}

NOINLINE static void parent_site(void) { CUdeviceptr d; CHECK(cuMemAlloc_v2(&d, 1 << 20)); }
NOINLINE static void child_site(void) { CUdeviceptr d; CHECK(cuMemAlloc_v2(&d, 2 << 20)); }

static void forkreport(void)
{
    parent_site();
    pid_t pid = fork();
    if (pid == 0) {
        child_site();
        exit(0);
    }
    int st;
    waitpid(pid, &st, 0);
    printf("child %d\n", (int)pid);
}

static void *api_dumper(void *arg)
{
    int n = *(int *)arg;
    int (*dump)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "gpumemguard_dump");
    for (int i = 0; i < n && dump; i++)
        dump();
    return NULL;
}

static void apidumps(int n)
{
    leak_before_exit();
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, api_dumper, &n);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
}

static void dumplost(const char *dir)
{
    int (*dump)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "gpumemguard_dump");
    CUdeviceptr a, b;
    CHECK(cuMemAlloc_v2(&a, 1 << 20));
    rmdir(dir); /* empty: nothing has been written there */
    if (dump)
        dump();
    mkdir(dir, 0700);
    CHECK(cuMemAlloc_v2(&b, 2 << 20));
    if (dump)
        dump();
    CHECK(cuMemFree_v2(a));
    CHECK(cuMemFree_v2(b));
    printf("dumplost: %s\n", dump ? "two dumps" : "no guard");
}

static void stale_tmp(const char *path)
{
    char p[4200];
    int pid = (int)getpid();
    snprintf(p, sizeof p, "%s.tmp.%d", path, pid);
    close(open(p, O_WRONLY | O_CREAT, 0600));
    for (int i = 0; i < 4; i++) {
        snprintf(p, sizeof p, "%s.tmp.%d.%d", path, pid, i);
        close(open(p, O_WRONLY | O_CREAT, 0600));
    }
    leak_before_exit();
}

static void fd2(const char *file)
{
    leak_before_exit();
    close(2);
    int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0600); /* takes descriptor 2 */
    if (fd != 2)
        exit(3);
    if (write(fd, "DATA\n", 5) != 5)
        exit(4);
}

NOINLINE static CUresult refused_after_closefrom(void) { CUdeviceptr d; return cuMemAlloc_v2(&d, 1ull << 40); }

/* Descriptors from 3 up to 511 open now on an ELF file (the symbolizer's:
 * the program has none; pread moves no offset). */
static int low_elf_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    struct dirent *e;
    if (!d)
        return -1;
    while ((e = readdir(d)) != NULL) {
        int fd = atoi(e->d_name);
        struct stat st;
        char magic[4];
        n += fd >= 3 && fd < 512 && fd != dirfd(d) && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
             pread(fd, magic, 4, 0) == 4 && !memcmp(magic, "\177ELF", 4);
    }
    closedir(d);
    return n;
}

static void closefrom_case(const char *file, const char *first, const char *dump)
{
    leak_before_exit();
    /* the guard's thread warms its symbolizer up before it writes a dump:
     * once the first is there, that symbolizer keeps its descriptors */
    kill(getpid(), SIGUSR1);
    for (int i = 0; i < 600 && access(first, F_OK) != 0; i++)
        usleep(50000);
    printf("closefrom: ELF files open below descriptor 512: %d\n", low_elf_fds());
    for (int fd = 3; fd < 1024; fd++)
        close(fd);
    int p[2];
    if (pipe2(p, O_NONBLOCK) != 0)
        exit(3);
    int f = open(file, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (f < 0 || write(p[1], "hello", 5) != 5)
        exit(4);
    if (refused_after_closefrom() != CUDA_ERROR_OUT_OF_MEMORY)
        exit(5);
    kill(getpid(), SIGUSR1);
    usleep(1500000); /* longer than GPUMEM_METRICS_INTERVAL=1: the thread's tick runs too */
    char buf[64];
    ssize_t n = read(p[0], buf, sizeof buf);
    struct stat st;
    if (fstat(f, &st) != 0)
        exit(6);
    printf("closefrom: pipe %zd bytes '%.*s', file %lld bytes, dump while running: %s\n", n, n > 0 ? (int)n : 0, buf,
           (long long)st.st_size, access(dump, F_OK) == 0 ? "yes" : "no");
}

static void symfds(const char *file, const char *lib)
{
    int (*dump)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "gpumemguard_dump");
    leak_before_exit();
    if (dump)
        dump(); /* names its frames: libdw opens the files they are in */
    for (int fd = 3; fd < 1024; fd++)
        close(fd);
    int f[32];
    struct stat want, st;
    for (int i = 0; i < 32; i++)
        if ((f[i] = open(file, O_RDONLY | O_CREAT, 0600)) < 0)
            exit(3);
    if (fstat(f[0], &want) != 0 || !dlopen(lib, RTLD_NOW))
        exit(4);
    if (dump)
        dump(); /* a library was loaded: the old symbolizer goes, a new one is made */
    int mine = 0;
    for (int i = 0; i < 32; i++)
        mine += fstat(f[i], &st) == 0 && st.st_dev == want.st_dev && st.st_ino == want.st_ino;
    printf("symfds: %d of 32 descriptors still the program's file (%s)\n", mine, dump ? "two reports" : "no guard");
}

/* a C host loading a C++ plugin privately (RTLD_LOCAL), as Python does */
static void cxx(const char *lib)
{
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "%s\n", dlerror());
        exit(1);
    }
    void (*run)(void) = (void (*)(void))dlsym(h, "plugin_run");
    run();
    printf("global __cxa_demangle: %s\n", dlsym(RTLD_DEFAULT, "__cxa_demangle") ? "yes" : "no");
}

static void ctor_refuse(const char *lib)
{
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    void *h = dlopen(lib, RTLD_NOW);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    usleep(500000); /* the whole message, once the loader's lock is free */
    printf("ctor_refuse: %s in %s 10 s\n", h ? "loaded" : "not loaded",
           t1.tv_sec - t0.tv_sec < 10 ? "under" : "over");
}

/* A refused call, timed: its result and whether it came back in under
 * `ms`, on stderr (where the guard's lines go, so that their order shows).
 * dprintf: one write(2) that no stdio buffer holds back. */
static void timed_refusal(const char *what, CUresult (*call)(void), long ms)
{
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    CUresult r = call();
    clock_gettime(CLOCK_MONOTONIC, &t1);
    long took = (long)(t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
    dprintf(2, "%s: the refused call returned %d in %s %ld ms\n", what, (int)r, took < ms ? "under" : "over", ms);
}

/* sizes that differ: no two of these can be folded into one function */
NOINLINE static CUresult refused_in_parent(void) { CUdeviceptr d; return cuMemAlloc_v2(&d, 1ull << 40); }
NOINLINE static CUresult refused_in_child(void) { CUdeviceptr d; return cuMemAlloc_v2(&d, 2ull << 40); }
NOINLINE static CUresult refused_in_child_again(void) { CUdeviceptr d; return cuMemAlloc_v2(&d, 3ull << 40); }
NOINLINE static CUresult refused_after_child(void) { CUdeviceptr d; return cuMemAlloc_v2(&d, 4ull << 40); }

/* fork(2) as it is without glibc's fork(): no pthread_atfork handler runs,
 * so the guard's child handler does not, and the child has no report
 * thread. _Fork() is glibc's own (2.34); a raw clone is what a runtime
 * that makes processes itself does. */
static pid_t fork_without_handlers(const char *how)
{
    if (!strcmp(how, "_Fork"))
        return _Fork();
    return (pid_t)syscall(SYS_clone, SIGCHLD, NULL, NULL, NULL, NULL);
}

static void nohandler_fork(const char *how)
{
    /* the parent's report thread writes the whole message after the call
     * came back: it must be done, idle again, before the fork. A child made
     * without fork handlers inherits whatever lock a thread held at that
     * moment (the allocator's, while it names the frames), and its own exit
     * would wait for it for ever: that hazard is _Fork's, left to its
     * caller, as in nohandler_dump below. At the fork the report thread
     * holds at most its own locks (the child takes them over fresh). */
    timed_refusal("parent", refused_in_parent, 10000);
    usleep(500000);
    pid_t pid = fork_without_handlers(how);
    if (pid == 0) {
        /* each would wait 2 s for a thread that is not there */
        timed_refusal("child", refused_in_child, 1000);
        timed_refusal("child again", refused_in_child_again, 1000);
        exit(0); /* exit: its exit report, and the rest of its messages */
    }
    int st = -1;
    if (pid < 0 || waitpid(pid, &st, 0) != pid)
        perror("nohandler_fork");
    timed_refusal("parent after", refused_after_child, 10000);
    printf("nohandler_fork: child %s\n", WIFEXITED(st) && WEXITSTATUS(st) == 0 ? "exited 0" : "failed");
}

/* A dump signal in a child made without fork handlers, before anything
 * else of the guard's ran there: written at its exit (before the exit
 * report), as the signal asked. */
static void nohandler_dump(const char *how)
{
    CUdeviceptr p;
    CHECK(cuMemAlloc_v2(&p, 4096));
    /* The report thread this allocation started must be idle (waiting for
     * work) before the fork: a child made without fork handlers inherits
     * whatever lock a thread held at that moment (the allocator's, under
     * ASan its own too), and its exit report would wait for it for ever.
     * That hazard is _Fork's, left to its caller; the test avoids it (the
     * run has stacks off: no symbolizer warm-up on that thread). */
    usleep(500000);
    pid_t pid = fork_without_handlers(how);
    if (pid == 0) {
        CUdeviceptr q;
        CHECK(cuMemAlloc_v2(&q, 8192));
        kill(getpid(), SIGUSR1);
        exit(0);
    }
    int st = -1;
    if (pid < 0 || waitpid(pid, &st, 0) != pid)
        perror("nohandler_dump");
    printf("nohandler_dump: child %d %s\n", (int)pid, WIFEXITED(st) && WEXITSTATUS(st) == 0 ? "exited 0" : "failed");
}

NOINLINE static CUresult refused_once(void) { CUdeviceptr d; return cuMemAlloc_v2(&d, 5ull << 40); }

static void refuse_timed(void)
{
    timed_refusal("refuse_timed", refused_once, 10000);
}

/* ------------------------------------------------------------ installers */

static volatile sig_atomic_t inst_calls;
static void inst_handler(int sig) { (void)sig; inst_calls++; }

/* not declared by <signal.h> under _GNU_SOURCE (POSIX 2008 removed it) */
extern sighandler_t bsd_signal(int sig, sighandler_t handler);

static int dump_made(const char *dir, int n)
{
    char path[4200];
    struct stat st;
    snprintf(path, sizeof path, "%s/d.%d.txt", dir, n);
    for (int i = 0; i < 300 && stat(path, &st) != 0; i++)
        usleep(10000);
    return stat(path, &st) == 0;
}

static const char *handler_name(sighandler_t h)
{
    return h == SIG_DFL ? "SIG_DFL" : h == SIG_IGN ? "SIG_IGN" : h == SIG_HOLD ? "SIG_HOLD"
         : h == inst_handler ? "handler" : h == SIG_ERR ? "SIG_ERR" : "other";
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations" /* sigset, sigignore */
static void installers(const char *how, const char *dir)
{
    leak_before_exit(); /* the guard has armed SIGUSR1 */
    sighandler_t prev = SIG_ERR;
    char hold[160] = "";
    if (!strcmp(how, "signal")) prev = signal(SIGUSR1, inst_handler);
    else if (!strcmp(how, "bsd_signal")) prev = bsd_signal(SIGUSR1, inst_handler);
    else if (!strcmp(how, "ssignal")) prev = ssignal(SIGUSR1, inst_handler);
    else if (!strcmp(how, "sysv_signal")) prev = sysv_signal(SIGUSR1, inst_handler);
    else if (!strcmp(how, "__sysv_signal")) prev = __sysv_signal(SIGUSR1, inst_handler); /* signal() in strict ISO C */
    else if (!strcmp(how, "sigignore")) prev = sigignore(SIGUSR1) == 0 ? SIG_DFL : SIG_ERR;
    else if (!strcmp(how, "sigset")) {
        prev = sigset(SIGUSR1, inst_handler);
        /* held: the action stays, the signal waits in the mask; released:
         * it is delivered (one dump, one call) */
        sighandler_t held = sigset(SIGUSR1, SIG_HOLD);
        kill(getpid(), SIGUSR1);
        usleep(100000);
        int calls_held = inst_calls;
        sighandler_t released = sigset(SIGUSR1, inst_handler);
        snprintf(hold, sizeof hold, "; hold returned %s, calls while held %d, release returned %s, dump %s",
                 handler_name(held), calls_held, handler_name(released), dump_made(dir, 1) ? "made" : "missing");
        inst_calls = 0;
    }
    struct sigaction now;
    sigaction(SIGUSR1, NULL, &now);
    int f = now.sa_flags;
    printf("installers %s: previous %s, now %s, flags%s%s%s%s, mask %s", how, handler_name(prev),
           handler_name(now.sa_handler), f & SA_RESTART ? " RESTART" : "", f & SA_RESETHAND ? " RESETHAND" : "",
           f & SA_NODEFER ? " NODEFER" : "", f & (SA_RESTART | SA_RESETHAND | SA_NODEFER) ? "" : " none",
           sigismember(&now.sa_mask, SIGUSR1) ? "USR1" : "empty");
    int first = hold[0] ? 2 : 1, dumps = 0;
    for (int i = 0; i < 2; i++) {
        kill(getpid(), SIGUSR1);
        dumps += dump_made(dir, first + i);
    }
    sigaction(SIGUSR1, NULL, &now);
    printf("%s; 2 signals: dumps %d, handler calls %d, then %s\n", hold, dumps, (int)inst_calls,
           handler_name(now.sa_handler));
}
#pragma GCC diagnostic pop

static void early_signal(void)
{
    /* cuInit only (setup made a context, nothing allocated): then the signal */
    kill(getpid(), SIGUSR1);
    usleep(300000);
    printf("survived the dump signal\n");
}

/* A handler that exits, as many programs' SIGTERM or SIGALRM handlers do. */
static void exit_now(int sig)
{
    (void)sig;
    exit(0);
}

NOINLINE static void leak_at_depth(int n)
{
    CUdeviceptr d;
    if (n > 0) {
        leak_at_depth(n - 1);
        return;
    }
    CHECK(cuMemAlloc_v2(&d, 4096));
}

/* The dump stays in the guard for 5 s: its FIFO takes 4 KiB, is never
 * read, and the report (12 stacks) is longer. The alarm goes off inside
 * it, and the handler's exit() runs the guard's exit report on this
 * thread, which holds the report's lock. */
static void exit_in_dump(const char *fifo)
{
    for (int i = 0; i < 12; i++)
        leak_at_depth(i); /* 12 stacks: a report of more than 4 KiB */
    int rd = open(fifo, O_RDONLY | O_NONBLOCK); /* a reader, so that the guard can open it */
    if (rd < 0 || fcntl(rd, F_SETPIPE_SZ, 4096) < 0)
        exit(3);
    int (*dump)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "gpumemguard_dump");
    if (!dump)
        exit(4);
    signal(SIGALRM, exit_now);
    alarm(1);
    dump();
    printf("the dump returned before the alarm\n");
    exit(5);
}

static void dlclose_case(const char *lib1, const char *lib2)
{
    void *h = dlopen(lib1, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "%s\n", dlerror());
        exit(1);
    }
    void (*leak)(void) = (void (*)(void))dlsym(h, "module_leak");
    leak();
    dlclose(h);
    void *h2 = dlopen(lib2, RTLD_NOW | RTLD_LOCAL);
    if (!h2) {
        fprintf(stderr, "%s\n", dlerror());
        exit(1);
    }
    void (*other)(void) = (void (*)(void))dlsym(h2, "other_function");
    other(); /* a leak of the library still loaded, maybe where the first was */
    printf("loaded %s after unloading %s\n", lib2, lib1);
}

/* --------------------------------------------------------------- stress */

static void *stormer(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    int iters = (int)((uintptr_t)arg >> 8);
    CHECK(cuCtxSetCurrent(ctx0));
    enum { SLOTS = 16 };
    struct { int kind; uint64_t h; } live[SLOTS];
    memset(live, 0, sizeof live);
    CUmemAllocationProp p = tl_vmm_prop(0);
    for (int i = 0; i < iters; i++) {
        int k = rand_r(&seed) % SLOTS;
        if (live[k].kind) {
            switch (live[k].kind) {
            case 1: case 2: case 3: cuMemFree_v2(live[k].h); break;
            case 4: cuMemFreeAsync(live[k].h, NULL); break;
            case 5: cuMemRelease(live[k].h); break;
            case 6: cuArrayDestroy((CUarray)(uintptr_t)live[k].h); break;
            }
            live[k].kind = 0;
            continue;
        }
        int kind = 1 + rand_r(&seed) % 6;
        size_t sz = (size_t)(1 + rand_r(&seed) % 4) << 20;
        CUresult r;
        CUdeviceptr d = 0;
        size_t pitch;
        switch (kind) {
        case 1: r = cuMemAlloc_v2(&d, sz); live[k].h = d; break;
        case 2: r = cuMemAllocPitch_v2(&d, &pitch, sz / 256, 256, 4); live[k].h = d; break;
        case 3: r = cuMemAllocManaged(&d, sz, CU_MEM_ATTACH_GLOBAL); live[k].h = d; break;
        case 4: r = cuMemAllocAsync(&d, sz, NULL); live[k].h = d; break;
        case 5: { CUmemGenericAllocationHandle h; r = cuMemCreate(&h, 2 << 20, &p, 0); live[k].h = h; break; }
        default: {
            CUarray a;
            CUDA_ARRAY_DESCRIPTOR ad = { 512, sz / 2048, CU_AD_FORMAT_FLOAT, 1 };
            r = cuArrayCreate_v2(&a, &ad);
            live[k].h = (uintptr_t)a;
        }
        }
        if (r == CUDA_SUCCESS)
            live[k].kind = kind;
        else if (r != CUDA_ERROR_OUT_OF_MEMORY)
            exit(10 + kind);
    }
    for (int k = 0; k < SLOTS; k++)
        if (live[k].kind) {
            switch (live[k].kind) {
            case 5: cuMemRelease(live[k].h); break;
            case 6: cuArrayDestroy((CUarray)(uintptr_t)live[k].h); break;
            default: cuMemFree_v2(live[k].h);
            }
        }
    return NULL;
}

static void storm(int iters)
{
    pthread_t t[16];
    for (int i = 0; i < 16; i++)
        pthread_create(&t[i], NULL, stormer, (void *)(uintptr_t)(((uintptr_t)iters << 8) | (uintptr_t)(i + 1)));
    for (int i = 0; i < 16; i++)
        pthread_join(t[i], NULL);
    struct sim_stats s = tl_sim(0);
    printf("storm: sim peak %llu sim live %llu guard %llu oom-by-driver %llu\n", (unsigned long long)s.peak,
           (unsigned long long)s.live, tl_guard_live(0), (unsigned long long)s.oom);
}

static void nomem(int n)
{
    CUdeviceptr *p = calloc((size_t)n, sizeof *p);
    int ok = 0, freed = 0;
    for (int i = 0; p && i < n; i++)
        ok += cuMemAlloc_v2(&p[i], 512) == CUDA_SUCCESS;
    unsigned long long held = tl_guard_live(0);
    for (int i = 0; p && i < ok; i++)
        freed += cuMemFree_v2(p[i]) == CUDA_SUCCESS;
    /* an address range: never counted against the quota, so, untracked, it
     * adds nothing to what the report says stays counted */
    CUdeviceptr va;
    CHECK(cuMemAddressReserve(&va, 1ull << 30, 0, 0, 0));
    CHECK(cuMemAddressFree(va, 1ull << 30));
    unsigned long long after = tl_guard_live(0);
    printf("nomem: %d allocs, %d frees; guard %llu while held; after the frees sim %llu, guard %s\n", ok, freed, held,
           (unsigned long long)tl_sim(0).live,
           after == 0 ? "0" : after % 512 == 0 && after <= held ? "the untracked bytes" : "wrong");
    printf("nomem: untracked %llu bytes\n", after); /* the exit report must say as many */
    free(p);
}

/* n allocations, all but the last freed: with the guard's table out of
 * memory, none is tracked, and the exit report must still find one leak */
static void nomem_leak(int n)
{
    CUdeviceptr p;
    for (int i = 0; i < n; i++) {
        CHECK(cuMemAlloc_v2(&p, 4096));
        if (i + 1 < n)
            CHECK(cuMemFree_v2(p));
    }
    printf("nomem_leak: %d allocations, %d freed\n", n, n - 1);
}

/* three allocations of 1 MiB held, the fourth refused (GPUMEM_LIMIT=3M),
 * the same way: the refusal message cannot list what holds the bytes, and
 * must not say they were freed */
static void nomem_refuse(void)
{
    CUdeviceptr p[4];
    for (int i = 0; i < 3; i++)
        CHECK(cuMemAlloc_v2(&p[i], 1 << 20));
    CUresult r = cuMemAlloc_v2(&p[3], 1 << 20);
    printf("nomem_refuse: the fourth %s\n", r == CUDA_ERROR_OUT_OF_MEMORY ? "refused" : "not refused");
    usleep(300000); /* the reporter thread explains it meanwhile */
    for (int i = 0; i < 3; i++)
        CHECK(cuMemFree_v2(p[i]));
}

static void nomem_vmm(void)
{
    CUdeviceptr va;
    CUmemGenericAllocationHandle h;
    CUmemAllocationProp p = tl_vmm_prop(0);
    CHECK(cuMemCreate(&h, 2 << 20, &p, 0));
    CHECK(cuMemAddressReserve(&va, 2 << 20, 0, 0, 0));
    CHECK(cuMemMap(va, 2 << 20, 0, h, 0));
    CHECK(cuMemRelease(h)); /* memory lives until unmapped */
    int under = tl_guard_live(0) < tl_sim(0).live;
    CHECK(cuMemUnmap(va, 2 << 20));
    CHECK(cuMemAddressFree(va, 2 << 20));
    under |= tl_guard_live(0) < tl_sim(0).live;
    printf("nomem_vmm: guard %s the driver; sim %llu at the end\n", under ? "below" : "never below",
           (unsigned long long)tl_sim(0).live);
}

/* A leak that only a context teardown reclaimed: for tests/trust.sh, with
 * the guard out of memory for its list of such (liboomshim.so). */
static void reclaimed_leak(void)
{
    CUdeviceptr p;
    CHECK(cuMemAlloc_v2(&p, 4096));
    CHECK(cuDevicePrimaryCtxReset(0));
    printf("reclaimed_leak: 4096 bytes left to the reset\n");
}

/* With the guard's table out of memory, nothing is tracked: reserved ranges
 * and mappings must count as leaks no more than when they are tracked, and
 * a range freed must not stand for an allocation's free. `leak`: the last
 * of the 50 allocations is never freed. */
static void nomem_ranges(int leak)
{
    CUdeviceptr p, va, kept;
    for (int i = 0; i < 50; i++) {
        CHECK(cuMemAlloc_v2(&p, 4096));
        if (i < 49 || !leak)
            CHECK(cuMemFree_v2(p));
    }
    CUmemGenericAllocationHandle h;
    CUmemAllocationProp pr = tl_vmm_prop(0);
    CHECK(cuMemCreate(&h, 2 << 20, &pr, 0));
    CHECK(cuMemAddressReserve(&va, 2 << 20, 0, 0, 0));
    CHECK(cuMemMap(va, 2 << 20, 0, h, 0));
    CHECK(cuMemUnmap(va, 2 << 20));
    CHECK(cuMemRelease(h));
    CHECK(cuMemAddressFree(va, 2 << 20));
    CHECK(cuMemAddressReserve(&kept, 1ull << 30, 0, 0, 0)); /* never freed: no leak */
    printf("nomem_ranges: %d allocations, %d freed; one range kept\n", 50, leak ? 49 : 50);
}

/* ------------------------------------------- the guard out of memory (sweeps) */

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
    CHECK(cuCtxSetCurrent(ctx0));
    struct timespec ts = { 0, 20000 };
    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
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
    if (cuCtxSetCurrent(ctx0) != CUDA_SUCCESS || tl_guard_live(0) != 0)
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
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
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
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
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

static void forkstorm(int n)
{
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, churn, NULL);
    int ok = 0;
    for (int i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            alarm(10);
            CUdeviceptr d;
            CHECK(cuCtxSetCurrent(ctx0));
            CHECK(cuMemAlloc_v2(&d, 4096));
            _exit(tl_guard_live(0) == 4096 ? 0 : 1);
        }
        int st;
        waitpid(pid, &st, 0);
        ok += WIFEXITED(st) && WEXITSTATUS(st) == 0;
    }
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    printf("forkstorm: %d forks, %d children clean\n", n, ok);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: trust MODE [ARG...]\n");
        return 2;
    }
    const char *m = argv[1];
    int n = argc > 2 ? atoi(argv[2]) : 0;
    setup(0);
    if (!strcmp(m, "vmm_bypass")) vmm_bypass();
    else if (!strcmp(m, "vmm_badloc")) vmm_badloc();
    else if (!strcmp(m, "huge")) huge();
    else if (!strcmp(m, "double_free")) double_free(n);
    else if (!strcmp(m, "legacy2dev")) legacy2dev();
    else if (!strcmp(m, "nulls")) nulls();
    else if (!strcmp(m, "sim_sizes")) sim_sizes();
    else if (!strcmp(m, "sim_fork")) sim_fork(n);
    else if (!strcmp(m, "sigstorm")) sigstorm(n);
    else if (!strcmp(m, "sigsem")) sigsem();
    else if (!strcmp(m, "dump_exit")) dump_exit();
    else if (!strcmp(m, "dumps")) dumps(n);
    else if (!strcmp(m, "forkreport")) forkreport();
    else if (!strcmp(m, "apidumps")) apidumps(n);
    else if (!strcmp(m, "stale_tmp")) stale_tmp(argv[2]);
    else if (!strcmp(m, "dumplost")) dumplost(argv[2]);
    else if (!strcmp(m, "fd2")) fd2(argv[2]);
    else if (!strcmp(m, "closefrom")) closefrom_case(argv[2], argv[3], argv[4]);
    else if (!strcmp(m, "dlclose")) dlclose_case(argv[2], argv[3]);
    else if (!strcmp(m, "symfds")) symfds(argv[2], argv[3]);
    else if (!strcmp(m, "early_signal")) early_signal();
    else if (!strcmp(m, "exit_in_dump")) exit_in_dump(argv[2]);
    else if (!strcmp(m, "installers")) installers(argv[2], argv[3]);
    else if (!strcmp(m, "free_reuse")) free_reuse(n);
    else if (!strcmp(m, "ctxrace")) ctxrace();
    else if (!strcmp(m, "forksig")) forksig(n);
    else if (!strcmp(m, "injected")) injected();
    else if (!strcmp(m, "perdev")) perdev();
    else if (!strcmp(m, "ctxreuse")) ctxreuse();
    else if (!strcmp(m, "pitch")) pitch_case();
    else if (!strcmp(m, "rounding")) rounding();
    else if (!strcmp(m, "cxx")) cxx(argv[2]);
    else if (!strcmp(m, "ctor_refuse")) ctor_refuse(argv[2]);
    else if (!strcmp(m, "nohandler_fork")) nohandler_fork(argv[2]);
    else if (!strcmp(m, "nohandler_dump")) nohandler_dump(argv[2]);
    else if (!strcmp(m, "refuse_timed")) refuse_timed();
    else if (!strcmp(m, "storm")) storm(n);
    else if (!strcmp(m, "forkstorm")) forkstorm(n);
    else if (!strcmp(m, "nomem")) nomem(n);
    else if (!strcmp(m, "nomem_leak")) nomem_leak(n);
    else if (!strcmp(m, "nomem_refuse")) nomem_refuse();
    else if (!strcmp(m, "nomem_vmm")) nomem_vmm();
    else if (!strcmp(m, "nomem_ranges")) nomem_ranges(n);
    else if (!strcmp(m, "reclaimed_leak")) reclaimed_leak();
    else if (!strcmp(m, "nomem_fork")) nomem_fork(n);
    else if (!strcmp(m, "nomem_maps")) nomem_maps(n);
    else if (!strcmp(m, "nomem_dumps")) nomem_dumps(n);
    else if (!strcmp(m, "nomem_gpa")) nomem_gpa(n);
    else if (!strcmp(m, "nomem_pool")) nomem_pool(n);
    else {
        fprintf(stderr, "unknown mode %s\n", m);
        return 2;
    }
    fflush(stdout);
    return 0;
}
