/*
 * flags.c - the program's own SIGUSR1 action under the guard: no SA_RESTART
 * (a blocked read() gets EINTR), its sa_mask, SA_RESETHAND (one call, then
 * SIG_DFL), and the flags it reads back are those it set.
 *
 *   signal_flags
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include "../integration/testlib.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <unistd.h>

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

int main(void)
{
    tl_setup(0);
    sigsem();
    fflush(stdout);
    return 0;
}
