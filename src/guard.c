/*
 * guard.c - the life cycle, on top of every layer, and the public API
 * (gpumemguard.h).
 *
 * Start-up reads the configuration (a bad value stops the process), sets
 * the stack depth, installs fork handlers, hands the report side its device
 * interface and installs the upcalls through which the hooks reach the
 * layers above (core/upcalls.h): the first use of the driver (libcuda.so.1
 * already loaded at start-up, a dlsym on its handle that hands out a
 * wrapper, or the first wrapper call) starts the reporter thread and arms
 * the dump signal; a refusal goes to the reporter.
 * The exit report runs from the library destructor, after the program's
 * atexit handlers and the teardown of a CUDA runtime linked into it: what
 * that teardown reclaimed is still reported, as reclaimed. Shared libraries
 * the program links or loads are finalized after it (it is loaded first);
 * GPUMEM_EXITCODE's status waits for them (exit_with_code).
 */
#define _GNU_SOURCE
#include "../include/gpumemguard.h"
#include "base/bias.h"
#include "base/config.h"
#include "base/dlclose.h"
#include "base/exe.h"
#include "base/export.h"
#include "base/log.h"
#include "base/self.h"
#include "cluster/group.h"
#include "cluster/metrics.h"
#include "cluster/status.h"
#include "core/heaps.h"
#include "core/peak.h"
#include "core/pyframes.h"
#include "core/quota.h"
#include "core/ranges.h"
#include "core/stacks.h"
#include "core/track.h"
#include "core/upcalls.h"
#include "core/walkgate.h"
#include "driver/real.h"
#include "driver/routes.h"
#include "hooks/devfacts.h"
#include "hooks/mempool.h"
#include "hooks/refusal.h"
#include "hooks/intercept.h"
#include "hooks/unload.h"
#include "report/dumpsig.h"
#include "report/fatalsig.h"
#include "report/report.h"
#include "report/reporter.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int touched;
static int inert;          /* another copy of the guard was loaded first: see earlier_copy */
static int copy_said_at_exit; /* this copy is that other one: it says so at exit, if CUDA was used */
static int forked_child;   /* metrics stay the parent's: one file, one process */
static int secure_group;   /* GPUMEM_GROUP not used: secure execution */
static int group_pending;  /* GPUMEM_GROUP's segment was being made by a stopped process at start-up */

/* GPUMEM_METRICS with %p replaced by the pid (several processes of a pod
 * or a job, one file each) and %% by a percent sign. */
static void metrics_path(char *out, size_t n)
{
    gmg_config_metrics_path(gmg_cfg.metrics, (int)getpid(), out, n);
}

static int dev_total(int dev, uint64_t *total)
{
    *total = gmg_dev_total(dev);
    return *total ? 0 : -1;
}

/* GPUMEM_METRICS: a failure is said once (at the first CUDA use, or at the
 * first write), then only when it changes */
static int metrics_failing;

static void write_metrics(void)
{
    int failing = __atomic_load_n(&metrics_failing, __ATOMIC_RELAXED);
    char path[sizeof gmg_cfg.metrics + 32];
    /* a percent limit of a device not allocated on yet: its size decides it */
    for (int d = 0; d < gmg_quota_devices_seen(); d++)
        gmg_prepare_limit(d);
    metrics_path(path, sizeof path);
    if (gmg_metrics_write(path, gmg_report_site_names) == 0) {
        failing = 0;
    } else if (!failing) {
        failing = 1;
        if (errno == EEXIST)
            gmg_error("cannot write GPUMEM_METRICS=%s: a device, FIFO or socket is in the file's place (left as it is)",
                      path);
        else if (errno == ELOOP)
            gmg_error("cannot write GPUMEM_METRICS=%s: a symbolic link is in the file's place (neither followed nor "
                      "replaced)", path);
        else
            gmg_error("cannot write GPUMEM_METRICS=%s: %s", path, strerror(errno));
    }
    __atomic_store_n(&metrics_failing, failing, __ATOMIC_RELAXED);
}

/* Does this process keep a metrics file? (Not under secure execution: the
 * setting is refused there; not a fork child: the file is its parent's.) */
static int metrics_here(void) { return gmg_cfg.metrics[0] && !forked_child; }

/* A fatal signal's report is out, the signal is about to end the process:
 * the status page goes, the metrics file gets its last numbers (as at exit). */
static void before_fatal(void)
{
    gmg_status_unpublish();
    if (metrics_here())
        write_metrics();
}

/* A refusal explained; under GPUMEM_ON_LIMIT=abort, which ends the process
 * next, the metrics file gets its last numbers too (the refusal counted). */
static int refused(const struct gmg_refusal *r)
{
    int told = gmg_reporter_refused(r);
    if (r->abort && metrics_here() && gmg_self_owns())
        write_metrics();
    return told;
}

/* Report and metrics paths that cannot be written are the environment's:
 * said once, at the first CUDA use, so that a process that never uses CUDA
 * (a shell under a job-wide LD_PRELOAD) prints nothing. */
static void check_paths(void)
{
    gmg_report_check_path();
    if (metrics_here()) {
        char path[sizeof gmg_cfg.metrics + 32];
        metrics_path(path, sizeof path);
        if (gmg_metrics_check_path(gmg_cfg.metrics, path) < 0)
            __atomic_store_n(&metrics_failing, 1, __ATOMIC_RELAXED);
    }
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The reporter thread's tick, every second: under GPUMEM_GROUP dead
 * members' reservations back; the status page `gpumemguard top` reads
 * (every process its own, a forked child too); the metrics file every
 * GPUMEM_METRICS_INTERVAL (not in a forked child: the file is its
 * parent's). */
static long long next_metrics_ms;

/* The status page's call site is named on the reporter thread, inside the
 * walk gate: the symbolizer allocates all along, and a sanitizer's
 * allocator keeps locks that a child forked meanwhile never gets back (its
 * exit report then hangs). A fork waits for the naming; while one is being
 * prepared nothing is named, and the page asks again at the next tick. */
static void gated_site_names(const uint32_t *stacks, size_t n, char *names, size_t each)
{
    if (!gmg_walkgate_enter()) {
        for (size_t i = 0; i < n; i++)
            names[i * each] = 0;
        return;
    }
    gmg_report_site_names(stacks, n, names, each);
    gmg_walkgate_leave();
}

static void tick(void)
{
    gmg_unload_tick(); /* unloads the exported dlclose did not see */
    gmg_py_tick();     /* an interpreter loaded since start-up */
    if (gmg_quota_pooled())
        gmg_group_tick();
    if (!gmg_cfg.secure) {
        /* a percent limit of a device not allocated on yet: its size decides it */
        for (int d = 0; d < gmg_quota_devices_seen(); d++)
            gmg_prepare_limit(d);
        gmg_status_tick(gated_site_names);
    }
    if (metrics_here() && now_ms() >= next_metrics_ms) {
        write_metrics();
        next_metrics_ms = now_ms() + (long long)gmg_cfg.metrics_interval * 1000;
    }
}

static void set_tick(void)
{
    next_metrics_ms = now_ms() + (long long)gmg_cfg.metrics_interval * 1000;
    gmg_reporter_set_tick(tick, 1);
}

static void first_use(void)
{
    if (__atomic_exchange_n(&touched, 1, __ATOMIC_ACQ_REL))
        return;
    check_paths();
    gmg_unload_tick(); /* the unload count every later tick compares with (before the reporter runs) */
    set_tick();
    gmg_reporter_set_before_fatal(before_fatal);
    gmg_reporter_start();
    gmg_dumpsig_arm();
    gmg_fatalsig_arm();
    if (secure_group)
        gmg_error("secure execution: GPUMEM_GROUP=%s is not used (no shared file is opened); GPUMEM_LIMIT holds "
                  "this process alone", gmg_cfg.group);
    if (group_pending)
        gmg_notice("GPUMEM_GROUP=%s: the group's segment was being made by a process that held its lock and did not "
                   "let go (stopped?) when this one started: it joins the group once the segment is ready; until "
                   "then its allocations are refused under a GPUMEM_LIMIT of its own, or, with none (or under "
                   "GPUMEM_ON_LIMIT=warn), counted in the group when it joins", gmg_cfg.group);
}

static void child(void)
{
    gmg_self_take(); /* a fork() child: the state copied here is its own now */
    gmg_bias_atfork_child();
    gmg_walkgate_child();
    forked_child = 1;
    gmg_status_atfork_child();
    set_tick(); /* before the reporter restarts below */
    gmg_track_atfork_child();
    gmg_stacks_atfork_child();
    gmg_py_atfork_child();
    gmg_quota_reset();
    gmg_group_atfork_child();
    gmg_record_atfork_child();
    gmg_ranges_atfork_child();
    gmg_heaps_atfork_child();
    if (__atomic_load_n(&touched, __ATOMIC_ACQUIRE))
        gmg_mempool_atfork_child();
    gmg_mempools_atfork_child(__atomic_load_n(&touched, __ATOMIC_ACQUIRE));
    gmg_refusal_atfork_child();
    gmg_report_atfork_child();
    gmg_reporter_atfork_child();
    gmg_dumpsig_atfork_child();
    gmg_fatalsig_atfork_child();
}

/* GPUMEM_GROUP: the segment is opened and checked at start-up, like any
 * setting; the process joins the group at its first reservation. */
static void open_group(void)
{
    char err[1024];
    if (!gmg_cfg.group[0])
        return;
    if (gmg_cfg.secure) {
        secure_group = 1; /* said at the first use of the driver: a setuid tool that never uses it stays quiet */
        return;
    }
    int r = gmg_group_open(gmg_cfg.group, err, sizeof err);
    if (r < 0) {
        gmg_error("%s", err);
        _exit(2);
    }
    group_pending = r > 0; /* said at the first use of the driver, as below */
    gmg_quota_set_pool(gmg_group_pool());
}

/*
 * Two copies of the guard in one process: two paths in LD_PRELOAD (a job's
 * environment and the command's), or a program that dlopens a copy from
 * another path while one is preloaded. The first copy's exports come first,
 * so it intercepts everything; the other would still arm the dump signal
 * and print an exit report of its own (nothing). It stays out instead, and
 * its public API answers with the first copy's. The first copy's `name`, or
 * NULL when this copy is the first (or the only one).
 */
static void copy_marker(void) {}

/* Does p lie in this copy of the guard (1), in another object (0)? -1:
 * unknown (NULL, or no object holds it). */
static int here(const void *p)
{
    Dl_info mine, theirs;
    if (!p || !dladdr((void *)copy_marker, &mine) || !dladdr(p, &theirs))
        return -1;
    return mine.dli_fbase == theirs.dli_fbase;
}

static void *earlier_copy(const char *name)
{
    void *p = gmg_real_dlsym(RTLD_DEFAULT, name);
    return here(p) == 0 ? p : NULL;
}

/* name as the global scope has it: the main program's handle looks there
 * only (RTLD_DEFAULT, asked from here, would look in this library's own
 * scope too) */
static void *global_sym(const char *name)
{
    void *global = dlopen(NULL, RTLD_LAZY);
    return global ? gmg_real_dlsym(global, name) : NULL;
}

/* GPUMEM_LOG=quiet, before the settings are read: a copy that stays out
 * says nothing then */
static int log_quiet(void)
{
    const char *log = getenv("GPUMEM_LOG");
    return log && !strcmp(log, "quiet");
}

/* Is the guard in the process's global scope, where the program's calls
 * find its entry points? It is when preloaded (or linked); loaded later
 * through NVTX_INJECTION64_PATH (which the command passes to every
 * descendant, also to one that drops LD_PRELOAD) or another dlopen, it is
 * not, the program's driver calls never come here, and a report would say
 * "0 bytes" of a program whose allocations it never saw. Asked by a name
 * only the guard exports (a driver entry point's may be found first in
 * another object that forwards to the guard: a non-PIE program's PLT, an
 * interposer before it in LD_PRELOAD). */
static int in_global_scope(void) { return here(global_sym("gpumemguard_version")) == 1; }

/* The driver itself ahead of the guard in the global scope (named before
 * it in LD_PRELOAD): the program's own calls to the driver's entry points
 * go straight to the driver, and the guard sees only what comes through
 * its dlsym and cuGetProcAddress (the CUDA runtime's route). Said once. */
static void driver_first_notice(void)
{
    void *p = global_sym("cuMemAlloc_v2");
    Dl_info at;
    if (here(p) != 0 || !dladdr(p, &at))
        return; /* the guard's own: as it should be */
    if (!gmg_driver_loaded() || !gmg_driver_holds(p)) /* never loads the driver itself */
        return; /* another object's (a program built without PIC, another interposer): it forwards */
    gmg_notice("%s comes before the guard in this process's libraries (LD_PRELOAD names it first?): the program's own "
               "calls to the driver go straight to it and are not guarded; name the guard first",
               at.dli_fname ? at.dli_fname : "the CUDA driver");
}

/* Two copies of the guard, this one loaded after the other: said once the
 * process is done, and only if it used CUDA (the driver is loaded), so
 * that a job's every process that never touches CUDA (a shell, ls, a pipe
 * of tools) prints nothing. */
static void say_other_copy(void)
{
    void *first = earlier_copy("gpumemguard_version");
    void *driver = first ? dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD) : NULL;
    if (!driver)
        return;
    gmg_dlclose_own(driver);
    Dl_info mine, theirs;
    dladdr((void *)copy_marker, &mine);
    dladdr(first, &theirs);
    gmg_notice("another copy of the guard was loaded first (%s): this one (%s) stayed out of its way",
               theirs.dli_fname, mine.dli_fname);
}

__attribute__((constructor)) static void gmg_start(void)
{
    char err[2048];
    void *first = earlier_copy("gpumemguard_version");
    if (first) {
        inert = 1;
        copy_said_at_exit = !log_quiet(); /* by a process that used CUDA, at its exit (gmg_stop) */
        return;
    }
    if (!in_global_scope()) {
        Dl_info mine;
        inert = 1;
        if (!log_quiet())
            gmg_notice("loaded without LD_PRELOAD (%s, by NVTX_INJECTION64_PATH or dlopen): this process's CUDA "
                       "calls do not come through it, so it tracks nothing and writes no report; preload it "
                       "(LD_PRELOAD, or the gpumemguard command) to guard this process",
                       dladdr((void *)copy_marker, &mine) && mine.dli_fname ? mine.dli_fname : "libgpumemguard.so");
        return;
    }
    gmg_self_take();
    gmg_bias_start(); /* before any thread of ours: the table's and the peak's owners (base/bias.h) */
    gmg_stderr_remember();
    if (gmg_config_load(err, sizeof err) < 0) {
        gmg_error("%s", err);
        _exit(2);
    }
    gmg_log_level = gmg_cfg.log_level;
    gmg_exe_cmdline(); /* the program's arguments, before it can rewrite its argv */
    /* and its path, read now, before any thread: its first reader may be the
     * report thread naming frames, and a child made without fork handlers
     * meanwhile would inherit that read's pthread_once in progress, and
     * wait on it for ever at its exit report */
    gmg_exe_path();
    gmg_stacks_set_depth(gmg_cfg.stack_depth);
    gmg_py_set_mode(gmg_cfg.python);
    gmg_py_detect(); /* here, not at the first capture (pyframes.h) */
    gmg_status_forget_exec();
    open_group();
    gmg_quota_settle_counting(); /* after the limit and the group are known */
    static const struct gmg_device_ops dev_ops = {
        .meminfo = gmg_dev_meminfo,
        .address_range = gmg_dev_address_range,
        .total = dev_total,
        .mempools = gmg_mempools_use,
    };
    gmg_report_set_device_ops(&dev_ops);
    gmg_mempool_trim = gmg_mempool_trim_for;
    static const struct gmg_upcalls up = {
        .first_use = first_use,
        .refused = refused,
        .marked = gmg_reporter_marked,
    };
    gmg_upcalls_install(&up);
    gmg_routes_on_contact(first_use);
    pthread_atfork(gmg_walkgate_prepare, gmg_walkgate_parent, child);
    gmg_debug("loaded: %d entry points wrapped", H_COUNT);
    driver_first_notice();
    /* linked with -lcuda (or loaded before us): the process uses CUDA, and
     * the dump signal must not kill it before its first allocation. A
     * process that never touches the driver keeps its signals untouched. */
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (h) {
        gmg_dlclose_own(h);
        first_use();
    }
}

/* A child made without fork handlers (_Fork, a raw clone) at its exit:
 * the live table, the quota's counters and the group membership it holds
 * are its parent's, copied (its own allocations since cannot be told apart
 * from them). As the fork handler would have at the fork: an empty table
 * and counters, so that its exit report (its refusals, a dump it was asked
 * for) lists none of its parent's allocations as its own and
 * GPUMEM_EXITCODE does not count them; the group's slot stays the
 * parent's (cluster/group.c knows the pid that joined); no metrics (the
 * file is the parent's). Its allocations still live at exit go unlisted. */
static void take_over_at_exit(void)
{
    gmg_self_take();
    gmg_bias_atfork_child();
    forked_child = 1;
    gmg_track_atfork_child();
    gmg_stacks_atfork_child();
    gmg_quota_reset();
    gmg_record_atfork_child();
    gmg_ranges_atfork_child();
    gmg_mempool_atfork_child();
    gmg_mempools_atfork_child(1);
    gmg_heaps_atfork_child(); /* its lock may have been held by a dump at the fork */
    gmg_report_orphan_child(); /* the parent's report thread may have held the timeline's lock at the fork */
}

/* While a fatal signal's report is pending, its thread ends the process by
 * the signal once the report is out: wait for that, 30 s at most. */
static void wait_fatal_report(void)
{
    for (int i = 0; i < 3000 && gmg_reporter_fatal_pending(); i++) {
        struct timespec nap = { 0, 10000000 };
        nanosleep(&nap, NULL);
    }
}

/* The exit status of GPUMEM_EXITCODE, last. exit() would flush the
 * program's stdio streams after this: _exit skips that, so flush them as
 * exit does (glibc's fcloseall is _IO_cleanup, which takes no stream's
 * lock), or the program's buffered output to a file or pipe is lost. */
static void exit_with_code(void *arg)
{
    (void)arg;
    fcloseall();
    _exit(gmg_cfg.exitcode);
}

/* glibc's, as atexit() calls it; with no object's handle, the handler is
 * run by exit() itself, not by the finalization of this library (which
 * runs its own object's handlers at once) */
extern int __cxa_atexit(void (*fn)(void *), void *arg, void *dso_handle);

__attribute__((destructor)) static void gmg_stop(void)
{
    if (inert && copy_said_at_exit)
        say_other_copy();
    if (inert || !__atomic_load_n(&touched, __ATOMIC_ACQUIRE))
        return;
    if (!gmg_self_owns()) {
        /* a vfork or CLONE_VM child that calls exit(): the memory is its
         * parent's own, so the take-over below would empty the parent's
         * table; and this exit runs the parent's exit handlers for it (the
         * list is shared), so the parent will have none to run, this
         * report's among them: said, nothing else done */
        if (gmg_self_shares_memory()) {
            gmg_error("process %d, made by vfork or clone(CLONE_VM) from process %d, called exit() instead of "
                      "_exit(): it ran its parent's exit handlers, so its parent will write no exit report (and "
                      "GPUMEM_EXITCODE cannot apply to it)", (int)getpid(), (int)getppid());
            return;
        }
        if (gmg_reporter_orphan_unsafe()) {
            /* made (_Fork, clone) while the parent's report thread was at
             * work: under a sanitizer, an allocator lock it held is never
             * let go of here, and the report's first allocation that needs
             * it would wait for ever (reporter.h) */
            gmg_error("made without fork handlers (_Fork, a raw clone) while its parent's report thread was at work: "
                      "the allocator may keep that thread's locks here for ever, so no exit report is written (nor "
                      "the rest of its refusals' messages, nor a dump asked of it)");
            return;
        }
        take_over_at_exit();
    }
    if (gmg_reporter_fatal_pending()) {
        /* the program went on past a fatal signal whose report waited for
         * something its thread held, and now exits: the report's thread
         * ends the process by the signal once it is out, as it would have
         * ended at once without the guard. Not for ever: a report stuck
         * for good lets the exit go on. */
        wait_fatal_report();
        if (gmg_reporter_fatal_pending()) { /* stuck for good: no exit report waits behind it */
            gmg_status_remove();
            gmg_group_leave();
            return;
        }
    }
    if (gmg_report_busy()) {
        /* exit() on a thread in the middle of a report (a signal handler of
         * the program's, libdw out of memory): the report's locks are this
         * thread's own, and the exit report would wait for them for ever */
        gmg_error("exit() called during a report on the same thread: no exit report");
        gmg_status_remove();
        gmg_group_leave();
        return;
    }
    gmg_reporter_flush();
    uint64_t leaks = gmg_report_now(GMG_TRIGGER_EXIT);
    if (metrics_here())
        write_metrics();
    gmg_status_remove();
    gmg_group_leave(); /* its memory goes with the process */
    /* a fatal signal (SIGTERM at a job's time limit) that came during the
     * exit report: its report's thread ends the process by it, status
     * 128+N, as the signal would have without the guard */
    wait_fatal_report();
    if (leaks && gmg_cfg.exitcode) {
        /* as LeakSanitizer's exitcode: the job fails on a leak. The
         * libraries finalized after this one (the program's own shared
         * libraries, loaded after it: a static destructor that closes a
         * log file) still run: the status is set by an exit handler
         * registered now, which exit() runs once every library is
         * finalized (it runs handlers registered meanwhile) */
        if (__cxa_atexit(exit_with_code, NULL, NULL) != 0)
            exit_with_code(NULL);
    }
}

/* The public API of a copy that stays out (earlier_copy): the first copy's. */
#define FIRST_COPY(fn, ...)                                                   \
    do {                                                                      \
        __typeof__(&fn) first_ = inert ? (__typeof__(&fn))earlier_copy(#fn) : NULL; \
        if (first_)                                                           \
            return first_(__VA_ARGS__);                                       \
    } while (0)

GMG_EXPORT const char *gpumemguard_version(void)
{
    return GPUMEMGUARD_VERSION;
}

GMG_EXPORT int gpumemguard_dump(void)
{
    FIRST_COPY(gpumemguard_dump);
    if (!gmg_self_owns())
        return -1; /* the live table is another process's (a child made without fork handlers) */
    gmg_report_now(GMG_TRIGGER_API);
    return 0;
}

GMG_EXPORT unsigned long long gpumemguard_live_bytes(int device)
{
    FIRST_COPY(gpumemguard_live_bytes, device);
    if (device >= 0)
        return gmg_peak_in_use(device);
    unsigned long long sum = 0;
    for (int d = 0; d < GMG_MAX_DEVICES; d++)
        sum += gmg_peak_in_use(d);
    return sum;
}

GMG_EXPORT unsigned long long gpumemguard_leaked_bytes(int device)
{
    FIRST_COPY(gpumemguard_leaked_bytes, device);
    uint64_t leaked, retained;
    gmg_report_query(device, &leaked, &retained);
    return leaked;
}

GMG_EXPORT unsigned long long gpumemguard_retained_bytes(int device)
{
    FIRST_COPY(gpumemguard_retained_bytes, device);
    uint64_t leaked, retained;
    gmg_report_query(device, &leaked, &retained);
    return retained;
}

GMG_EXPORT int gpumemguard_refusals(int device, unsigned long long *quota, unsigned long long *driver)
{
    FIRST_COPY(gpumemguard_refusals, device, quota, driver);
    if (device < -1 || device >= GMG_MAX_DEVICES)
        return -1;
    int lo = device < 0 ? 0 : device, hi = device < 0 ? GMG_MAX_DEVICES : device + 1;
    unsigned long long refused = 0, oom = device < 0 ? gmg_quota_host_driver_oom() : 0;
    for (int d = lo; d < hi; d++) {
        refused += gmg_quota_refused(d);
        oom += gmg_quota_driver_oom(d);
    }
    if (quota)
        *quota = refused;
    if (driver)
        *driver = oom;
    return 0;
}

GMG_EXPORT unsigned long long gpumemguard_limit(int device)
{
    FIRST_COPY(gpumemguard_limit, device);
    gmg_prepare_limit(device);
    return gmg_quota_limit_known(device);
}
