/*
 * atpeak.h - what was live at each device's peak, for reports (report
 * layer): read from the live totals (core/peak.h says how they keep it),
 * grouped as the live list is, biggest first.
 *
 * The run's peak is kept across dumps: a signal or API dump shows the peak
 * since the previous one (a window) and then starts the next window; the
 * biggest window so far is kept here, so that every report also shows the
 * run's.
 */
#ifndef GMG_REPORT_ATPEAK_H
#define GMG_REPORT_ATPEAK_H

#include "report/report.h"

/* Fill r->at_peak (the run's) and, with `window` (signal and API dumps),
 * r->since_peak (since the previous such dump), starting the next window. */
void gmg_at_peak_build(struct gmg_report *r, int window);
void gmg_at_peak_free(struct gmg_report *r);

/* The run's peak of one device, for refusal messages: its k biggest groups
 * into top[] (no allocation; O(stacks)); the rest is the peak's bytes less
 * theirs. 0, or -1 when nothing was ever tracked. */
struct gmg_at_peak_top {
    uint64_t bytes;          /* the peak */
    size_t shown;            /* groups in top[] */
};
int gmg_at_peak_top(int dev, struct gmg_group *top, size_t k, struct gmg_at_peak_top *out);

/* The public API's peak window (a test's): it starts, on devices [0, ndev),
 * the next window as a dump does (the run's peak is kept), and the API's,
 * which the dumps made in it do not end. */
void gmg_at_peak_new_window(int ndev);
/* What was live at the API window's peak of dev, biggest first, into *out
 * (the caller frees out->groups). 0, or -1 for a bad device. */
int gmg_at_peak_window(int dev, struct gmg_at_peak *out);
/* The API window's peak of dev (tracked bytes, as reports count them) and
 * its base: what was tracked when it began. No lock: a reading made while
 * another thread resets the window may give the old window's. */
void gmg_at_peak_window_bytes(int dev, uint64_t *peak, uint64_t *base);

/* fork child: nothing kept. */
void gmg_at_peak_atfork_child(void);

#endif
