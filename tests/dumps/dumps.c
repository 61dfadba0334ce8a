/*
 * dumps.c - a program with one leak (leak_before_exit: 197520 bytes) that
 * asks for reports: the dump signal, gpumemguard_dump() from several threads.
 * The tests of dumps, report paths, CI mode and metrics read what it leaves.
 *
 *   dumps dump_exit        a dump signalled just before exit
 *   dumps dumps N          N signal dumps, one at a time, then exit
 *   dumps apidumps N       4 threads x N gpumemguard_dump() at once
 *   dumps stale_tmp PATH   stale temporaries for this pid exist beside PATH
 *   dumps hold             the leak, then wait for the end of standard input
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include "../integration/testlib.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

static void dump_exit(void)
{
    leak_before_exit();
    kill(getpid(), SIGUSR1); /* and exit at once */
}

static void dumps(int n)
{
    leak_before_exit();
    for (int i = 0; i < n; i++) {
        kill(getpid(), SIGUSR1);
        usleep(300000);
    }
}

static void *api_dumper(void *arg)
{
    int n = *(int *)arg;
    int (*dump)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "gpumemguard_dump");
    for (int i = 0; i < n && dump; i++)
        dump();
    return NULL;
}

static void apidumps(int n)
{
    leak_before_exit();
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, api_dumper, &n);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
}

static void stale_tmp(const char *path)
{
    char p[4200];
    int pid = (int)getpid();
    const char *slash = strrchr(path, '/');
    int dirlen = slash ? (int)(slash - path + 1) : 0;
    snprintf(p, sizeof p, "%.*s.gpumem-report.%d.tmp", dirlen, path, pid);
    close(open(p, O_WRONLY | O_CREAT, 0600));
    for (int i = 0; i < 4; i++) {
        snprintf(p, sizeof p, "%.*s.gpumem-report.%d.%d.tmp", dirlen, path, pid, i);
        close(open(p, O_WRONLY | O_CREAT, 0600));
    }
    leak_before_exit();
}

static void hold(void)
{
    leak_before_exit();
    char b[64];
    while (read(0, b, sizeof b) > 0)
        ;
}

static int dumps_mode(int argc, char **argv)
{
    const char *m = argv[1];
    int n = argc > 2 ? atoi(argv[2]) : 0;
    if (!strcmp(m, "dump_exit")) dump_exit();
    else if (!strcmp(m, "dumps")) dumps(n);
    else if (!strcmp(m, "apidumps")) apidumps(n);
    else if (!strcmp(m, "stale_tmp") && argc > 2) stale_tmp(argv[2]);
    else if (!strcmp(m, "hold")) hold();
    else return 0;
    return 1;
}

#ifndef TL_NO_MAIN
int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: dumps MODE [ARG]\n");
        return 2;
    }
    tl_setup(0);
    if (!dumps_mode(argc, argv)) {
        fprintf(stderr, "unknown mode %s\n", argv[1]);
        return 2;
    }
    fflush(stdout);
    return 0;
}
#endif
