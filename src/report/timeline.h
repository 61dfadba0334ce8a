/*
 * timeline.h - each device's bytes in use over the run, sampled by the
 * reporter thread (report layer), with marks: refusals, the driver's out of
 * memory, dumps, the peak. Nothing here runs on the allocation path.
 *
 * Bounded: at most GMG_TL_SAMPLES samples, taken every interval (10 ms at
 * first); when they fill, each two neighbours become one (the bigger
 * value) and the interval doubles, so a six-hour job keeps the same number
 * of samples as a two-second test, each the most in use during its
 * interval (a peak set in it is that most).
 */
#ifndef GMG_REPORT_TIMELINE_H
#define GMG_REPORT_TIMELINE_H

#include "base/buf.h"

#include <stdint.h>

#define GMG_TL_SAMPLES 2048
#define GMG_TL_EVENTS 1024

enum gmg_tl_kind { GMG_TL_REFUSAL, GMG_TL_DRIVER_OOM, GMG_TL_DUMP, GMG_TL_PEAK };

struct gmg_tl_event {
    uint64_t t_ms;
    int kind;
    int device;          /* -1: every device (a dump) */
    uint64_t bytes;
};

/* A copy for one report. */
struct gmg_timeline {
    uint64_t start_unix_ms, interval_ms;
    int ndev, grouped;
    size_t n;                     /* samples per device */
    uint64_t *t_ms;               /* [n] */
    uint64_t *bytes;              /* [ndev][n] */
    uint64_t *group;              /* [ndev][n] when grouped */
    struct gmg_tl_event *ev;
    size_t nev;
    uint64_t ev_dropped;
};

/* When the guard started (first call; the reporter thread calls it). */
void gmg_timeline_start(void);
/* The reporter thread: take a sample if one is due; the milliseconds until
 * the next is. */
long gmg_timeline_tick(void);
void gmg_timeline_event(int kind, int device, uint64_t bytes);
/* The same, of a moment before now (CLOCK_MONOTONIC, ms): a refusal is
 * marked when it happened, not when its message was written; the marks
 * stay in time order. */
void gmg_timeline_event_at(int kind, int device, uint64_t bytes, uint64_t mono_ms);

struct gmg_timeline *gmg_timeline_copy(void);   /* NULL when out of memory */
void gmg_timeline_free(struct gmg_timeline *t);
void gmg_timeline_json(const struct gmg_timeline *t, struct gmg_buf *b);

void gmg_timeline_atfork_child(void);

#endif
