/*
 * fork.c - forks while three threads install the program's handler for the
 * dump signal: each child installs its own and takes the signal.
 *
 *   forksig N   N forks
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include "../integration/testlib.h"

#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t plain_seen;
static void plain_handler(int sig) { (void)sig; plain_seen++; }

/* fork while other threads install the program's handler for the dump
 * signal: each child installs its own and takes the signal */
static volatile sig_atomic_t child_handled;
static void child_handler(int sig) { (void)sig; child_handled = 1; }

static void *reinstaller(void *arg)
{
    (void)arg;
    while (!__atomic_load_n(&tl_stop, __ATOMIC_ACQUIRE))
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
    __atomic_store_n(&tl_stop, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    printf("forksig: %d forks, %d children took their signal\n", n, ok);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: forksig N\n");
        return 2;
    }
    tl_setup(0);
    forksig(argc > 1 ? atoi(argv[1]) : 0);
    fflush(stdout);
    return 0;
}
