/* fatalprog.c MODE - a program that leaks device memory, then waits to be
 * ended by a signal (tests/fatal/fatal.sh).
 *   wait:    SIGINT and SIGHUP to their default first (a shell starts a
 *            background job with SIGINT ignored), then leaks 1 MiB in
 *            leak_before_term, prints "ready", waits
 *   keep:    the same, dispositions as inherited
 *   query:   leaks, then asks for SIGTERM's action with sigaction and
 *            signal and prints what it reads; installs its own handler,
 *            prints "ready", waits: its handler says "handled" and exits 7
 *   sleep:   as wait, but waits in one sleep(30), then says "ran on" and
 *            returns 0 (a signal must end it inside the sleep)
 *   raise:   as wait, then raise(SIGTERM), then says "ran on" and returns
 *            0 (the signal must end it inside raise)
 *   ctor:    as wait, then dlopens argv[2], whose constructor says "ready"
 *            and sleeps 30 s (the loader's lock held): the report must
 *            still be written, and the signal end the process
 *   threads: as wait, with a second thread that waits too (a signal sent
 *            twice, by a process group and by the command forwarding it,
 *            reaches both threads)
 *   pending: as wait, then blocks SIGTERM and SIGHUP, sends itself both,
 *            and unblocks them: the kernel runs the two handlers one
 *            inside the other (the first signal's must end the process,
 *            after its report)
 *   once, sysv, early: as wait, with a SIGTERM handler of its own that the
 *            kernel resets at its first delivery (sigaction's SA_RESETHAND;
 *            sysv_signal; SA_RESETHAND set before the first CUDA use): it
 *            says what a query reads before and after that delivery; the
 *            next SIGTERM finds the default action (the report, then 143)
 *   vfork:   as wait, after a vfork child that set SIGTERM to be ignored
 *            and SIGINT to a handler before it exited (its own actions,
 *            not its parent's), and another that died of SIGTERM
 *   vforkonce: as once, after a vfork child that got a SIGTERM (its
 *            handler ran there, the parent's stays unused)
 *   fork:    as wait, then forks (touching 256 MiB first, so that each
 *            fork takes a while) and waits for the child, over and over:
 *            a signal in the middle of a fork (the allocator's locks held)
 *            must not keep the report from being written */
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <signal.h>
#include <stdlib.h>
#include <pthread.h>
#include <sys/wait.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#pragma GCC diagnostic ignored "-Wdeprecated-declarations" /* sigset, sigrelse (query) */

static void *waiter(void *arg)
{
    (void)arg;
    for (;;)
        pause();
    return NULL;
}

static void handled(int sig)
{
    (void)sig;
    static const char msg[] = "handled\n";
    ssize_t w = write(1, msg, sizeof msg - 1);
    (void)w;
    _exit(7);
}

static volatile sig_atomic_t once_runs;

static void once(int sig)
{
    (void)sig;
    once_runs++;
}

/* SIGTERM's action as the program reads it */
static const char *term_action(void)
{
    struct sigaction now;
    memset(&now, 0, sizeof now);
    sigaction(SIGTERM, NULL, &now);
    if (now.sa_handler == SIG_DFL)
        return "SIG_DFL";
    return now.sa_handler == once && (now.sa_flags & SA_RESETHAND) ? "mine, reset at delivery" : "other";
}

static void install_once(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = once;
    sa.sa_flags = SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
}

__attribute__((noinline)) static CUdeviceptr leak_before_term(void)
{
    CUdeviceptr p = 0;
    if (cuMemAlloc(&p, 1 << 20) != CUDA_SUCCESS)
        printf("FAIL alloc\n");
    return p;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "wait";
    setvbuf(stdout, NULL, _IONBF, 0);
    if (strcmp(mode, "keep") != 0) {
        signal(SIGINT, SIG_DFL);
        signal(SIGHUP, SIG_DFL);
    }
    if (strcmp(mode, "early") == 0)
        install_once();
    {
        CUdevice dev;
        CUcontext ctx;
        cuInit(0);
        cuDeviceGet(&dev, 0);
        cuDevicePrimaryCtxRetain(&ctx, dev);
        cuCtxSetCurrent(ctx);
        leak_before_term();
    }
    if (strcmp(mode, "query") == 0) {
        struct sigaction old;
        memset(&old, 0xff, sizeof old);
        sigaction(SIGTERM, NULL, &old);
        printf("sigaction: %s flags %#x\n", old.sa_handler == SIG_DFL ? "SIG_DFL" : "other", (unsigned)old.sa_flags);
        sighandler_t prev = signal(SIGINT, SIG_DFL);
        printf("signal: %s\n", prev == SIG_DFL ? "SIG_DFL" : "other");
        prev = sigset(SIGHUP, SIG_HOLD); /* blocks it, and says what is set */
        sigrelse(SIGHUP);
        printf("sigset hold: %s\n", prev == SIG_DFL ? "SIG_DFL" : "other");
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = handled;
        sigemptyset(&sa.sa_mask);
        memset(&old, 0xff, sizeof old);
        sigaction(SIGTERM, &sa, &old);
        printf("replaced: %s\n", old.sa_handler == SIG_DFL ? "SIG_DFL" : "other");
        sigaction(SIGTERM, NULL, &old);
        printf("now: %s\n", old.sa_handler == handled ? "mine" : "other");
    }
    if (strcmp(mode, "pending") == 0) {
        sigset_t both;
        sigemptyset(&both);
        sigaddset(&both, SIGTERM);
        sigaddset(&both, SIGHUP);
        pthread_sigmask(SIG_BLOCK, &both, NULL);
        kill(getpid(), SIGTERM);
        kill(getpid(), SIGHUP);
        pthread_sigmask(SIG_UNBLOCK, &both, NULL);
        printf("ran on\n");
        return 0;
    }
    if (strcmp(mode, "raise") == 0) {
        raise(SIGTERM);
        printf("ran on\n");
        return 0;
    }
    if (strcmp(mode, "ctor") == 0) {
        if (!dlopen(argv[2], RTLD_NOW))
            printf("dlopen: %s\n", dlerror());
        printf("ran on\n");
        return 0;
    }
    if (strcmp(mode, "fork") == 0) {
        size_t big = (size_t)256 << 20;
        char *mem = malloc(big);
        if (mem)
            memset(mem, 1, big); /* pages for every fork to copy the tables of */
        printf("ready\n");
        for (;;) {
            pid_t pid = fork();
            if (pid == 0)
                _exit(0);
            if (pid > 0)
                waitpid(pid, NULL, 0);
        }
    }
    if (strcmp(mode, "once") == 0 || strcmp(mode, "sysv") == 0 || strcmp(mode, "early") == 0 ||
        strcmp(mode, "vforkonce") == 0) {
        if (strcmp(mode, "once") == 0 || strcmp(mode, "vforkonce") == 0)
            install_once();
        if (strcmp(mode, "vforkonce") == 0) {
            pid_t pid = vfork();
            if (pid == 0) {
                raise(SIGTERM);
                _exit(0);
            }
            if (pid > 0)
                waitpid(pid, NULL, 0);
            once_runs = 0; /* the child's run, in the memory it shared */
        }
        else if (strcmp(mode, "sysv") == 0)
            sysv_signal(SIGTERM, once);
        printf("before: %s\n", term_action());
        printf("ready\n");
        while (!once_runs)
            pause();
        printf("handled once; after: %s\n", term_action());
        for (;;)
            pause();
    }
    if (strcmp(mode, "vfork") == 0) {
        pid_t pid = vfork();
        if (pid == 0) {
            signal(SIGTERM, SIG_IGN);
            signal(SIGINT, handled);
            _exit(0);
        }
        if (pid > 0)
            waitpid(pid, NULL, 0);
        pid = vfork();
        if (pid == 0) {
            raise(SIGTERM);
            _exit(0);
        }
        int st = 0;
        if (pid > 0)
            waitpid(pid, &st, 0);
        printf("parent: SIGTERM %s; child %s\n", term_action(),
               WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM ? "killed by SIGTERM" : "not killed by SIGTERM");
    }
    if (strcmp(mode, "threads") == 0) {
        pthread_t t;
        if (pthread_create(&t, NULL, waiter, NULL) != 0)
            printf("FAIL thread\n");
    }
    printf("ready\n");
    if (strcmp(mode, "sleep") == 0) {
        sleep(30);
        printf("ran on\n");
        return 0;
    }
    for (;;)
        pause();
}
