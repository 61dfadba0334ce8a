/*
 * test_walkgate.c - core/walkgate.c on its own: a fork waits for another
 * thread's walk to end; a walk waits for a fork to end; the forking thread
 * walks freely; a walker that never leaves lets the fork go on after
 * GMG_WALKGATE_WAIT_MS and the child then refuses walks (and says so).
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
 * after it: it may walk (the forking thread is exempt); in the second case
 * it also takes its time, while another thread tries to walk. */
static volatile int slow, in_prepare;
static double walked_at, prepare_done_at;
static void program_prepare(void)
{
    int ok = gmg_walkgate_enter();
    if (ok)
        gmg_walkgate_leave();
    if (!ok)
        printf("FAIL: the forking thread could not walk in a prepare handler\n");
    if (slow) {
        __atomic_store_n(&in_prepare, 1, __ATOMIC_SEQ_CST);
        sleep_ms(100);
        prepare_done_at = now_ms();
    }
}
static void *late_walker(void *arg)
{
    (void)arg;
    while (!__atomic_load_n(&in_prepare, __ATOMIC_SEQ_CST))
        sleep_ms(1);
    if (gmg_walkgate_enter()) {
        walked_at = now_ms();
        gmg_walkgate_leave();
    }
    return NULL;
}

int main(void)
{
    pthread_atfork(program_prepare, NULL, NULL);
    pthread_atfork(gmg_walkgate_prepare, gmg_walkgate_parent, gmg_walkgate_child);

    /* a short walk: the fork waits for it, the child may walk */
    fork_during_walk(50, 1, 0);

    /* a walk begun while the fork is being prepared waits for its end */
    slow = 1;
    pthread_t t;
    pthread_create(&t, NULL, late_walker, NULL);
    double at = 0;
    char child_said[512];
    int v = fork_and_wait(&at, child_said, sizeof child_said);
    pthread_join(t, NULL);
    slow = 0;
    CHECK(v == 0, "the child walks (verdict %d)", v);
    CHECK(walked_at >= prepare_done_at, "a walk begun while the fork was prepared ran %.1f ms before it ended",
          prepare_done_at - walked_at);

    /* a walker that outstays the wait: the fork goes on, the child refuses */
    fork_during_walk(GMG_WALKGATE_WAIT_MS + 400, 0, 1);

    printf("walkgate: %d checks passed\n", checks - failed);
    return failed ? 1 : 0;
}
