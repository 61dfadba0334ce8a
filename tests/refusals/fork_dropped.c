/*
 * fork_dropped.c - refusals the report thread could not queue (more new
 * call sites at once than its queue holds) are the parent's: a child forked
 * meanwhile does not count them as its own.
 *
 *   refusal_fork_dropped   (GPUMEM_LIMIT=1M, GPUMEM_STACK_DEPTH=128;
 *                          tests/refusals/slowfirst.c preloaded holds the report
 *                          thread in its first message, 8 s, while 96 threads are
 *                          refused, each at a call site of its own; then a
 *                          child is refused once and says it is done, 0.5 s later)
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include "../integration/testlib.h"

#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#define THREADS 96

/* depth k: a stack, and so a call site, of each thread's own */
NOINLINE static CUresult refused_at(int k)
{
    if (k > 0) {
        CUresult r = refused_at(k - 1);
        __asm__ volatile("" ::: "memory"); /* no tail call: each level stays a frame */
        return r;
    }
    CUdeviceptr p;
    return cuMemAlloc_v2(&p, 2 << 20);
}

static CUcontext ctx;

static void *refuser(void *arg)
{
    TL_CHECK(cuCtxSetCurrent(ctx));
    CUresult r = refused_at((int)(intptr_t)arg);
    return (void *)(intptr_t)(r == CUDA_ERROR_OUT_OF_MEMORY);
}

NOINLINE static CUresult child_refused(void) { CUdeviceptr p; return cuMemAlloc_v2(&p, 4 << 20); }

int main(void)
{
    ctx = tl_setup(0);
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        if (pthread_create(&t[i], NULL, refuser, (void *)(intptr_t)i) != 0)
            return 1;
    int refused = 0;
    for (int i = 0; i < THREADS; i++) {
        void *r;
        pthread_join(t[i], &r);
        refused += (int)(intptr_t)r;
    }
    pid_t pid = fork(); /* the report thread is still inside its first message */
    if (pid == 0) { /* done long before the parent's thread comes out of its first message */
        CUresult r = child_refused();
        usleep(500000);
        dprintf(2, "child: refused %d, done\n", (int)r);
        _exit(0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    printf("fork_dropped: %d of %d refused; child exit %d\n", refused, THREADS, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    return 0;
}
