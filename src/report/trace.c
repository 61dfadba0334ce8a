/*
 * trace.c - Chrome trace event JSON (the Trace Event Format's object form,
 * {"traceEvents": [...], "displayTimeUnit": "ms"}), which Perfetto and
 * chrome://tracing open:
 *   "M" metadata events: the process's name (the program and its pid);
 *   "C" counter events, one track per device, "in use, device D" (and
 *       "group in use, device D" under GPUMEM_GROUP): args {"bytes": N}
 *       at each time they are known;
 *       at each time they are known: each sample of the timeline (the
 *       most in use during its interval), then the report's own figure;
 *   "i" instant events (process scope): the timeline's marks, named as
 *       its JSON kinds ("refusal", "driver_oom", "dump", "peak", with
 *       ", device D" unless a dump), args {"bytes": N}; and the report
 *       itself (its trigger and dump number, the totals in its args).
 * Times are microseconds of the wall clock, so that traces of several
 * processes line up.
 */
#define _GNU_SOURCE
#include "report/report.h"

#include "base/config.h"
#include "report/timeline.h"

#include <time.h>

static uint64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void counter(struct gmg_buf *b, int pid, const char *what, int dev, uint64_t ts, uint64_t bytes)
{
    gmg_buf_printf(b, ",\n{\"ph\":\"C\",\"pid\":%d,\"tid\":%d,\"ts\":%llu,\"name\":\"%s, device %d\",\"args\":{\"bytes\":%llu}}",
                   pid, pid, (unsigned long long)ts, what, dev, (unsigned long long)bytes);
}

/* The timeline: each sample a point of its device's counters, each mark an
 * instant event. */
static void timeline(const struct gmg_timeline *t, struct gmg_buf *b, int pid)
{
    static const char *const kinds[] = { "refusal", "driver_oom", "dump", "peak" };
    if (!t)
        return;
    for (int d = 0; d < t->ndev; d++)
        for (size_t i = 0; i < t->n; i++) {
            uint64_t ts = (t->start_unix_ms + t->t_ms[i]) * 1000u;
            counter(b, pid, "in use", d, ts, t->bytes[(size_t)d * t->n + i]);
            if (t->group)
                counter(b, pid, "group in use", d, ts, t->group[(size_t)d * t->n + i]);
        }
    for (size_t i = 0; i < t->nev; i++) {
        const struct gmg_tl_event *e = &t->ev[i];
        const char *k = e->kind >= 0 && e->kind < 4 ? kinds[e->kind] : "event";
        gmg_buf_printf(b, ",\n{\"ph\":\"i\",\"s\":\"p\",\"pid\":%d,\"tid\":%d,\"ts\":%llu,\"name\":\"%s", pid, pid,
                       (unsigned long long)((t->start_unix_ms + e->t_ms) * 1000u), k);
        if (e->device >= 0)
            gmg_buf_printf(b, ", device %d", e->device);
        gmg_buf_printf(b, "\",\"args\":{\"bytes\":%llu}}", (unsigned long long)e->bytes);
    }
}

void gmg_report_trace(const struct gmg_report *r, struct gmg_buf *b)
{
    int pid = r->pid;
    uint64_t ts = now_us();
    gmg_buf_printf(b, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n"
                      "{\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":\"process_name\",\"args\":{\"name\":",
                   pid, pid);
    gmg_buf_json_str(b, r->exe);
    gmg_buf_printf(b, "}}");
    timeline(r->timeline, b, pid);
    for (int d = 0; d < r->ndev; d++) {
        counter(b, pid, "in use", d, ts, r->dev[d].used);
        if (r->grouped)
            counter(b, pid, "group in use", d, ts, r->dev[d].group_used);
    }
    gmg_buf_printf(b, ",\n{\"ph\":\"i\",\"s\":\"p\",\"pid\":%d,\"tid\":%d,\"ts\":%llu,\"name\":\"report (%s, dump %u)\","
                      "\"args\":{\"live_bytes\":%llu,\"live_allocations\":%llu,\"refused\":%llu}}",
                   pid, pid, (unsigned long long)ts, gmg_trigger_name(r->trigger), r->dump,
                   (unsigned long long)r->live_bytes, (unsigned long long)r->live_allocs,
                   (unsigned long long)r->refused);
    gmg_buf_printf(b, "\n]}\n");
}
