/*
 * main_exits.c - the main thread ends by pthread_exit while a thread of the
 * program's still runs (tests/lifecycle/main_exits.sh): the process must
 * end when that thread does, as without the guard (glibc's last thread
 * calls exit(0)), with its exit report, frames named.
 *   main_exits SECONDS   the thread's life after main's pthread_exit
 */
#define _GNU_SOURCE
#include "../integration/testlib.h"

#include <pthread.h>
#include <unistd.h>

static CUcontext ctx;
static unsigned life;

NOINLINE static void *worker(void *arg)
{
    (void)arg;
    TL_CHECK(cuCtxSetCurrent(ctx));
    CUdeviceptr p;
    TL_CHECK(cuMemAlloc_v2(&p, 2 << 20)); /* leaked */
    sleep(life);
    return NULL;
}

NOINLINE static void main_alloc(void)
{
    CUdeviceptr p;
    TL_CHECK(cuMemAlloc_v2(&p, 3 << 20)); /* leaked */
}

int main(int argc, char **argv)
{
    life = argc > 1 ? (unsigned)atoi(argv[1]) : 2;
    ctx = tl_setup(0);
    main_alloc();
    pthread_t t;
    if (pthread_create(&t, NULL, worker, NULL) != 0)
        return 1;
    printf("ready %d\n", (int)getpid());
    fflush(stdout);
    pthread_exit(NULL);
}
