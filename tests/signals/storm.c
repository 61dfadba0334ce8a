/*
 * storm.c - dump signals while three threads re-install the program's
 * SIGUSR1 handler (plain and SA_SIGINFO, at random): every signal must reach
 * the handler installed at that moment, called in its own form.
 * tests/signals/storm.sh runs it; scripts/stress.sh runs it for longer
 * (tests/stress/stress.c).
 *
 *   signal_storm sigstorm N   N signals
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include "../integration/testlib.h"

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

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
    while (!__atomic_load_n(&tl_stop, __ATOMIC_ACQUIRE)) {
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
    __atomic_store_n(&tl_stop, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    printf("sigstorm: %d signals, handlers ran %d, bad %d\n", n, (int)(plain_seen + info_seen), (int)info_bad);
}

static int signal_storm_mode(int argc, char **argv)
{
    if (strcmp(argv[1], "sigstorm"))
        return 0;
    sigstorm(argc > 2 ? atoi(argv[2]) : 0);
    return 1;
}

#ifndef TL_NO_MAIN
int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: signal_storm sigstorm N\n");
        return 2;
    }
    tl_setup(0);
    if (!signal_storm_mode(argc, argv)) {
        fprintf(stderr, "unknown mode %s\n", argv[1]);
        return 2;
    }
    fflush(stdout);
    return 0;
}
#endif
