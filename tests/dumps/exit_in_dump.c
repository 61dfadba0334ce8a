/*
 * exit_in_dump.c - the program's SIGALRM handler calls exit() while this
 * thread writes a dump to FIFO (which it opens and never reads).
 *
 *   exit_in_dump FIFO
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include "../integration/testlib.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

/* A handler that exits, as many programs' SIGTERM or SIGALRM handlers do. */
static void exit_now(int sig)
{
    (void)sig;
    exit(0);
}

NOINLINE static void leak_at_depth(int n)
{
    CUdeviceptr d;
    if (n > 0) {
        leak_at_depth(n - 1);
        return;
    }
    CHECK(cuMemAlloc_v2(&d, 4096));
}

/* The dump stays in the guard for 5 s: its FIFO takes 4 KiB, is never
 * read, and the report (12 stacks) is longer. The alarm goes off inside
 * it, and the handler's exit() runs the guard's exit report on this
 * thread, which holds the report's lock. */
static void exit_in_dump(const char *fifo)
{
    for (int i = 0; i < 12; i++)
        leak_at_depth(i); /* 12 stacks: a report of more than 4 KiB */
    int rd = open(fifo, O_RDONLY | O_NONBLOCK); /* a reader, so that the guard can open it */
    if (rd < 0 || fcntl(rd, F_SETPIPE_SZ, 4096) < 0)
        exit(3);
    int (*dump)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "gpumemguard_dump");
    if (!dump)
        exit(4);
    signal(SIGALRM, exit_now);
    alarm(1);
    dump();
    printf("the dump returned before the alarm\n");
    exit(5);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: exit_in_dump FIFO\n");
        return 2;
    }
    tl_setup(0);
    exit_in_dump(argv[1]);
    fflush(stdout);
    return 0;
}
