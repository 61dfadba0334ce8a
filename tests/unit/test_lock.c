/*
 * test_lock.c - base/lock.h: mutual exclusion under contention, sleepers
 * woken, errno kept. Threads add to a plain counter under the lock, some
 * holding it long enough (a sleep) that the others spin out and sleep on
 * the futex; the counter must come out exact, no waiter may be left
 * counted, and errno must be what each thread set before it locked.
 * A thread with gmg_lock_wait_note set shows, while it sleeps on a held
 * lock, the CPU time it had as the sleep began, unchanged however long it
 * naps, and -1 once it has the lock (the report thread's waiting must not
 * look like work to a fatal signal's handler).
 * Prints "lock: N threads x M rounds exact, K slept" and exits 0, or says
 * what was wrong and exits 1.
 */
#define _GNU_SOURCE
#include "base/lock.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#define THREADS 8
#define ROUNDS 20000

static gmg_lock_t lk = GMG_LOCK_INIT;
static long counter;        /* under lk, deliberately not atomic */
static int inside;          /* under lk: must never be seen above 0 */
static int broken, errno_lost;
static long slow_holds;

static void *worker(void *arg)
{
    long id = (long)arg;
    for (int i = 0; i < ROUNDS; i++) {
        errno = 1000 + (int)id;
        gmg_lock(&lk);
        if (inside++)
            __atomic_store_n(&broken, 1, __ATOMIC_RELAXED);
        long c = counter;
        if (i % 2000 == (int)id) { /* hold it long: the others must sleep */
            struct timespec ts = { 0, 300000 };
            nanosleep(&ts, NULL);
            slow_holds++;
        }
        counter = c + 1;
        inside--;
        gmg_unlock(&lk);
        if (errno != 1000 + (int)id)
            __atomic_store_n(&errno_lost, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

static gmg_lock_t held = GMG_LOCK_INIT;
static long long noted = -2;
static int got_it;

static void *noted_waiter(void *arg)
{
    (void)arg;
    gmg_lock_wait_note = &noted;
    gmg_lock(&held);
    __atomic_store_n(&got_it, 1, __ATOMIC_RELEASE);
    gmg_unlock(&held);
    return NULL;
}

/* 0, or says what was wrong */
static int wait_noted(void)
{
    struct timespec ms = { 0, 1000000 };
    gmg_lock(&held);
    pthread_t w;
    pthread_create(&w, NULL, noted_waiter, NULL);
    long long first = -2;
    for (int i = 0; i < 2000 && (first = __atomic_load_n(&noted, __ATOMIC_ACQUIRE)) < 0; i++)
        nanosleep(&ms, NULL);
    int same = 1;
    for (int i = 0; i < 50; i++) { /* 250 naps of 200 us each */
        nanosleep(&ms, NULL);
        same &= __atomic_load_n(&noted, __ATOMIC_ACQUIRE) == first;
    }
    gmg_unlock(&held);
    pthread_join(w, NULL);
    int bad = 0;
    if (first < 0) { printf("lock: a noted thread sleeping on a held lock noted nothing (%lld)\n", first); bad = 1; }
    if (!same) { printf("lock: the noted CPU time moved while the thread slept\n"); bad = 1; }
    if (!got_it || noted != -1) { printf("lock: after the lock, the note is %lld (got it: %d)\n", noted, got_it); bad = 1; }
    return bad;
}

int main(void)
{
    pthread_t t[THREADS];
    for (long i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    int bad = 0;
    if (counter != (long)THREADS * ROUNDS) {
        printf("lock: counter %ld, expected %ld\n", counter, (long)THREADS * ROUNDS);
        bad = 1;
    }
    if (broken) { printf("lock: two threads inside at once\n"); bad = 1; }
    if (errno_lost) { printf("lock: errno changed by lock/unlock\n"); bad = 1; }
    if (lk.v != 0 || lk.waiters != 0) { printf("lock: left v=%d waiters=%d\n", lk.v, lk.waiters); bad = 1; }
    if (!gmg_trylock(&lk) || gmg_trylock(&lk)) { printf("lock: trylock wrong\n"); bad = 1; }
    gmg_unlock(&lk);
    bad |= wait_noted();
    if (!bad)
        printf("lock: %d threads x %d rounds exact, %ld long holds slept through, errno kept; a noted waiter's CPU time "
               "held still while it slept\n", THREADS, ROUNDS, slow_holds);
    return bad;
}
