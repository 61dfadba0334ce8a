/*
 * test_livetotals.c - a call site's totals split by CPU (core/livetotals.c),
 * read while they move: 256 parts, 10 blocks always live at one call site,
 * one thread (on part 0) makes one more block and hands it to another (on
 * part 255), which frees it, again and again. A reading made meanwhile must
 * be one the call site had: 10 or 11 blocks, never 9 (a free seen on part
 * 255 and not its allocation on part 0) nor 12. Then what was live at the
 * peak sums to the peak: 11 blocks.
 */
#include "base/cpuslot.h"
#include "core/livetotals.h"
#include "core/peak.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int fails;
#define CHECK(c) do { if (!(c)) { printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #c); fails++; } } while (0)

#define ID 7
#define BLOCK 4096u
static int token, stop; /* 0: the maker's turn, 1: the freer's */

static void on_slot(unsigned slot)
{
    gmg_cpu_slot_tl = slot;
    gmg_cpu_slot_age = 255;
}

static void *mover(void *arg)
{
    int freer = arg != NULL;
    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
        if (__atomic_load_n(&token, __ATOMIC_ACQUIRE) != freer) {
            sched_yield(); /* the reader gets the CPU while the other mover moves */
            continue;
        }
        on_slot(freer ? 255 : 0);
        gmg_stack_live_add(ID, 0, 0, BLOCK, freer ? -1 : 1, 1);
        __atomic_store_n(&token, !freer, __ATOMIC_RELEASE);
    }
    return NULL;
}

struct seen { uint64_t bytes, count; int found; };
static void take(uint32_t stack, int device, int family, uint64_t bytes, uint64_t count, void *arg)
{
    struct seen *s = arg;
    (void)device; (void)family;
    if (stack == ID) {
        s->bytes += bytes;
        s->count += count;
        s->found = 1;
    }
}

int main(int argc, char **argv)
{
    (void)argc;
    if (!getenv("GMG_STRIPE_AFTER")) { /* split from the first move: read at start-up */
        setenv("GMG_STRIPE_AFTER", "0", 1);
        execv("/proc/self/exe", argv);
        perror("execv");
        return 1;
    }
    gmg_cpu_slots = 256;
    on_slot(3);
    for (int i = 0; i < 10; i++)
        CHECK(gmg_stack_live_add(ID, 0, 0, BLOCK, 1, 1) == 0);
    CHECK(gmg_live_split() == 1);

    pthread_t maker, freer;
    pthread_create(&maker, NULL, mover, NULL);
    pthread_create(&freer, NULL, mover, (void *)1);
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long reads = 0, wrong = 0, elevens = 0;
    uint64_t worst = 10;
    do {
        struct seen s = { 0, 0, 0 };
        gmg_stack_live_each(take, &s);
        reads++;
        if (!s.found || (s.count != 10 && s.count != 11) || s.bytes != s.count * BLOCK) {
            wrong++;
            worst = s.count;
        }
        elevens += s.count == 11;
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 800000000L);
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    pthread_join(maker, NULL);
    pthread_join(freer, NULL);
    if (wrong)
        printf("FAIL %ld of %ld readings were a count the call site never had (one: %llu)\n", wrong, reads,
               (unsigned long long)worst);
    fails += wrong != 0;
    CHECK(reads > 100);

    /* at rest: 10 or 11, read whole; at the peak: 11 blocks, the peak's bytes */
    struct seen s = { 0, 0, 0 };
    gmg_stack_live_each(take, &s);
    CHECK(s.count == 10 + (uint64_t)__atomic_load_n(&token, __ATOMIC_ACQUIRE));
    uint64_t peak, gen;
    gmg_peak_lock(0);
    gmg_peak_get(0, &peak, &gen);
    struct seen p = { 0, 0, 0 };
    gmg_stack_peak_each(0, gen, take, &p);
    gmg_peak_unlock(0);
    CHECK(peak == 11 * BLOCK);
    CHECK(p.count == 11 && p.bytes == peak);
    if (!fails)
        printf("livetotals: %ld readings while moving, %ld of them 11 blocks; at the peak 11\n", reads, elevens);
    return fails != 0;
}
