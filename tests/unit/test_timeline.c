/*
 * test_timeline.c - the timeline's bound (report/timeline.c): 5000 samples
 * into room for 2048 halve it three times, keep every interval's most (a spike
 * in one sample, a peak set between two), and the interval doubles.
 */
#include "report/timeline.h"

#include <stdio.h>
#include <string.h>

void gmg_timeline_test_sample(uint64_t t);

static uint64_t used, peak;
int gmg_quota_devices_seen(void) { return 1; }
int gmg_quota_pooled(void) { return 0; }
uint64_t gmg_peak_tracked(int dev) { (void)dev; return used; }
uint64_t gmg_peak_run(int dev) { (void)dev; return peak; }
uint64_t gmg_peak_run_ms(int dev) { (void)dev; return 0; } /* unknown: marked at the sample */
uint64_t gmg_quota_charged(int dev) { (void)dev; return used; }
uint64_t gmg_quota_group_peak(int dev) { (void)dev; return 0; }

static int fails;
#define CHECK(c) do { if (!(c)) { printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #c); fails++; } } while (0)

int main(void)
{
    gmg_timeline_start();
    for (uint64_t i = 0; i < 5000; i++) {
        used = i == 1234 ? 999999 : i % 100;
        if (i == 3001)
            peak = 5000000; /* set since the sample before: the most of this interval */
        gmg_timeline_test_sample(i * 10);
    }
    gmg_timeline_event(GMG_TL_DUMP, -1, 7);
    struct gmg_timeline *t = gmg_timeline_copy();
    CHECK(t != NULL);
    if (!t)
        return 1;
    CHECK(t->n <= GMG_TL_SAMPLES && t->n >= GMG_TL_SAMPLES / 4);
    CHECK(t->interval_ms == 80); /* 10 ms, halved three times (at 2048, 3072, 4096) */
    uint64_t max = 0, at5m = 0;
    int ordered = 1;
    for (size_t i = 0; i < t->n; i++) {
        if (t->bytes[i] > max)
            max = t->bytes[i];
        if (t->bytes[i] == 5000000)
            at5m++;
        if (i && t->t_ms[i] <= t->t_ms[i - 1])
            ordered = 0;
    }
    CHECK(ordered);
    CHECK(max == 5000000 && at5m == 1);
    int spike = 0;
    for (size_t i = 0; i < t->n; i++)
        spike |= t->bytes[i] == 999999 && t->t_ms[i] <= 12340 && t->t_ms[i] + 80 > 12340;
    CHECK(spike);
    int pk = 0, dump = 0;
    for (size_t i = 0; i < t->nev; i++) {
        /* the peak's mark at the time of the sample that holds it, halved or not */
        for (size_t k = 0; k < t->n; k++)
            pk |= t->ev[i].kind == GMG_TL_PEAK && t->ev[i].bytes == 5000000 && t->ev[i].t_ms == t->t_ms[k] &&
                  t->bytes[k] == 5000000;
        dump |= t->ev[i].kind == GMG_TL_DUMP && t->ev[i].bytes == 7;
    }
    CHECK(pk && dump);
    struct gmg_buf b = { 0 };
    gmg_timeline_json(t, &b);
    CHECK(!b.failed && strstr(b.p, "\"interval_ms\":80") && strstr(b.p, "\"kind\":\"peak\""));
    gmg_buf_free(&b);
    gmg_timeline_free(t);

    /* Samples in one millisecond are one sample (a dump's, then the
     * tick's): the bigger kept, no time twice. A copy at the run's end in
     * the last sample's millisecond still takes in a peak set since. */
    gmg_timeline_atfork_child(); /* a fresh timeline */
    used = 1;
    peak = 0;
    gmg_timeline_test_sample(100);
    used = 5;
    gmg_timeline_test_sample(100);
    used = 2;
    gmg_timeline_test_sample(100);
    peak = 9; /* set after the last tick, in its millisecond */
    used = 9;
    t = gmg_timeline_copy(); /* now_ms() is 0 or 1 here: at or before 100 */
    CHECK(t != NULL);
    if (t) {
        CHECK(t->n == 1 && t->t_ms[0] == 100 && t->bytes[0] == 9);
        int last_pk = 0;
        for (size_t i = 0; i < t->nev; i++)
            last_pk |= t->ev[i].kind == GMG_TL_PEAK && t->ev[i].bytes == 9 && t->ev[i].t_ms == 100;
        CHECK(last_pk);
        gmg_timeline_free(t);
    }
    if (fails)
        return 1;
    printf("timeline ok\n");
    return 0;
}
