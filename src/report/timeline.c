/* timeline.c - see timeline.h. */
#include "report/timeline.h"

#include "base/limit_parse.h"
#include "core/peak.h"
#include "core/quota.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FIRST_INTERVAL_MS 10

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t start_unix, start_mono;   /* ms; 0: not started */
static uint64_t interval = FIRST_INTERVAL_MS;
static uint64_t next_due;                  /* ms since start */
static size_t n;
static uint64_t t_ms[GMG_TL_SAMPLES];
static uint64_t *vals[GMG_MAX_DEVICES], *gvals[GMG_MAX_DEVICES]; /* made when first needed */
static int ndev;
static uint64_t last_peak[GMG_MAX_DEVICES], last_gpeak[GMG_MAX_DEVICES];
static int gpeaks_stale; /* last_gpeak is the parent's: a fork child's timeline starts */
static struct gmg_tl_event ev[GMG_TL_EVENTS];
static size_t nev;
static uint64_t ev_dropped;
static struct gmg_tl_event peak_ev[GMG_MAX_DEVICES]; /* the latest peak of each device */
static unsigned char peak_at_sample[GMG_MAX_DEVICES]; /* its time is its sample's (when reached: unknown) */

static uint64_t ms_of(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static uint64_t now_ms(void) { return ms_of(CLOCK_MONOTONIC) - start_mono; }

/* The group's peaks as this process starts (before its first reservation,
 * when it joins), or at a fork child's first sample: a peak the group set
 * before is none of its moments, and its samples show the group's bytes
 * until the group's peak rises again. */
static void group_peaks_before(void)
{
    for (int d = 0; d < GMG_MAX_DEVICES; d++)
        last_gpeak[d] = gmg_quota_group_peak(d);
}

void gmg_timeline_start(void)
{
    pthread_mutex_lock(&mu);
    if (!start_mono) {
        start_unix = ms_of(CLOCK_REALTIME);
        start_mono = ms_of(CLOCK_MONOTONIC);
        if (!start_mono)
            start_mono = 1;
        group_peaks_before();
    }
    pthread_mutex_unlock(&mu);
}

/* Full: each two neighbours become one, the bigger value kept (a peak's
 * mark at its sample's time moves with it to the pair's time; one at the
 * time it was reached stays there). */
static void halve(void)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i += 2, k++) {
        for (int d = 0; d < ndev; d++)
            if (i + 1 < n && peak_ev[d].bytes && peak_at_sample[d] && peak_ev[d].t_ms == t_ms[i + 1])
                peak_ev[d].t_ms = t_ms[i];
        t_ms[k] = t_ms[i];
        for (int d = 0; d < ndev; d++) {
            uint64_t *v = vals[d], *g = gvals[d];
            if (v)
                v[k] = i + 1 < n && v[i + 1] > v[i] ? v[i + 1] : v[i];
            if (g)
                g[k] = i + 1 < n && g[i + 1] > g[i] ? g[i + 1] : g[i];
        }
    }
    n = k;
    interval *= 2;
}

/* One sample, mu held: the bytes in use now, or the peak when one was set
 * since the last sample (the most the interval saw). A sample in the same
 * millisecond as the last (a dump's, then the tick's) is taken into it,
 * the bigger kept: times only grow, and the run's last moment is always
 * seen (its peak too). */
static void sample(uint64_t t)
{
    int merge = n > 0 && t <= t_ms[n - 1];
    int seen = gmg_quota_devices_seen();
    int grouped = gmg_quota_pooled();
    if (!merge && n == GMG_TL_SAMPLES)
        halve();
    for (int d = 0; d < seen && d < GMG_MAX_DEVICES; d++) {
        if (!vals[d] && !(vals[d] = calloc(GMG_TL_SAMPLES, sizeof *vals[d])))
            return; /* out of memory: no sample (tried again at the next) */
        if (grouped && !gvals[d] && !(gvals[d] = calloc(GMG_TL_SAMPLES, sizeof *gvals[d])))
            return;
    }
    if (seen > ndev)
        ndev = seen;
    size_t i = merge ? n - 1 : n;
    if (!merge)
        t_ms[i] = t;
    if (gpeaks_stale) {
        gpeaks_stale = 0;
        group_peaks_before();
    }
    for (int d = 0; d < ndev; d++) {
        uint64_t v = gmg_peak_tracked(d), p = gmg_peak_run(d); /* made allocations: no reservation under way */
        if (p > last_peak[d]) {
            last_peak[d] = p;
            v = p;
            /* marked when it was reached, where that falls after the sample
             * before (so that it comes before a refusal or out-of-memory it
             * led to); else at this sample */
            uint64_t at = gmg_peak_run_ms(d), pt = at > start_mono ? at - start_mono : 0;
            uint64_t before = i > 0 ? t_ms[i - 1] : 0;
            peak_at_sample[d] = !at || pt < before || pt > t_ms[i];
            if (peak_at_sample[d])
                pt = t_ms[i];
            peak_ev[d] = (struct gmg_tl_event){ .t_ms = pt, .kind = GMG_TL_PEAK, .device = d, .bytes = p };
        }
        vals[d][i] = merge && vals[d][i] > v ? vals[d][i] : v;
        if (gvals[d]) {
            uint64_t g = gmg_quota_charged(d), gp = gmg_quota_group_peak(d);
            if (gp > last_gpeak[d]) {
                last_gpeak[d] = gp;
                g = gp > g ? gp : g;
            }
            gvals[d][i] = merge && gvals[d][i] > g ? gvals[d][i] : g;
        }
    }
    if (!merge)
        n++;
}

#ifdef GMG_TIMELINE_TEST_HOOKS /* tests/unit/test_timeline.c: a sample at a given time */
void gmg_timeline_test_sample(uint64_t t)
{
    pthread_mutex_lock(&mu);
    sample(t);
    pthread_mutex_unlock(&mu);
}
#endif

long gmg_timeline_tick(void)
{
    pthread_mutex_lock(&mu);
    if (!start_mono) {
        pthread_mutex_unlock(&mu);
        return FIRST_INTERVAL_MS;
    }
    uint64_t t = now_ms();
    if (t >= next_due) {
        sample(t);
        next_due = t + interval;
    }
    long wait = (long)(next_due - t);
    pthread_mutex_unlock(&mu);
    return wait < 1 ? 1 : wait;
}

void gmg_timeline_event_at(int kind, int device, uint64_t bytes, uint64_t mono_ms)
{
    pthread_mutex_lock(&mu);
    if (start_mono) {
        uint64_t t = mono_ms > start_mono ? mono_ms - start_mono : 0;
        if (nev < GMG_TL_EVENTS) {
            size_t i = nev++; /* in time order: after every mark not later than it */
            while (i > 0 && ev[i - 1].t_ms > t) {
                ev[i] = ev[i - 1];
                i--;
            }
            ev[i] = (struct gmg_tl_event){ .t_ms = t, .kind = kind, .device = device, .bytes = bytes };
        } else {
            ev_dropped++;
        }
    }
    pthread_mutex_unlock(&mu);
}

void gmg_timeline_event(int kind, int device, uint64_t bytes)
{
    gmg_timeline_event_at(kind, device, bytes, ms_of(CLOCK_MONOTONIC));
}

struct gmg_timeline *gmg_timeline_copy(void)
{
    pthread_mutex_lock(&mu);
    uint64_t t = start_mono ? now_ms() : 0;
    if (start_mono) /* the latest moment too: a short run has a sample at its end */
        sample(t);
    struct gmg_timeline *c = calloc(1, sizeof *c);
    size_t per = n ? n : 1;
    int nd = ndev;
    size_t npk = 0;
    for (int d = 0; d < nd; d++)
        npk += peak_ev[d].bytes != 0;
    if (c) {
        c->t_ms = malloc(per * sizeof *c->t_ms);
        c->bytes = malloc((size_t)(nd ? nd : 1) * per * sizeof *c->bytes);
        c->group = gmg_quota_pooled() ? malloc((size_t)(nd ? nd : 1) * per * sizeof *c->group) : NULL;
        c->ev = malloc((nev + npk + 1) * sizeof *c->ev);
        if (!c->t_ms || !c->bytes || !c->ev || (gmg_quota_pooled() && !c->group)) {
            gmg_timeline_free(c);
            c = NULL;
        }
    }
    if (c) {
        c->start_unix_ms = start_unix;
        c->interval_ms = interval;
        c->ndev = nd;
        c->grouped = c->group != NULL;
        c->n = n;
        memcpy(c->t_ms, t_ms, n * sizeof *t_ms);
        for (int d = 0; d < nd; d++) {
            for (size_t i = 0; i < n; i++) {
                c->bytes[(size_t)d * n + i] = vals[d] ? vals[d][i] : 0;
                if (c->group)
                    c->group[(size_t)d * n + i] = gvals[d] ? gvals[d][i] : 0;
            }
        }
        /* in time order: the marks as they came, the peaks put among them */
        size_t k = 0;
        for (size_t i = 0; i < nev; i++)
            c->ev[k++] = ev[i];
        for (int d = 0; d < nd; d++)
            if (peak_ev[d].bytes) {
                size_t j = k++;
                while (j > 0 && c->ev[j - 1].t_ms >= peak_ev[d].t_ms) { /* before marks of its millisecond */
                    c->ev[j] = c->ev[j - 1];
                    j--;
                }
                c->ev[j] = peak_ev[d];
            }
        c->nev = k;
        c->ev_dropped = ev_dropped;
    }
    pthread_mutex_unlock(&mu);
    return c;
}

void gmg_timeline_free(struct gmg_timeline *t)
{
    if (!t)
        return;
    free(t->t_ms);
    free(t->bytes);
    free(t->group);
    free(t->ev);
    free(t);
}

static const char *kind_name(int k)
{
    switch (k) {
    case GMG_TL_REFUSAL: return "refusal";
    case GMG_TL_DRIVER_OOM: return "driver_oom";
    case GMG_TL_DUMP: return "dump";
    default: return "peak";
    }
}

static void series(struct gmg_buf *b, const struct gmg_timeline *t, const uint64_t *v)
{
    for (int d = 0; d < t->ndev; d++) {
        gmg_buf_printf(b, "%s{\"device\":%d,\"samples\":[", d ? "," : "", d);
        for (size_t i = 0; i < t->n; i++)
            gmg_buf_printf(b, "%s[%llu,%llu]", i ? "," : "", (unsigned long long)t->t_ms[i],
                           (unsigned long long)v[(size_t)d * t->n + i]);
        gmg_buf_printf(b, "]}");
    }
}

void gmg_timeline_json(const struct gmg_timeline *t, struct gmg_buf *b)
{
    if (!t) {
        gmg_buf_printf(b, "null");
        return;
    }
    gmg_buf_printf(b, "{\"start_unix_ms\":%llu,\"interval_ms\":%llu,\"devices\":[",
                   (unsigned long long)t->start_unix_ms, (unsigned long long)t->interval_ms);
    series(b, t, t->bytes);
    gmg_buf_printf(b, "],\"group\":");
    if (t->group) {
        gmg_buf_printf(b, "[");
        series(b, t, t->group);
        gmg_buf_printf(b, "]");
    } else {
        gmg_buf_printf(b, "null");
    }
    gmg_buf_printf(b, ",\"events\":[");
    for (size_t i = 0; i < t->nev; i++)
        gmg_buf_printf(b, "%s{\"t_ms\":%llu,\"kind\":\"%s\",\"device\":%d,\"bytes\":%llu}", i ? "," : "",
                       (unsigned long long)t->ev[i].t_ms, kind_name(t->ev[i].kind), t->ev[i].device,
                       (unsigned long long)t->ev[i].bytes);
    gmg_buf_printf(b, "],\"events_dropped\":%llu}", (unsigned long long)t->ev_dropped);
}

void gmg_timeline_atfork_child(void)
{
    pthread_mutex_init(&mu, NULL);
    start_unix = ms_of(CLOCK_REALTIME);
    start_mono = ms_of(CLOCK_MONOTONIC);
    interval = FIRST_INTERVAL_MS;
    next_due = 0;
    n = 0;
    nev = 0;
    ev_dropped = 0;
    ndev = 0;
    memset(last_peak, 0, sizeof last_peak);
    gpeaks_stale = 1; /* read at the child's first sample, not in a fork handler */
    memset(peak_ev, 0, sizeof peak_ev);
    memset(peak_at_sample, 0, sizeof peak_at_sample);
    for (int d = 0; d < GMG_MAX_DEVICES; d++)
        if (vals[d])
            memset(vals[d], 0, GMG_TL_SAMPLES * sizeof *vals[d]);
}
