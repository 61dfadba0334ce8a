/*
 * test_walkgate.c - core/walkgate.c on its own: a fork waits for another
 * thread's walk to end; a walk that would begin during a fork is skipped,
 * never waited for (a thread holding a lock a later prepare handler needs
 * does not stall the fork); the forking thread walks freely; a walker that
 * never leaves lets the fork go on after GMG_WALKGATE_WAIT_MS and the child
 * then refuses walks (and says so); two forks in progress at once keep
 * walks out until both are done (glibc runs one fork's parent handler while
 * another fork is between its own handlers), with handlers called directly
 * from two threads in that order.
 * Prints "walkgate: N checks passed" or FAIL lines; exit status 1 on failure.
 */
#define _GNU_SOURCE
#include "core/walkgate.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Under ThreadSanitizer: a child forked while the walker thread runs would
 * report that thread as leaked when it exits. */
const char *__tsan_default_options(void);
const char *__tsan_default_options(void) { return "report_thread_leaks=0"; }

/* base/log.h, stubbed: the child's message is checked */
static char said[512];
void gmg_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(said, sizeof said, fmt, ap);
    va_end(ap);
}

static int checks, failed;
#define CHECK(cond, ...) do { checks++; if (!(cond)) { failed++; printf("FAIL %s:%d: ", __FILE__, __LINE__); \
                              printf(__VA_ARGS__); printf("\n"); } } while (0)

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void sleep_ms(int ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };
    nanosleep(&ts, NULL);
}

/* A thread that walks for hold_ms (entered, then left). */
static volatile int entered_flag;
static double left_at;
static int hold_ms;
static void *walker(void *arg)
{
    (void)arg;
    if (gmg_walkgate_enter()) {
        __atomic_store_n(&entered_flag, 1, __ATOMIC_SEQ_CST);
        sleep_ms(hold_ms);
        left_at = now_ms();
        gmg_walkgate_leave();
    }
    return NULL;
}

/* The child's verdict on the gate, as its exit status: 0 walks allowed,
 * 1 refused. */
static int child_verdict(void)
{
    int ok = gmg_walkgate_enter();
    if (ok)
        gmg_walkgate_leave();
    return ok ? 0 : 1;
}

static int fork_and_wait(double *returned_at, char *child_said, size_t n)
{
    int fd[2];
    if (pipe(fd))
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        int v = child_verdict();
        if (write(fd[1], said, strlen(said)) < 0)
            _exit(3);
        _exit(v);
    }
    *returned_at = now_ms();
    close(fd[1]);
    ssize_t got = read(fd[0], child_said, n - 1);
    child_said[got > 0 ? got : 0] = 0;
    close(fd[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Forks while another thread is inside a walk. */
static void fork_during_walk(int hold, int expect_wait, int expect_child)
{
    pthread_t t;
    entered_flag = 0;
    hold_ms = hold;
    pthread_create(&t, NULL, walker, NULL);
    while (!__atomic_load_n(&entered_flag, __ATOMIC_SEQ_CST))
        sleep_ms(1);
    double before = now_ms(), at = 0;
    char child_said[512];
    int v = fork_and_wait(&at, child_said, sizeof child_said);
    pthread_join(t, NULL);
    if (expect_wait) {
        CHECK(at >= left_at, "a %d ms walk: the fork returned %.1f ms before the walker left", hold, left_at - at);
        CHECK(v == 0, "the child of a waited-for fork may walk (verdict %d)", v);
        CHECK(child_said[0] == 0, "the child said nothing (\"%s\")", child_said);
    } else {
        CHECK(at - before >= GMG_WALKGATE_WAIT_MS - 5 && at < left_at,
              "a %d ms walk: the fork went on after %.1f ms, before the walker left", hold, at - before);
        CHECK(v == expect_child, "the child of a fork during a walk refuses walks (verdict %d)", v);
        CHECK(strstr(child_said, "no native call stacks") != NULL, "the child says why (\"%s\")", child_said);
    }
    /* the parent is unaffected either way */
    CHECK(gmg_walkgate_enter() == 1, "the parent walks after the fork");
    gmg_walkgate_leave();
}

/* The program's own prepare handler, registered before the gate's, so run
 * after it: it may walk (the forking thread is exempt), and, when asked,
 * it takes the program's lock `app` (a fork-safe allocator's pattern: its
 * parent and child handlers let go of it). */
static pthread_mutex_t app = PTHREAD_MUTEX_INITIALIZER;
static volatile int take_app;
static void program_prepare(void)
{
    int ok = gmg_walkgate_enter();
    if (ok)
        gmg_walkgate_leave();
    if (!ok)
        printf("FAIL: the forking thread could not walk in a prepare handler\n");
    if (take_app)
        pthread_mutex_lock(&app);
}
static void program_after(void)
{
    if (take_app)
        pthread_mutex_unlock(&app);
}

/* A thread that, holding `app`, allocates (walks) in a loop while the main
 * thread forks: its walks during the fork are skipped, so the fork's
 * prepare handler gets `app` soon. */
static volatile int stop_looping, loops, skipped;
static void *app_walker(void *arg)
{
    (void)arg;
    while (!__atomic_load_n(&stop_looping, __ATOMIC_SEQ_CST)) {
        pthread_mutex_lock(&app);
        if (gmg_walkgate_enter()) {
            sleep_ms(1); /* a walk */
            gmg_walkgate_leave();
        } else {
            __atomic_add_fetch(&skipped, 1, __ATOMIC_SEQ_CST);
        }
        __atomic_add_fetch(&loops, 1, __ATOMIC_SEQ_CST);
        pthread_mutex_unlock(&app);
    }
    return NULL;
}

/* Two forks in progress at once, their handlers called in glibc's order:
 * B prepares, A prepares, B's parent handler runs; walks stay out until
 * A's has run too. */
static volatile int step;
static void wait_step(int n)
{
    while (__atomic_load_n(&step, __ATOMIC_SEQ_CST) < n)
        sleep_ms(1);
}
static void *fork_b(void *arg)
{
    (void)arg;
    gmg_walkgate_prepare();
    __atomic_store_n(&step, 1, __ATOMIC_SEQ_CST);
    wait_step(2);
    gmg_walkgate_parent();
    __atomic_store_n(&step, 3, __ATOMIC_SEQ_CST);
    return NULL;
}
static int tries_walk(void)
{
    int ok = gmg_walkgate_enter();
    if (ok)
        gmg_walkgate_leave();
    return ok;
}
static void *walk_once(void *arg)
{
    *(int *)arg = tries_walk();
    return NULL;
}
static int other_thread_walks(void)
{
    pthread_t t;
    int ok = -1;
    pthread_create(&t, NULL, walk_once, &ok);
    pthread_join(t, NULL);
    return ok;
}

int main(void)
{
    pthread_atfork(program_prepare, program_after, program_after);
    pthread_atfork(gmg_walkgate_prepare, gmg_walkgate_parent, gmg_walkgate_child);

    /* a short walk: the fork waits for it, the child may walk */
    fork_during_walk(50, 1, 0);

    /* a thread that holds the program's lock and walks in a loop: its walks
     * during a fork are skipped, so the program's prepare handler (after
     * ours) gets the lock, and every fork ends soon */
    take_app = 1;
    pthread_t t;
    pthread_create(&t, NULL, app_walker, NULL);
    while (__atomic_load_n(&loops, __ATOMIC_SEQ_CST) < 5)
        sleep_ms(1);
    /* a fork that waited out the gate's bound leaves a child that may not
     * walk (bad_children); the times say the same, but a loaded machine
     * may deschedule a fork or two past the bound: their median is checked */
    double took[20];
    int bad_children = 0;
    for (int i = 0; i < 20; i++) {
        double before = now_ms(), at = 0;
        char child_said[512];
        if (fork_and_wait(&at, child_said, sizeof child_said) != 0)
            bad_children++;
        took[i] = at - before;
    }
    for (int i = 1; i < 20; i++) /* sorted */
        for (int j = i; j > 0 && took[j - 1] > took[j]; j--) {
            double t = took[j];
            took[j] = took[j - 1];
            took[j - 1] = t;
        }
    double median = took[10];
    __atomic_store_n(&stop_looping, 1, __ATOMIC_SEQ_CST);
    pthread_join(t, NULL);
    take_app = 0;
    CHECK(median < GMG_WALKGATE_WAIT_MS, "forks waited %.1f ms (the median of 20) for a lock held by a thread that walks",
          median);
    CHECK(bad_children == 0, "%d children could not walk", bad_children);
    CHECK(loops > 20, "the walking thread went on (%d loops, %d walks skipped)", loops, skipped);

    /* two forks at once: walks stay out until both are done */
    pthread_create(&t, NULL, fork_b, NULL);
    wait_step(1);
    gmg_walkgate_prepare(); /* A */
    __atomic_store_n(&step, 2, __ATOMIC_SEQ_CST);
    wait_step(3); /* B's parent handler has run; A's fork is still on */
    CHECK(other_thread_walks() == 0, "a walk began while one of two forks was still on");
    CHECK(tries_walk() == 1, "the forking thread walks");
    gmg_walkgate_parent(); /* A */
    pthread_join(t, NULL);
    CHECK(other_thread_walks() == 1, "walks begin again once both forks are done");

    /* a walker that outstays the wait: the fork goes on, the child refuses */
    fork_during_walk(GMG_WALKGATE_WAIT_MS + 400, 0, 1);

    printf("walkgate: %d checks passed\n", checks - failed);
    return failed ? 1 : 0;
}
