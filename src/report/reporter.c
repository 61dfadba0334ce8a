/*
 * reporter.c - see reporter.h.
 *
 * Wake-ups are posts on a semaphore, never bytes on a descriptor: a program
 * may close descriptors it did not open (closefrom(3) in a daemon) and get
 * their numbers back for its own files, which the guard must then never
 * read or write. What is pending is in memory: dumps_asked (a signal dump,
 * counted by the handler) and the ring below (refusals). The thread takes
 * every post there is at once, so that a storm of signals is one dump.
 * Refusals wait in a small ring; one that finds the ring full is counted,
 * not explained. The ring's lock is the guard's own and is held only to copy
 * an entry; explaining is serialised between the thread and exit by another.
 *
 * A refused call returns to the program only once its message is written
 * (a program that aborts at once, CUDA_CHECK-style, must still say why): the
 * refusing thread waits for the reporter to write it, at most
 * REFUSAL_WAIT_MS. It is not written on the refusing thread: naming frames
 * takes the loader's lock (dladdr) and libdw's, which a thread of the
 * program holding a lock of its own must never wait for. The wait is
 * bounded all the same: the refusing thread may hold what the reporter
 * needs (the loader's lock, inside a library's constructor), or the
 * reporter may be busy with a dump to a slow destination. Past it the
 * refusing thread writes the message's first line itself (formatted on its
 * stack, one write(2)), and the reporter writes the whole message when it
 * can.
 *
 * The two writers of one refusal never cross: whichever claims the
 * refusal's slot first writes first (`first` below), and the other waits
 * until that is out, so the first line never follows the whole message.
 *
 * A process forked without fork handlers (glibc's _Fork(), a raw clone)
 * has its parent's state here but no thread, and its parent's other
 * threads may have held any lock at the fork. Its first call here takes
 * the state over (orphaned()), and its refused calls write their first
 * line at once and leave the whole message to its exit, never waiting.
 */
#define _GNU_SOURCE
#include "report/reporter.h"
#include "report/fatalsig.h"

#include "base/config.h"
#include "base/dumpask.h"
#include "base/fd.h"
#include "base/lock.h"
#include "base/log.h"
#include "base/procstat.h"
#include "core/stacks.h"
#include "core/walkgate.h"
#include "report/report.h"
#include "report/sites.h"
#include "report/symbolize.h"
#include "report/timeline.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define RING 64
#define REFUSAL_WAIT_MS 2000            /* the longest a refused call waits for its message */

/* Who writes first, per ring slot (under ring_mu): the refused call, past
 * its wait, with the message's first line, or the thread with the whole
 * message, once formatted. A claim, not a compare-and-swap: the one that
 * comes second waits for the first on written_cv, under the same lock. */
enum first_writer {
    FIRST_NONE,         /* queued: neither has begun */
    FIRST_WHOLE,        /* the thread is writing the whole message: the call writes nothing */
    FIRST_LINE,         /* the call is writing its first line: the whole message waits */
    FIRST_LINE_DONE,    /* the first line is out: the whole message may follow */
};

static pthread_mutex_t ring_mu = PTHREAD_MUTEX_INITIALIZER;
static struct gmg_refusal_state ring[RING];
static unsigned char first[RING];       /* under ring_mu: enum first_writer, until the entry is written */
static unsigned ring_head, ring_tail;   /* under ring_mu */
static unsigned ring_written;           /* under ring_mu: entries before it are written; a slot is free again
                                         * only then (its first writer is settled), not when popped */
static pthread_cond_t written_cv;       /* CLOCK_MONOTONIC; made with the thread */
static unsigned long dropped[2];        /* under ring_mu: the quota's refusals, the driver's out of memory */
/* Timeline marks of refusals at call sites explained before, on a device
 * whose timeline has no mark of the site yet (gmg_reporter_marked): under
 * ring_mu, taken by drain(); more at once than MARKS are not marked. */
#define MARKS 64
static struct gmg_refusal marks[MARKS];
static unsigned nmarks;
static pthread_mutex_t explain_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t start_mu = PTHREAD_MUTEX_INITIALIZER;
static sem_t wake_sem;                  /* posted: something is pending */
static int running;
static pid_t owner;                     /* the process this state (and the thread) is for; 0: never started */
static int orphan;                      /* this process was forked without fork handlers: no thread */
#define OWNER_TAKING ((pid_t)-1)        /* owner while a thread takes the state over (orphaned) */
static unsigned long dumps_asked;       /* by the signal handler */
static pid_t asked_in;                  /* by the signal handler: the process the latest dump signal reached */
static unsigned long dumps_done;        /* under dump_mu */
static pid_t dump_asker;                /* by the signal handler: gpumemguard dump's pid (base/dumpask.h) */
static int fatal_sig;                   /* a fatal signal's report asked for (fatalsig.c), 0: none */
static pthread_mutex_t dump_mu = PTHREAD_MUTEX_INITIALIZER;

/* CLOCK_MONOTONIC, `ms` from now */
static struct timespec after_ms(long long ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += (time_t)(ms / 1000);
    ts.tv_nsec += (long)(ms % 1000) * 1000000;
    if (ts.tv_nsec >= 1000000000) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000;
    }
    return ts;
}

/* Tell `gpumemguard dump` (pid, which sent the dump signal with
 * GMG_DUMP_ASK) that its dump is written, and its number; 0 when it went
 * to no file. Only a process named gpumemguard is answered: a pid reused
 * meanwhile by another program is not sent a signal it does not expect. */
static void answer(pid_t pid)
{
    char path[64], comm[32] = "";
    snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
    if (gmg_read_small(path, comm, sizeof comm) <= 0 || strncmp(comm, "gpumemguard\n", 12) != 0)
        return;
    int fell_back, pid_named;
    unsigned n = gmg_report_signal_dump(&fell_back, &pid_named); /* this dump's, not a later one's */
    union sigval v = { .sival_int = fell_back ? GMG_DUMP_REPLY_STDERR
                                              : (int)(n & GMG_DUMP_REPLY_NUMBER) | (n && pid_named ? GMG_DUMP_REPLY_PID : 0) };
    sigqueue(pid, GMG_DUMP_REPLY_SIG, v);
}

/* The signal dumps asked for and not yet written, as one dump: by the
 * thread, or at exit by the exiting thread, whichever comes first, so that
 * a dump asked for just before exit is written before the exit report. */
static void pending_dumps(void)
{
    pthread_mutex_lock(&dump_mu);
    unsigned long asked = __atomic_load_n(&dumps_asked, __ATOMIC_ACQUIRE);
    if (asked != dumps_done) {
        dumps_done = asked;
        /* taken after `asked`: an asker noted since is answered by this
         * dump, which is made after its signal */
        pid_t asker = __atomic_exchange_n(&dump_asker, 0, __ATOMIC_SEQ_CST);
        gmg_report_now(GMG_TRIGGER_SIGNAL);
        if (asker > 0)
            answer(asker);
    }
    pthread_mutex_unlock(&dump_mu);
}

/* The oldest queued refusal and its number in the ring; explain_mu held. */
static int pop(struct gmg_refusal_state *out, unsigned *seq)
{
    int got = 0;
    pthread_mutex_lock(&ring_mu);
    if (ring_head != ring_tail) {
        *seq = ring_tail;
        *out = ring[ring_tail++ % RING];
        got = 1;
    }
    pthread_mutex_unlock(&ring_mu);
    return got;
}

/* gmg_report_refusal's `ready`, for refusal *arg: its whole message is
 * formatted. It goes out first unless the refused call has begun its first
 * line; then once that line is out. A line still not out after
 * REFUSAL_WAIT_MS is stuck (stderr blocked, or its thread left the guard
 * by siglongjmp): the message goes ahead rather than hold every later one. */
static void claim_whole(void *arg)
{
    unsigned slot = *(const unsigned *)arg % RING;
    struct timespec until = after_ms(REFUSAL_WAIT_MS);
    int rc = 0;
    pthread_mutex_lock(&ring_mu);
    while (first[slot] == FIRST_LINE && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&written_cv, &ring_mu, &until);
    if (first[slot] == FIRST_NONE)
        first[slot] = FIRST_WHOLE;
    pthread_mutex_unlock(&ring_mu);
}

/* Refusal `seq` is at a call site explained before: no message of its
 * own. 1 when its refused call, tired of waiting, is done with a first
 * line that promised one (or would have, had a report not held the
 * stream): a line must then say where the call site's message is. 0 when
 * the call is told to write nothing, or its line is stuck (its write(2)
 * holds the stream, which the line would wait for). */
static int promised(unsigned seq)
{
    claim_whole(&seq);
    pthread_mutex_lock(&ring_mu);
    int p = first[seq % RING] == FIRST_LINE_DONE;
    pthread_mutex_unlock(&ring_mu);
    return p;
}

/* Refusal `seq` is written (explain_mu held: in order): its caller may go. */
static void written(unsigned seq)
{
    pthread_mutex_lock(&ring_mu);
    ring_written = seq + 1;
    if (__atomic_load_n(&running, __ATOMIC_ACQUIRE))
        pthread_cond_broadcast(&written_cv);
    pthread_mutex_unlock(&ring_mu);
}

/* A refusal's mark on its device's timeline, the first of its site there
 * (explain_mu held): not pinned host memory's out of memory, which is no
 * device's. */
static void mark(const struct gmg_refusal *r)
{
    if (!(r->driver && gmg_family_host(r->family)) && gmg_sites_first_mark(r->stack, r->family, r->driver, r->device))
        gmg_timeline_event_at(r->driver ? GMG_TL_DRIVER_OOM : GMG_TL_REFUSAL, r->device, r->bytes, r->mono_ms);
}

/* The marks of one drain, the refusals' and the forwarded ones (under
 * explain_mu): marked in the order they were made, so that the first of
 * a site on a device is the one its timeline keeps (a refusal taken from
 * the queue may be later than a mark forwarded before the drain began). */
static struct {
    struct gmg_refusal r[RING + MARKS];
    unsigned n;
} batch;

static void batch_mark(void)
{
    for (unsigned i = 1; i < batch.n; i++) { /* in the order made: a few dozen at most */
        struct gmg_refusal x = batch.r[i];
        unsigned j = i;
        for (; j > 0 && batch.r[j - 1].order > x.order; j--)
            batch.r[j] = batch.r[j - 1];
        batch.r[j] = x;
    }
    for (unsigned i = 0; i < batch.n; i++)
        mark(&batch.r[i]);
    batch.n = 0;
}

static void drain(void)
{
    struct gmg_refusal_state ev;
    unsigned seq;
    pthread_mutex_lock(&explain_mu);
    while (pop(&ev, &seq)) {
        /* explained once per call site; marked once per call site on each
         * device, also where the site was explained on another (a stack
         * id new to the allocation path, of a site the message knows) */
        if (!gmg_report_refusal(&ev, claim_whole, &seq) && promised(seq)) {
            gmg_report_stream_lock(); /* never inside a report another thread writes there */
            gmg_report_refusal_short(&ev.ev, ev.ev.driver
                                                 ? "the program gets the driver's CUDA_ERROR_OUT_OF_MEMORY as it is; "
                                                   "this call site's stack and the biggest live allocations were in "
                                                   "its first message, earlier: further ones from it are counted, "
                                                   "not shown"
                                                 : "returning CUDA_ERROR_OUT_OF_MEMORY; this call site's stack and "
                                                   "the biggest live allocations were in its first message, "
                                                   "earlier: further refusals from it are counted, not shown");
            gmg_report_stream_unlock();
        }
        if (!ev.ev.abort /* (an abort's is marked there) */) {
            if (batch.n == RING) /* more than the queue holds came meanwhile */
                batch_mark();
            batch.r[batch.n++] = ev.ev;
        }
        written(seq);
    }
    pthread_mutex_lock(&ring_mu);
    unsigned long lost = dropped[0], lost_oom = dropped[1];
    dropped[0] = dropped[1] = 0;
    memcpy(batch.r + batch.n, marks, nmarks * sizeof *marks);
    batch.n += nmarks;
    nmarks = 0;
    pthread_mutex_unlock(&ring_mu);
    batch_mark();
    if (lost)
        gmg_error("%lu more refusal(s) at new call sites were counted, not explained (too many at once)", lost);
    if (lost_oom)
        gmg_error("%lu more of the driver's out-of-memory answers at new call sites were counted, not explained "
                  "(too many at once)", lost_oom);
    pthread_mutex_unlock(&explain_mu);
}

static void (*tick_fn)(void);
static unsigned tick_seconds;
static void (*before_fatal_fn)(void);

void gmg_reporter_set_before_fatal(void (*fn)(void))
{
    __atomic_store_n(&before_fatal_fn, fn, __ATOMIC_RELEASE);
}

void gmg_reporter_set_tick(void (*fn)(void), unsigned seconds)
{
    tick_seconds = seconds;
    __atomic_store_n(&tick_fn, fn, __ATOMIC_RELEASE);
}

/* Has CLOCK_MONOTONIC reached t? */
static int passed(const struct timespec *t)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec > t->tv_sec || (now.tv_sec == t->tv_sec && now.tv_nsec >= t->tv_nsec);
}

/* Sleep until something is posted (then 1, every post taken) or, with a
 * deadline, until it passes (0). */
static int wait_for_work(const struct timespec *deadline)
{
    int rc;
    do
        rc = deadline ? sem_clockwait(&wake_sem, CLOCK_MONOTONIC, deadline) : sem_wait(&wake_sem);
    while (rc != 0 && errno == EINTR);
    if (rc != 0)
        return 0; /* ETIMEDOUT */
    while (sem_trywait(&wake_sem) == 0)
        ; /* wake-ups posted meanwhile: this pass sees what they were for */
    return 1;
}

/* Set by the thread as it begins (start_thread waits for it). */
static int born;

/* Under AddressSanitizer and ThreadSanitizer the allocator is not
 * fork-safe: a child forked while this thread was inside malloc never gets
 * the allocator's lock back and hangs at its first allocation (its exit
 * report). There every pass of this thread's work is inside the walk gate,
 * which a fork's prepare handler waits for (500 ms at most). With the C
 * library's allocator, which is fork-safe, only the symbolizer's work is
 * gated (the warm-up below, the live view's names), so that no fork waits
 * for a long report. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define GATE_ALL 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define GATE_ALL 1
#endif
#endif
#ifndef GATE_ALL
#define GATE_ALL 0
#endif

/* Under GATE_ALL: 1 while this thread is inside its work (a pass, the
 * warm-up), where the allocator's locks may be its own. Only a fork waits
 * for the gate: a process made without fork handlers (glibc's _Fork(), a
 * raw clone) is made at any moment, and this is its copy of what the
 * parent's thread was doing then (gmg_reporter_orphan_unsafe). Set before
 * the work's first allocation, cleared after its last. */
static int at_work;

static void at_work_set(int on)
{
    if (GATE_ALL)
        __atomic_store_n(&at_work, on, __ATOMIC_SEQ_CST);
}

/* 1: go on, then work_leave(*in); 0: a fork is being prepared, later. A
 * child that may walk no more (forked mid-walk) works ungated, rather than
 * never. */
static int work_enter(int *in)
{
    *in = 0;
    if (!GATE_ALL)
        return 1;
    if (gmg_walkgate_enter())
        *in = 1;
    else if (!gmg_walkgate_off())
        return 0;
    at_work_set(1);
    return 1;
}

static void work_leave(int in)
{
    at_work_set(0);
    if (in)
        gmg_walkgate_leave();
}

/* 1 while heap_give_back's malloc_trim runs: it holds each arena's lock in
 * turn, the program's own included, and a child made meanwhile without
 * fork handlers would wait for ever on its first free of a large chunk. */
static int trimming;

int gmg_reporter_orphan_unsafe(void)
{
    return (GATE_ALL && __atomic_load_n(&at_work, __ATOMIC_SEQ_CST)) || __atomic_load_n(&trimming, __ATOMIC_SEQ_CST);
}

/* After the warm-up, what it used and let go goes back to the system, so
 * that the symbolizer made ahead holds only what it keeps (docs/benchmarks.md,
 * memory per live allocation). First the pages of this thread's stack below
 * the frame it runs in (libdw's deepest calls; a later report touches them
 * again, zero-filled): inside the walk gate, with the warm-up. */
static void stack_give_back(void)
{
    pthread_attr_t a;
    void *addr;
    size_t size;
    long pg = sysconf(_SC_PAGESIZE);
    if (pg > 0 && pthread_getattr_np(pthread_self(), &a) == 0) {
        if (pthread_attr_getstack(&a, &addr, &size) == 0 && addr) {
            uintptr_t lo = ((uintptr_t)addr + (uintptr_t)pg - 1) & ~((uintptr_t)pg - 1);
            /* four pages of margin below this frame: the calls below */
            uintptr_t hi = ((uintptr_t)__builtin_frame_address(0) - 4 * (uintptr_t)pg) & ~((uintptr_t)pg - 1);
            if (hi > lo && hi <= (uintptr_t)addr + size)
                (void)madvise((void *)lo, hi - lo, MADV_DONTNEED);
        }
        pthread_attr_destroy(&a);
    }
}

/* The size of the main heap (brk), from /proc/self/stat's start_brk
 * (field 47); 0 when it cannot be read. */
static uintptr_t main_heap_size(void)
{
    char buf[1024];
    if (gmg_read_small("/proc/self/stat", buf, sizeof buf) <= 0)
        return 0;
    const char *p = gmg_proc_stat_field(buf, 47);
    if (!p)
        return 0;
    uintptr_t start = (uintptr_t)strtoull(p, NULL, 10), now = (uintptr_t)sbrk(0);
    return start && now != (uintptr_t)-1 && now >= start ? now - start : 0;
}

/* Then the free memory of malloc's arenas (libdw's passing buffers).
 * malloc_trim walks every arena's free chunks under that arena's lock, the
 * program's own included, where the program's threads wait for it: only
 * while the main heap is small (start-up, just after cuInit, in most
 * programs), and outside the walk gate (a fork's own locking of malloc
 * waits for the arena malloc_trim holds, never for the whole of it). */
#define TRIM_HEAP_MAX (64u << 20)
static void heap_give_back(void)
{
    uintptr_t heap = main_heap_size();
    if (heap && heap <= TRIM_HEAP_MAX) {
        __atomic_store_n(&trimming, 1, __ATOMIC_SEQ_CST);
        (void)malloc_trim(0);
        __atomic_store_n(&trimming, 0, __ATOMIC_SEQ_CST);
    }
}

static clockid_t cpu_clock;    /* the reporter thread's CPU clock */
static int cpu_clock_set;

int gmg_reporter_fatal_pending(void)
{
    return __atomic_load_n(&fatal_sig, __ATOMIC_ACQUIRE) != 0 && __atomic_load_n(&owner, __ATOMIC_ACQUIRE) == getpid() &&
           __atomic_load_n(&running, __ATOMIC_ACQUIRE);
}

/* While this thread waits for a fork to end before it works (the walk
 * gate, under a sanitizer), its clock as the wait began: waiting is no
 * progress. A fatal signal's handler on the forking thread (between the
 * fork's prepare and parent handlers) would otherwise see the waiting
 * loop's clock move and wait for the report for ever, while the report
 * waits for the fork that the handler holds up. -1: not waiting. */
static long long fork_wait_cpu = -1;
/* The same while it sleeps on a lock of the guard's (base/lock.h): held by
 * a thread that waits, say, for the allocator's lock that the interrupted
 * thread holds. Its naps, 200 us each, would otherwise look like work. */
static long long lock_wait_cpu = -1;

static long long cpu_now(void)
{
    struct timespec ts;
    if (!__atomic_load_n(&cpu_clock_set, __ATOMIC_ACQUIRE) || clock_gettime(cpu_clock, &ts) != 0)
        return -1;
    return (long long)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

long long gmg_reporter_cpu_ns(void)
{
    long long w = __atomic_load_n(&fork_wait_cpu, __ATOMIC_ACQUIRE);
    if (w < 0)
        w = __atomic_load_n(&lock_wait_cpu, __ATOMIC_ACQUIRE);
    return w >= 0 ? w : cpu_now();
}

static struct timespec sooner(struct timespec a, struct timespec b)
{
    return b.tv_sec < a.tv_sec || (b.tv_sec == a.tv_sec && b.tv_nsec < a.tv_nsec) ? b : a;
}

/* Is this thread the process's last one alive: the main thread ended by
 * pthread_exit (a zombie, /proc/self/stat's state) and no thread of the
 * program's left (field 20, the threads, counts the zombie and this one)?
 * glibc then makes the last thread to end call exit(0); this thread, which
 * never ends, would keep the process alive for ever, every signal blocked. */
static int last_thread_alive(void)
{
    char buf[1024];
    if (gmg_read_small("/proc/self/stat", buf, sizeof buf) <= 0)
        return 0;
    const char *state = gmg_proc_stat_field(buf, 3), *threads = gmg_proc_stat_field(buf, 20);
    return state && threads && *state == 'Z' && strtol(threads, NULL, 10) <= 2;
}

static void *reporter(void *arg)
{
    (void)arg;
    if (pthread_getcpuclockid(pthread_self(), &cpu_clock) == 0)
        __atomic_store_n(&cpu_clock_set, 1, __ATOMIC_RELEASE);
    gmg_lock_wait_note = &lock_wait_cpu;
    __atomic_store_n(&born, 1, __ATOMIC_RELEASE);
    /* stacks off: no frame is ever named. Inside the walk gate, as a stack
     * walk: a fork waits for it (libdw allocates all along, and a sanitizer's
     * allocator, like libunwind, keeps locks a child never gets back), and
     * during a fork it is left for the first refusal to do. */
    if (__atomic_load_n(&gmg_stack_depth, __ATOMIC_RELAXED) && gmg_walkgate_enter()) {
        at_work_set(1);
        gmg_symbolizer_warm();
        stack_give_back();
        at_work_set(0);
        gmg_walkgate_leave();
        heap_give_back();
    }
    struct timespec next_tick = after_ms(0); /* the first at once: the status page appears as the driver is used */
    struct timespec next_alone = after_ms(1000);
    for (;;) {
        if (passed(&next_alone)) { /* once a second, between passes: no lock held, no work under way */
            if (last_thread_alive())
                exit(0); /* as glibc's last thread does: the exit handlers, the exit report, then the end */
            next_alone = after_ms(1000);
        }
        void (*tick)(void) = __atomic_load_n(&tick_fn, __ATOMIC_ACQUIRE);
        /* the timeline's next sample (report/timeline.h), or the tick if
         * sooner; during a fork's preparation, a millisecond */
        int in;
        long ms = 1;
        if (work_enter(&in)) {
            ms = gmg_timeline_tick();
            work_leave(in);
        }
        struct timespec until = sooner(after_ms(ms), next_alone);
        if (tick)
            until = sooner(until, next_tick);
        if (wait_for_work(&until)) {
            if (!work_enter(&in)) { /* after the fork: the work stays posted */
                if (__atomic_load_n(&fork_wait_cpu, __ATOMIC_RELAXED) < 0)
                    __atomic_store_n(&fork_wait_cpu, cpu_now(), __ATOMIC_RELEASE);
                sem_post(&wake_sem);
                struct timespec nap = { 0, 200000 };
                nanosleep(&nap, NULL);
                continue;
            }
            __atomic_store_n(&fork_wait_cpu, -1, __ATOMIC_RELEASE);
            int fatal = __atomic_load_n(&fatal_sig, __ATOMIC_ACQUIRE);
            drain();
            pending_dumps();
            if (fatal) { /* the report, then the signal ends the process as its default would */
                gmg_report_now(GMG_TRIGGER_FATAL);
                void (*before)(void) = __atomic_load_n(&before_fatal_fn, __ATOMIC_ACQUIRE);
                if (before)
                    before();
                gmg_fatalsig_die(fatal);
            }
            work_leave(in);
        }
        if (!tick || !passed(&next_tick))
            continue; /* wake-ups that keep coming must not put an overdue tick off */
        if (!work_enter(&in))
            continue; /* after the fork (the next pass waits a millisecond) */
        tick(); /* guard.c's: the status page, the group, the metrics file */
        work_leave(in);
        next_tick = after_ms((long long)tick_seconds * 1000);
    }
    return NULL;
}

static int start_thread(void)
{
    pthread_condattr_t ca;
    if (sem_init(&wake_sem, 0, 0) != 0 || pthread_condattr_init(&ca) != 0)
        return -1;
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    int made = pthread_cond_init(&written_cv, &ca);
    pthread_condattr_destroy(&ca);
    if (made != 0)
        return -1;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    __atomic_store_n(&born, 0, __ATOMIC_RELAXED);
    int rc = pthread_create(&t, &attr, reporter, NULL);
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0)
        return -1;
    __atomic_store_n(&running, 1, __ATOMIC_RELEASE);
    /* Wait (a second at most) until the thread has begun: its start is the
     * C library's and a sanitizer's runtime's code, which may hold their
     * locks, and a child the program forks meanwhile would never get them
     * back (a sanitizer's allocator's: the child's exit report hangs). Once
     * on its way, the thread's own work keeps out of forks (the walk gate).
     * Once per process, at the first CUDA call: about a thread's start. */
    for (int i = 0; i < 20000 && !__atomic_load_n(&born, __ATOMIC_ACQUIRE); i++) {
        struct timespec ts = { 0, 50000 };
        nanosleep(&ts, NULL);
    }
    return 0;
}

/* Fresh locks, an empty ring, no dump pending: a child's own. Only the
 * forking thread went on in the child, and the locks may have been held
 * by one that did not. */
static void reset(void)
{
    pthread_mutex_init(&ring_mu, NULL);
    pthread_mutex_init(&explain_mu, NULL);
    pthread_mutex_init(&start_mu, NULL);
    pthread_mutex_init(&dump_mu, NULL);
    __atomic_store_n(&dumps_asked, 0, __ATOMIC_SEQ_CST); /* before orphaned() reads asked_in */
    dumps_done = 0;
    ring_head = ring_tail = ring_written = 0;
    dropped[0] = dropped[1] = 0;
    nmarks = 0;
}

/* Is this a process forked without fork handlers (glibc's _Fork(), a raw
 * clone), which has its parent's state here and no thread? Its first call
 * takes the state over, as the fork handler would have: fresh locks, an
 * empty ring, no thread (its parent's other threads may have held the
 * allocator's or the loader's lock at the fork: starting one is not safe).
 * 1: such a process, its state now its own; 0: not one; -1: another thread
 * of it (or a signal handler that interrupted one) is taking the state
 * over just now, and it must not be touched. One getpid(2) a call: the
 * callers are rare (a refusal at a new call site, start, exit) and it is
 * async-signal-safe. A child that shares its parent's memory (vfork,
 * CLONE_VM) may only exec or _exit, and never gets here. */
static int orphaned(void)
{
    pid_t me = getpid();
    for (;;) {
        pid_t seen = __atomic_load_n(&owner, __ATOMIC_ACQUIRE);
        if (seen == me || seen == 0)
            return seen && __atomic_load_n(&orphan, __ATOMIC_RELAXED);
        if (seen == OWNER_TAKING)
            return -1;
        if (__atomic_compare_exchange_n(&owner, &seen, OWNER_TAKING, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
            break;
    }
    reset();
    /* The counts were the parent's, but a dump signal may have reached this
     * process before the take-over (which often waits for its exit): it is
     * still asked for. One dump however many signals, as on the thread. A
     * signal that lands during the take-over either was counted after the
     * reset or set asked_in before this read (both seq_cst). */
    if (__atomic_load_n(&asked_in, __ATOMIC_SEQ_CST) == me)
        __atomic_fetch_add(&dumps_asked, 1, __ATOMIC_SEQ_CST);
    __atomic_store_n(&running, 0, __ATOMIC_RELAXED); /* the parent's thread, not here: nothing to wake */
    __atomic_store_n(&orphan, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&owner, me, __ATOMIC_RELEASE);
    return 1;
}

int gmg_reporter_start(void)
{
    int rc = 0;
    if (orphaned()) /* no thread may be started here */
        return -1;
    gmg_timeline_start();
    pthread_mutex_lock(&start_mu);
    __atomic_store_n(&owner, getpid(), __ATOMIC_RELEASE);
    if (!__atomic_load_n(&running, __ATOMIC_ACQUIRE))
        rc = start_thread();
    pthread_mutex_unlock(&start_mu);
    if (rc != 0)
        gmg_error("cannot start the report thread: dump signals are ignored, refusals explained in place");
    return rc;
}

/* Async-signal-safe (sem_post). A post that finds the count at its
 * maximum (EOVERFLOW) is not needed: the thread has wake-ups pending. */
static void wake(void)
{
    int saved = errno;
    if (__atomic_load_n(&running, __ATOMIC_ACQUIRE))
        sem_post(&wake_sem);
    errno = saved;
}

void gmg_reporter_dump_for(pid_t pid)
{
    __atomic_store_n(&dump_asker, pid, __ATOMIC_SEQ_CST);
}

int gmg_reporter_fatal(int sig)
{
    int saved = errno, rc = 0;
    if (__atomic_load_n(&owner, __ATOMIC_ACQUIRE) == getpid() && !__atomic_load_n(&orphan, __ATOMIC_RELAXED) &&
        __atomic_load_n(&running, __ATOMIC_ACQUIRE)) {
        int none = 0;
        rc = __atomic_compare_exchange_n(&fatal_sig, &none, sig, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) ? 1 : -none;
        if (rc == 1)
            sem_post(&wake_sem);
    }
    errno = saved;
    return rc;
}

void gmg_reporter_wake(void)
{
    /* getpid(2) is async-signal-safe: a child forked without fork handlers
     * that has not taken the state over yet keeps its dump (orphaned()) */
    int saved = errno;
    __atomic_store_n(&asked_in, getpid(), __ATOMIC_SEQ_CST);
    errno = saved;
    __atomic_fetch_add(&dumps_asked, 1, __ATOMIC_SEQ_CST);
    wake();
}

/* Queue a refusal (ring_mu held); 0 when the ring is full (counted). A
 * slot is taken again only once its entry is written: its first writer
 * must stay settled until then. */
static int enqueue(const struct gmg_refusal_state *st, enum first_writer how, unsigned *seq)
{
    if (ring_head - ring_written >= RING) {
        dropped[st->ev.driver != 0]++;
        return 0;
    }
    *seq = ring_head;
    first[ring_head % RING] = (unsigned char)how;
    ring[ring_head++ % RING] = *st;
    return 1;
}

/* Until refusal `seq` is written, at most REFUSAL_WAIT_MS. 1: past it, and
 * the first line is the caller's to write (claimed; line_done() after
 * it); 0: written, or being written by the thread, whose write(2) alone is
 * left: that is waited for as long again, then the call goes, writing
 * nothing (a first line then could only land after the message). */
static int wait_written(unsigned seq)
{
    unsigned slot = seq % RING;
    struct timespec until = after_ms(REFUSAL_WAIT_MS);
    int rc = 0, mine = 0, again = 0;
    pthread_mutex_lock(&ring_mu);
    while ((int)(ring_written - seq) <= 0) {
        if (rc == ETIMEDOUT) {
            if (first[slot] == FIRST_NONE) {
                first[slot] = FIRST_LINE;
                mine = 1;
                break;
            }
            if (again++)
                break;
            until = after_ms(REFUSAL_WAIT_MS);
        }
        rc = pthread_cond_timedwait(&written_cv, &ring_mu, &until);
    }
    pthread_mutex_unlock(&ring_mu);
    return mine;
}

/* The first line of refusal `seq` is out: its whole message may follow
 * (unless it went ahead, tired of waiting, and the slot is another's). */
static void line_done(unsigned seq)
{
    pthread_mutex_lock(&ring_mu);
    if ((int)(ring_written - seq) <= 0)
        first[seq % RING] = FIRST_LINE_DONE;
    pthread_cond_broadcast(&written_cv);
    pthread_mutex_unlock(&ring_mu);
}

/* A process forked without fork handlers: no thread to wait for, and what
 * the whole message needs (the loader's lock, the allocator's, libdw's)
 * may have been held by a thread of the parent's that is not here. The
 * first line now, from the stack (no lock, no allocation); the whole
 * message at exit (gmg_reporter_flush), which takes what the exit report
 * takes anyway. */
static void refused_orphan(const struct gmg_refusal_state *st)
{
    gmg_report_refusal_short(&st->ev, "returning CUDA_ERROR_OUT_OF_MEMORY; this process was forked without fork "
                                      "handlers and has no report thread: this call's stack and the biggest live "
                                      "allocations follow at its exit");
    unsigned seq;
    pthread_mutex_lock(&ring_mu);
    enqueue(st, FIRST_LINE_DONE, &seq);
    pthread_mutex_unlock(&ring_mu);
}

int gmg_reporter_refused(const struct gmg_refusal *r)
{
    /* what was live at the refusal, taken here on the refusing thread
     * (O(stacks), no lock): the message is written from it */
    struct gmg_refusal_state st;
    gmg_report_refusal_capture(r, &st);
    int orphan_now = orphaned();
    if (orphan_now < 0 || (orphan_now && r->abort)) {
        /* the state is being taken over (not a lock of it may be touched),
         * or an abort where the report could wait for ever on a lock that a
         * thread of the parent's held at the fork: the first line alone */
        gmg_report_refusal_short(&st.ev, r->abort ? "aborting: GPUMEM_ON_LIMIT=abort; this process was forked "
                                                    "without fork handlers: no report"
                                                  : "returning CUDA_ERROR_OUT_OF_MEMORY; this process was forked "
                                                    "without fork handlers: the rest of this message is not "
                                                    "written");
        return 1;
    }
    if (r->abort) {
        gmg_reporter_flush();
        pthread_mutex_lock(&explain_mu);
        gmg_report_refusal(&st, NULL, NULL);
        pthread_mutex_unlock(&explain_mu);
        return 1;
    }
    if (orphan_now) {
        refused_orphan(&st);
        return 1;
    }
    /* a thread cancelled in the wait would leave ring_mu locked (the
     * condition wait takes it back), or its first line claimed and never
     * written: not here */
    int cancel;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
    unsigned seq = 0;
    pthread_mutex_lock(&ring_mu);
    int queued = enqueue(&st, FIRST_NONE, &seq);
    pthread_mutex_unlock(&ring_mu);
    if (!__atomic_load_n(&running, __ATOMIC_ACQUIRE)) {
        drain(); /* no thread: here, as it cannot be anywhere else */
    } else {
        wake();
        if (queued && wait_written(seq)) {
            /* past the wait: the first line from here; the whole message
             * follows. Not while a report is being written to the same
             * file (the stream's lock is taken): the line would land
             * inside it (a JSON report no longer parses); the whole
             * message follows the report. */
            if (gmg_report_stream_trylock()) {
                gmg_report_refusal_short(&st.ev, "returning CUDA_ERROR_OUT_OF_MEMORY; the report thread is busy: "
                                                 "this call's stack and the biggest live allocations follow when it "
                                                 "can write them");
                gmg_report_stream_unlock();
            }
            line_done(seq);
        }
    }
    pthread_setcancelstate(cancel, NULL);
    return queued;
}

void gmg_reporter_marked(const struct gmg_refusal *r)
{
    if (orphaned() != 0 || r->abort || (r->driver && gmg_family_host(r->family)))
        return; /* no thread to mark it (or its state being taken over); a device's timeline only */
    pthread_mutex_lock(&ring_mu);
    if (nmarks < MARKS)
        marks[nmarks++] = *r;
    pthread_mutex_unlock(&ring_mu);
    wake();
}

void gmg_reporter_flush(void)
{
    if (orphaned() < 0) /* being taken over by another thread just now */
        return;
    drain();
    pending_dumps();
}

void gmg_reporter_atfork_child(void)
{
    /* Start over, empty, and restart the thread if one ran here, or in the
     * parent of a process forked without handlers (this one's grandparent):
     * this fork ran them, so the locks a new thread needs are sound. */
    reset();
    batch.n = 0; /* a drain the parent was in is the parent's */
    __atomic_store_n(&asked_in, 0, __ATOMIC_RELAXED); /* an ancestor's pid, which this one's may reuse one day */
    __atomic_store_n(&fatal_sig, 0, __ATOMIC_RELAXED); /* a report the parent was writing is the parent's */
    __atomic_store_n(&cpu_clock_set, 0, __ATOMIC_RELAXED); /* the parent's thread's; the new one sets its own */
    __atomic_store_n(&fork_wait_cpu, -1, __ATOMIC_RELAXED); /* the parent's thread waited for this very fork */
    __atomic_store_n(&lock_wait_cpu, -1, __ATOMIC_RELAXED); /* the parent's thread may have slept on a lock */
    int had = running || orphan;
    __atomic_store_n(&at_work, 0, __ATOMIC_RELAXED); /* the parent's thread's; a new one sets its own */
    __atomic_store_n(&owner, getpid(), __ATOMIC_RELEASE);
    orphan = 0;
    if (!had)
        return;
    running = 0; /* the semaphore is made anew (its waiter count was the parent's) */
    start_thread();
}
