/*
 * test_peak.c - what was live at the peak (core/peak.c), with moves
 * overtaken between their word and their slot, as threads overtake each
 * other: the hook runs another "thread"'s moves at that point, so the
 * order is forced, not left to chance. Then more than 65536 peaks (the
 * word keeps 15 bits of the generation), a restart, and a reader that
 * comes while a peak's move is half done (its thread held between its word
 * and its slot): it waits for the move, up to its bound. With "bias": the
 * same with the words moved by their owner thread (base/bias.h), and then
 * threads that take turns at a word, in bursts long enough for it to be
 * given back to each, while another moves it now and then: every move
 * kept (each burst and each intruder's move gives back what it took), the
 * make-up at the peak summing to it, and the word given back. And a thread
 * given the word that never moves it again (it ends): another thread that
 * then moves the word alone long enough takes it from it.
 */
#include "core/peak.h"
#include "base/bias.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

extern void (*gmg_peak_test_hook)(void);

static int fails;
#define CHECK(c) do { if (!(c)) { printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #c); fails++; } } while (0)

static struct gmg_peak_slot S, T, U;

static uint64_t at(struct gmg_peak_slot *s, uint64_t gen)
{
    uint64_t b, c;
    gmg_peak_slot_at(s, gen, &b, &c);
    return b;
}

/* thread B, run while thread A's move of +60 on S is between its word and its slot */
static void thread_b(void)
{
    gmg_peak_test_hook = NULL;
    gmg_peak_slot_move(&T, 0, 150, 1); /* a new peak: 230 */
    gmg_peak_slot_move(&S, 0, 20, -1); /* after it: S's first op since */
}

static double ms_since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) * 1e3 + (double)(t.tv_nsec - t0->tv_nsec) / 1e6;
}

/* A peak's move on device 1 held between its word and its slot (its
 * thread preempted there) while a reader reads the peak: until the
 * reader's first walk is done (gap_us 0; the mover spins, so that it goes
 * on at once), or for gap_us. `moved` is set once the move is whole; a walk
 * that began after it must sum to the peak. On a loaded machine the mover
 * may still lose its CPU past the reading's bound; the test then tries
 * again (`saw_moved` says whether any walk came after the move). */
static struct gmg_peak_slot V, W;
static __thread int is_mover;
static int in_gap, walked, moved, saw_moved;
static long gap_us;

static void hold(void)
{
    if (!is_mover)
        return;
    __atomic_store_n(&in_gap, 1, __ATOMIC_RELEASE);
    if (gap_us) {
        usleep((useconds_t)gap_us);
        return;
    }
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (!__atomic_load_n(&walked, __ATOMIC_ACQUIRE) && ms_since(&t0) < 5000)
        ;
}

static void *mover(void *arg)
{
    is_mover = 1;
    gmg_peak_slot_move(&V, 1, *(uint64_t *)arg, 1);
    __atomic_store_n(&moved, 1, __ATOMIC_RELEASE);
    return NULL;
}

static uint64_t walk_vw(uint64_t gen, void *arg)
{
    ++*(int *)arg;
    if (__atomic_load_n(&moved, __ATOMIC_ACQUIRE))
        saw_moved = 1;
    uint64_t sum = at(&V, gen) + at(&W, gen);
    __atomic_store_n(&walked, 1, __ATOMIC_RELEASE);
    return sum;
}

/* The reading with a move held for `hold_us`: its result, the sum of its
 * last walk, the peak it read, how many walks and how long. */
static int read_during(long hold_us, uint64_t bytes, uint64_t *sum, uint64_t *peak, int *walks, double *ms)
{
    pthread_t t;
    uint64_t gen;
    gap_us = hold_us;
    in_gap = 0;
    walked = 0;
    moved = 0;
    saw_moved = 0;
    gmg_peak_test_hook = hold;
    pthread_create(&t, NULL, mover, &bytes);
    while (!__atomic_load_n(&in_gap, __ATOMIC_ACQUIRE))
        usleep(100);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    *walks = 0;
    gmg_peak_lock(1);
    int r = gmg_peak_read_settled(1, peak, &gen, walk_vw, walks);
    *sum = at(&V, gen) + at(&W, gen);
    gmg_peak_unlock(1);
    *ms = ms_since(&t0);
    pthread_join(t, NULL);
    gmg_peak_test_hook = NULL;
    return r;
}

static void settled(void)
{
    uint64_t sum, peak;
    int walks;
    double ms;
    gmg_peak_slot_move(&W, 1, 100, 1);
    /* held until the reader's first walk: the reading walks again, and sums
     * to the peak with the move in it (each try a new, higher peak) */
    uint64_t bytes = 0;
    int r = 0, tries = 0;
    do {
        if (bytes)
            gmg_peak_slot_move(&V, 1, bytes, -1);
        bytes = 500 + (uint64_t)tries;
        r = read_during(0, bytes, &sum, &peak, &walks, &ms);
    } while (!saw_moved && ++tries < 20);
    CHECK(saw_moved && r == 1 && peak == 100 + bytes && sum == peak && walks > 1);
    if (!(saw_moved && r == 1 && sum == peak && walks > 1))
        printf("     held for the first walk (%d tries): a walk after the move %d, settled %d, peak %llu, sum %llu, "
               "%d walks\n",
               tries + 1, saw_moved, r, (unsigned long long)peak, (unsigned long long)sum, walks);
    /* held 300 ms, past the bound: the reading gives up (about 20 ms), unsettled */
    gmg_peak_slot_move(&V, 1, bytes, -1);
    r = read_during(300000, 700, &sum, &peak, &walks, &ms);
    CHECK(r == 0 && peak == 800 && sum == 100 && ms >= 19 && ms < 250);
    if (!(r == 0 && ms < 250))
        printf("     held 300 ms: settled %d after %.1f ms, peak %llu, sum %llu\n", r, ms, (unsigned long long)peak,
               (unsigned long long)sum);
    /* nothing half done: one walk */
    gmg_peak_lock(1);
    uint64_t gen;
    walks = 0;
    r = gmg_peak_read_settled(1, &peak, &gen, walk_vw, &walks);
    gmg_peak_unlock(1);
    CHECK(r == 1 && walks == 1 && peak == 800);
}

/* Threads taking turns at device 2's word (see the top). */
#define TURN_THREADS 3
#define TURNS 30
static struct gmg_peak_slot turn_slot[TURN_THREADS + 1];
static int turn, turns_done;
extern unsigned gmg_peak_test_regains(int dev);

static void *turn_taker(void *arg)
{
    int me = (int)(long)arg;
    unsigned seed = 777u + (unsigned)me;
    uint64_t sizes[256];
    for (int t = 0; t < TURNS; t++) {
        while (__atomic_load_n(&turn, __ATOMIC_ACQUIRE) % TURN_THREADS != me)
            sched_yield();
        int bursts = 20 + (int)(rand_r(&seed) % 40);
        for (int b = 0; b < bursts; b++) { /* up to 256 live, then all given back */
            int n = 1 + (int)(rand_r(&seed) % 256);
            for (int i = 0; i < n; i++)
                gmg_peak_slot_move(&turn_slot[me], 2, sizes[i] = 1 + rand_r(&seed) % 100000, 1);
            for (int i = n - 1; i >= 0; i--)
                gmg_peak_slot_move(&turn_slot[me], 2, sizes[i], -1);
        }
        __atomic_add_fetch(&turn, 1, __ATOMIC_RELEASE);
    }
    return NULL;
}

static void *intruder(void *arg)
{
    (void)arg;
    unsigned seed = 4242;
    while (!__atomic_load_n(&turns_done, __ATOMIC_ACQUIRE)) {
        for (volatile int i = 0, n = (int)(rand_r(&seed) % 2000); i < n; i++)
            ;
        uint64_t bytes = 1 + rand_r(&seed) % 1000;
        gmg_peak_slot_move(&turn_slot[TURN_THREADS], 2, bytes, 1);
        gmg_peak_slot_move(&turn_slot[TURN_THREADS], 2, bytes, -1);
    }
    return NULL;
}

static uint64_t walk_turns(uint64_t gen, void *arg)
{
    (void)arg;
    uint64_t sum = 0;
    for (int i = 0; i <= TURN_THREADS; i++)
        sum += at(&turn_slot[i], gen);
    return sum;
}

static void taking_turns(void)
{
    pthread_t t[TURN_THREADS], x;
    for (int i = 0; i < TURN_THREADS; i++)
        pthread_create(&t[i], NULL, turn_taker, (void *)(long)i);
    pthread_create(&x, NULL, intruder, NULL);
    for (int i = 0; i < TURN_THREADS; i++)
        pthread_join(t[i], NULL);
    __atomic_store_n(&turns_done, 1, __ATOMIC_RELEASE);
    pthread_join(x, NULL);
    CHECK(gmg_peak_tracked(2) == 0);
    uint64_t peak, gen;
    gmg_peak_lock(2);
    int settled = gmg_peak_read_settled(2, &peak, &gen, walk_turns, NULL);
    gmg_peak_unlock(2);
    CHECK(settled && peak > 0);
    unsigned regains = gmg_peak_test_regains(2);
    CHECK(regains >= 2);
    if (gmg_peak_tracked(2) != 0 || !settled || regains < 2)
        printf("     taking turns: tracked %llu (want 0), peak %llu settled %d, %u regains\n",
               (unsigned long long)gmg_peak_tracked(2), (unsigned long long)peak, settled, regains);
}

/* A thread that is given the word (device 3) on its last move, and ends. */
static struct gmg_peak_slot idle_slot;
static void *taken_then_idle(void *arg)
{
    (void)arg;
    unsigned before = gmg_peak_test_regains(3);
    for (int i = 0; i < 1000000 && gmg_peak_test_regains(3) == before; i++) {
        gmg_peak_slot_move(&idle_slot, 3, 64, 1);
        gmg_peak_slot_move(&idle_slot, 3, 64, -1);
    }
    return NULL;
}

static void owner_gone_idle(void)
{
    pthread_t t;
    gmg_peak_slot_move(&idle_slot, 3, 8, 1); /* this thread owns the word */
    pthread_create(&t, NULL, taken_then_idle, NULL); /* revokes it, moves alone until given it */
    pthread_join(t, NULL);
    unsigned given = gmg_peak_test_regains(3);
    CHECK(given == 1);
    for (int i = 0; i < 4096; i++) { /* alone: past the next regain's 2,048 */
        gmg_peak_slot_move(&idle_slot, 3, 64, 1);
        gmg_peak_slot_move(&idle_slot, 3, 64, -1);
    }
    CHECK(gmg_peak_test_regains(3) == 2);
    CHECK(gmg_peak_tracked(3) == 8);
    if (gmg_peak_test_regains(3) != 2)
        printf("     an owner gone idle: regains %u after its thread ended, %u after this one's moves (want 1, 2)\n",
               given, gmg_peak_test_regains(3));
}

int main(int argc, char **argv)
{
    uint64_t peak, gen;
    if (argc > 1 && strcmp(argv[1], "bias") == 0)
        gmg_bias_start(); /* the words moved by their owner, this thread (base/bias.h) */
    gmg_peak_slot_move(&S, 0, 20, 1);
    gmg_peak_slot_move(&U, 0, 200, 1); /* peak 220 */
    gmg_peak_slot_move(&U, 0, 200, -1);
    gmg_peak_test_hook = thread_b;
    gmg_peak_slot_move(&S, 0, 60, 1);  /* before the peak in the word's order, applied after B's */
    gmg_peak_lock(0);
    gmg_peak_get(0, &peak, &gen);
    CHECK(peak == 230);
    CHECK(at(&S, gen) == 80);  /* 20 + A's 60, applied late, still part of the peak */
    CHECK(at(&T, gen) == 150);
    CHECK(at(&U, gen) == 0);
    CHECK(at(&S, gen) + at(&T, gen) + at(&U, gen) == peak);
    gmg_peak_unlock(0);

    /* a free overtaken by the next peak's move */
    gmg_peak_slot_move(&T, 0, 150, -1); /* total 60 */
    gmg_peak_slot_move(&U, 0, 300, 1);  /* peak 360: S 60, U 300 */
    gmg_peak_slot_move(&U, 0, 300, -1);
    gmg_peak_lock(0);
    gmg_peak_get(0, &peak, &gen);
    CHECK(peak == 360 && at(&S, gen) == 60 && at(&U, gen) == 300 && at(&T, gen) == 0);
    gmg_peak_unlock(0);

    /* more peaks than 16 bits count: each widened right */
    for (int i = 0; i < 70000; i++)
        gmg_peak_slot_move(&U, 0, 361 + (uint64_t)i, 1), gmg_peak_slot_move(&U, 0, 361 + (uint64_t)i, -1);
    gmg_peak_lock(0);
    gmg_peak_get(0, &peak, &gen);
    CHECK(peak == 60 + 361 + 69999);
    CHECK(at(&U, gen) == 361 + 69999 && at(&S, gen) == 60);
    /* a restart: the peak is what is tracked now, S's 60 */
    gmg_peak_restart(0);
    gmg_peak_get(0, &peak, &gen);
    CHECK(peak == 60 && at(&S, gen) == 60 && at(&U, gen) == 0);
    gmg_peak_unlock(0);
    gmg_peak_slot_move(&T, 0, 10, 1); /* 70: the new window's peak */
    gmg_peak_lock(0);
    gmg_peak_get(0, &peak, &gen);
    CHECK(peak == 70 && at(&S, gen) == 60 && at(&T, gen) == 10);
    gmg_peak_unlock(0);
    CHECK(gmg_peak_tracked(0) == 70);
    settled();
    if (argc > 1 && strcmp(argv[1], "bias") == 0) {
        taking_turns();
        owner_gone_idle();
    }
    if (fails)
        return 1;
    printf("peak ok\n");
    return 0;
}
