/*
 * dumpee.c - a guarded process for `gpumemguard dump` (tests/cli/dump.sh):
 *   dumpee hold SECS        hold 3 MiB, print "pid PID", wait
 *   dumpee fork SECS        hold 3 MiB, fork a child that holds 5 MiB and
 *                           prints "child PID", wait
 *   dumpee busy SECS        hold 3 MiB, print "pid PID", and dump through the
 *                           public API in a loop on another thread
 */
#define _GNU_SOURCE
#include "../integration/testlib.h"

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile int stop;

static void *dumper(void *arg)
{
    (void)arg;
    int (*dump)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "gpumemguard_dump");
    while (dump && !stop) {
        dump();
        usleep(2000);
    }
    return NULL;
}

static void wait_secs(int secs)
{
    time_t end = time(NULL) + secs;
    while (time(NULL) < end)
        usleep(10000);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "hold";
    int secs = argc > 2 ? atoi(argv[2]) : 5;
    CUcontext ctx = tl_setup(0);
    CUdeviceptr p;
    TL_CHECK(cuMemAlloc(&p, 3 << 20));
    if (!strcmp(mode, "fork")) {
        fflush(stdout);
        pid_t k = fork();
        if (k == 0) {
            CUdeviceptr q;
            TL_CHECK(cuCtxSetCurrent(ctx));
            cuMemAlloc(&q, 5 << 20);
            printf("child %d\n", (int)getpid());
            fflush(stdout);
            wait_secs(secs);
            _exit(0);
        }
        wait_secs(secs);
        kill(k, SIGTERM);
        waitpid(k, NULL, 0);
        return 0;
    }
    pthread_t t;
    if (!strcmp(mode, "busy"))
        pthread_create(&t, NULL, dumper, NULL);
    if (!strcmp(mode, "blocked")) { /* every signal blocked, the dump signal too */
        sigset_t all;
        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, NULL);
    }
    printf("pid %d\n", (int)getpid());
    fflush(stdout);
    wait_secs(secs);
    stop = 1;
    if (!strcmp(mode, "busy"))
        pthread_join(t, NULL);
    return 0;
}
