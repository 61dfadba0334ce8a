/* lock.c - see lock.h: the contended paths. */
#define _GNU_SOURCE
#include "base/lock.h"

#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define SPINS 32

__thread long long *gmg_lock_wait_note __attribute__((tls_model("initial-exec")));

void gmg_lock_note_wait(long long *note, int waiting)
{
    struct timespec ts;
    long long v = -1;
    if (waiting && clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0)
        v = (long long)ts.tv_sec * 1000000000 + ts.tv_nsec;
    __atomic_store_n(note, v, __ATOMIC_RELEASE);
}

void gmg_lock_slow(gmg_lock_t *l)
{
    /* a short spin first: critical sections are a few hundred instructions */
    for (int i = 0; i < SPINS; i++) {
        gmg_cpu_relax();
        if (__atomic_load_n(&l->v, __ATOMIC_RELAXED) == 0 && gmg_trylock(l))
            return;
    }
    /* then sleep while it is held; the program's errno is not ours to
     * change (EAGAIN, EINTR, ETIMEDOUT) */
    int saved = errno;
    const struct timespec nap = { 0, GMG_LOCK_NAP_NS };
    long long *note = gmg_lock_wait_note;
    if (note)
        gmg_lock_note_wait(note, 1);
    __atomic_fetch_add(&l->waiters, 1, __ATOMIC_SEQ_CST);
    while (!gmg_trylock(l))
        syscall(SYS_futex, &l->v, FUTEX_WAIT_PRIVATE, 1, &nap, NULL, 0);
    __atomic_fetch_sub(&l->waiters, 1, __ATOMIC_RELAXED);
    if (note)
        gmg_lock_note_wait(note, 0);
    errno = saved;
}

void gmg_lock_wake(gmg_lock_t *l)
{
    int saved = errno;
    syscall(SYS_futex, &l->v, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    errno = saved;
}

void gmg_siglock(int *w, sigset_t *old)
{
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, old);
    while (__atomic_exchange_n(w, 1, __ATOMIC_ACQUIRE))
        sched_yield();
}

void gmg_sigunlock(int *w, const sigset_t *old)
{
    __atomic_store_n(w, 0, __ATOMIC_RELEASE);
    pthread_sigmask(SIG_SETMASK, old, NULL);
}
