/*
 * lock.h - a small sleeping lock for the allocation path (base layer).
 *
 * Uncontended, a lock is one compare-and-swap and an unlock one release
 * store: no call, no type or elision checks, and one atomic read-modify-
 * write per lock/unlock pair where pthread_mutex_* take two (on the
 * development machine each costs about 7 ns; the guard takes two shard
 * locks per allocation and free, docs/benchmarks.md). Contended, a waiter spins
 * briefly, then counts itself in `waiters` and sleeps on the futex; an
 * unlock that sees a waiter wakes one. A preempted holder is never starved
 * by spinning waiters.
 *
 * The unlock's store and its read of `waiters` may be reordered by the CPU
 * (x86 lets a load pass an earlier store), so a waiter that counted itself
 * just then could miss its wake-up: it therefore sleeps at most
 * GMG_LOCK_NAP_NS at a time and tries again. The lock is correct without
 * any wake-up at all; wake-ups only make it prompt.
 *
 * Not recursive, no owner: for short critical sections that call nothing
 * that may take the same lock. After fork the child re-initialises
 * (GMG_LOCK_INIT): a lock another thread held at the fork is not held there.
 */
#ifndef GMG_BASE_LOCK_H
#define GMG_BASE_LOCK_H

#include <signal.h>

typedef struct {
    int v;        /* 0 free, 1 held */
    int waiters;  /* threads asleep or about to sleep on v */
} gmg_lock_t;
#define GMG_LOCK_INIT { 0, 0 }
#define GMG_LOCK_NAP_NS 200000

/* A thread whose waiting must not look like work (the report thread, whose
 * CPU time a fatal signal's handler watches for progress) points this at a
 * word of its own: while the thread sleeps on a held lock, the word holds
 * its CPU time (ns) as the sleep began; else -1. NULL: not noted. */
extern __thread long long *gmg_lock_wait_note __attribute__((tls_model("initial-exec")));

/* A moment's pause in a spin (x86 pause, arm yield). */
static inline void gmg_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* *note (gmg_lock_wait_note's word) set to the calling thread's CPU time
 * as a wait begins (waiting), to -1 as it ends: for the guard's other waits
 * on another thread's few instructions (base/bias.h). */
void gmg_lock_note_wait(long long *note, int waiting);

void gmg_lock_slow(gmg_lock_t *l);
void gmg_lock_wake(gmg_lock_t *l);

static inline int gmg_trylock(gmg_lock_t *l)
{
    int c = 0;
    return __atomic_compare_exchange_n(&l->v, &c, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

static inline void gmg_lock(gmg_lock_t *l)
{
    if (__builtin_expect(!gmg_trylock(l), 0))
        gmg_lock_slow(l);
}

static inline void gmg_unlock(gmg_lock_t *l)
{
    __atomic_store_n(&l->v, 0, __ATOMIC_RELEASE);
    __atomic_signal_fence(__ATOMIC_SEQ_CST); /* the compiler keeps the read below after the store */
    if (__builtin_expect(__atomic_load_n(&l->waiters, __ATOMIC_RELAXED) != 0, 0))
        gmg_lock_wake(l);
}

/* A spin lock held with every signal blocked, for what both a signal
 * handler and ordinary code change (a signal's recorded action): the
 * handler may take it too, since no thread is ever interrupted holding it.
 * Hold it for a few stores and system calls only. *w: 0 free, 1 held; a
 * forked child sets it to 0 again. Async-signal-safe. */
void gmg_siglock(int *w, sigset_t *old);
void gmg_sigunlock(int *w, const sigset_t *old);

#endif
