/*
 * early.c - the dump signal right after cuInit, before any allocation: a
 * dump, not a death.
 *
 *   early_signal
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include "../integration/testlib.h"

#include <signal.h>
#include <unistd.h>

static void early_signal(void)
{
    /* cuInit only (setup made a context, nothing allocated): then the signal */
    kill(getpid(), SIGUSR1);
    usleep(300000);
    printf("survived the dump signal\n");
}

int main(void)
{
    tl_setup(0);
    early_signal();
    fflush(stdout);
    return 0;
}
