/*
 * reporter.c - see reporter.h.
 *
 * Wake-ups are bytes on a non-blocking pipe: 'S' a signal dump (counted in
 * dumps_asked; a full pipe means the thread has wake-ups pending, so
 * signals coalesce), 'R' a queued refusal.
 * Refusals wait in a small ring; one that finds the ring full is counted,
 * not explained. The ring's lock is the guard's own and is held only to copy
 * an entry; explaining is serialised between the thread and exit by another.
 */
#define _GNU_SOURCE
#include "report/reporter.h"

#include "base/log.h"
#include "core/stacks.h"
#include "core/walkgate.h"
#include "report/report.h"
#include "report/symbolize.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define RING 64

static pthread_mutex_t ring_mu = PTHREAD_MUTEX_INITIALIZER;
static struct gmg_refusal ring[RING];
static unsigned ring_head, ring_tail;   /* under ring_mu */
static unsigned long dropped;           /* under ring_mu */
static pthread_mutex_t explain_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t start_mu = PTHREAD_MUTEX_INITIALIZER;
static int wake_fd[2] = { -1, -1 };
static int running;
static unsigned long dumps_asked;       /* by the signal handler */
static unsigned long dumps_done;        /* under dump_mu */
static pthread_mutex_t dump_mu = PTHREAD_MUTEX_INITIALIZER;

/* The signal dumps asked for and not yet written, as one dump: by the
 * thread, or at exit by the exiting thread, whichever comes first, so that
 * a dump asked for just before exit is written before the exit report. */
static void pending_dumps(void)
{
    pthread_mutex_lock(&dump_mu);
    unsigned long asked = __atomic_load_n(&dumps_asked, __ATOMIC_ACQUIRE);
    if (asked != dumps_done) {
        dumps_done = asked;
        gmg_report_now(GMG_TRIGGER_SIGNAL);
    }
    pthread_mutex_unlock(&dump_mu);
}

static int pop(struct gmg_refusal *out)
{
    int got = 0;
    pthread_mutex_lock(&ring_mu);
    if (ring_head != ring_tail) {
        *out = ring[ring_tail++ % RING];
        got = 1;
    }
    pthread_mutex_unlock(&ring_mu);
    return got;
}

static void drain(void)
{
    struct gmg_refusal ev;
    pthread_mutex_lock(&explain_mu);
    while (pop(&ev))
        gmg_report_refusal(&ev);
    pthread_mutex_lock(&ring_mu);
    unsigned long lost = dropped;
    dropped = 0;
    pthread_mutex_unlock(&ring_mu);
    if (lost)
        gmg_error("%lu more refusal(s) at new call sites were counted, not explained (too many at once)", lost);
    pthread_mutex_unlock(&explain_mu);
}

static void (*tick_fn)(void);
static unsigned tick_seconds;

void gmg_reporter_set_tick(void (*fn)(void), unsigned seconds)
{
    tick_seconds = seconds;
    __atomic_store_n(&tick_fn, fn, __ATOMIC_RELEASE);
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void *reporter(void *arg)
{
    (void)arg;
    char buf[64];
    /* stacks off: no frame is ever named. Inside the walk gate, as a stack
     * walk: a fork waits for it (libdw allocates all along, and a sanitizer's
     * allocator, like libunwind, keeps locks a child never gets back), and
     * during a fork it is left for the first refusal to do. */
    if (__atomic_load_n(&gmg_stack_depth, __ATOMIC_RELAXED) && gmg_walkgate_enter()) {
        gmg_symbolizer_warm();
        gmg_walkgate_leave();
    }
    long long next_tick = now_ms() + (long long)tick_seconds * 1000;
    for (;;) {
        void (*tick)(void) = __atomic_load_n(&tick_fn, __ATOMIC_ACQUIRE);
        if (tick) {
            long long wait = next_tick - now_ms();
            struct pollfd pf = { .fd = wake_fd[0], .events = POLLIN };
            if (wait <= 0 || poll(&pf, 1, (int)wait) == 0) {
                tick(); /* the metrics file, every GPUMEM_METRICS_INTERVAL */
                next_tick = now_ms() + (long long)tick_seconds * 1000;
                continue;
            }
        }
        ssize_t n = read(wake_fd[0], buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return NULL;
        drain();
        pending_dumps();
    }
}

static int start_thread(void)
{
    if (pipe2(wake_fd, O_CLOEXEC) != 0)
        return -1;
    fcntl(wake_fd[1], F_SETFL, O_NONBLOCK);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&t, &attr, reporter, NULL);
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        close(wake_fd[0]);
        close(wake_fd[1]);
        wake_fd[0] = wake_fd[1] = -1;
        return -1;
    }
    __atomic_store_n(&running, 1, __ATOMIC_RELEASE);
    return 0;
}

int gmg_reporter_start(void)
{
    int rc = 0;
    pthread_mutex_lock(&start_mu);
    if (!__atomic_load_n(&running, __ATOMIC_ACQUIRE))
        rc = start_thread();
    pthread_mutex_unlock(&start_mu);
    if (rc != 0)
        gmg_error("cannot start the report thread: dump signals are ignored, refusals explained in place");
    return rc;
}

static void wake(char c)
{
    int saved = errno;
    if (wake_fd[1] >= 0 && write(wake_fd[1], &c, 1) < 0) {
        /* pipe full: the thread has wake-ups pending and will look */
    }
    errno = saved;
}

void gmg_reporter_wake(void)
{
    __atomic_fetch_add(&dumps_asked, 1, __ATOMIC_RELEASE);
    wake('S');
}

void gmg_reporter_refused(const struct gmg_refusal *r)
{
    if (r->abort) {
        gmg_reporter_flush();
        pthread_mutex_lock(&explain_mu);
        gmg_report_refusal(r);
        pthread_mutex_unlock(&explain_mu);
        return;
    }
    pthread_mutex_lock(&ring_mu);
    if (ring_head - ring_tail < RING)
        ring[ring_head++ % RING] = *r;
    else
        dropped++;
    pthread_mutex_unlock(&ring_mu);
    if (__atomic_load_n(&running, __ATOMIC_ACQUIRE))
        wake('R');
    else
        drain();
}

void gmg_reporter_flush(void)
{
    drain();
    pending_dumps();
}

void gmg_reporter_atfork_child(void)
{
    /* Only the forking thread survives: the locks may have been held by one
     * that did not. Start over, empty, and restart the thread if one ran. */
    pthread_mutex_init(&ring_mu, NULL);
    pthread_mutex_init(&explain_mu, NULL);
    pthread_mutex_init(&start_mu, NULL);
    pthread_mutex_init(&dump_mu, NULL);
    dumps_asked = dumps_done = 0;
    ring_head = ring_tail = 0;
    dropped = 0;
    if (!running)
        return;
    running = 0;
    if (wake_fd[0] >= 0)
        close(wake_fd[0]);
    if (wake_fd[1] >= 0)
        close(wake_fd[1]);
    wake_fd[0] = wake_fd[1] = -1;
    start_thread();
}
