/*
 * test_peak.c - what was live at the peak (core/peak.c), with moves
 * overtaken between their word and their slot, as threads overtake each
 * other: the hook runs another "thread"'s moves at that point, so the
 * order is forced, not left to chance. Then more than 65536 peaks (the
 * word keeps 16 bits of the generation), and a restart.
 */
#include "core/peak.h"

#include <stdio.h>
#include <string.h>

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

int main(void)
{
    uint64_t peak, gen;
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
    if (fails)
        return 1;
    printf("peak ok\n");
    return 0;
}
