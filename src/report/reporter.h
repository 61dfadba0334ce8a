/*
 * reporter.h - the reporter thread (report layer). Started with every
 * signal blocked at the first use of the driver, it writes the dumps that
 * the dump signal asks for and explains refusals, so that neither a signal
 * handler nor an allocating thread ever symbolizes, formats or writes one.
 */
#ifndef GMG_REPORT_REPORTER_H
#define GMG_REPORT_REPORTER_H

#include "core/upcalls.h"

#include <sys/types.h>

/* Start the thread (once); 0 on success. */
int gmg_reporter_start(void);

/* A function the thread calls every `seconds` (the metrics file), set by
 * the layer above before the thread starts. */
void gmg_reporter_set_tick(void (*fn)(void), unsigned seconds);
/* Called on the reporter thread after a fatal signal's report, just before
 * the signal ends the process (guard.c: the status page goes). */
void gmg_reporter_set_before_fatal(void (*fn)(void));

/* Ask for a signal dump. Async-signal-safe: an atomic count and a
 * sem_post(3); no descriptor (a program may close and reuse any it did
 * not open). */
void gmg_reporter_wake(void);

/* A fatal signal's report (fatalsig.h), asked for from its handler:
 * async-signal-safe. 1: the thread writes it, then ends the process by
 * `sig`; 0: no thread here to write it; -S: one is under way already, for
 * signal S. */
int gmg_reporter_fatal(int sig);
/* The reporter thread's CPU time in ns (its clock read with clock_gettime:
 * async-signal-safe), -1 when there is no thread: a fatal signal's handler
 * waits while it moves. */
long long gmg_reporter_cpu_ns(void);
/* Is a fatal signal's report under way in this process (its thread will end
 * the process by the signal once it is written)? */
int gmg_reporter_fatal_pending(void);

/* The dump signal came from `gpumemguard dump` (pid), which waits to be
 * told where the dump went (base/dumpask.h). Async-signal-safe. */
void gmg_reporter_dump_for(pid_t pid);

/* A refusal to explain: what was live at the refusal is taken here, on
 * the refusing thread (gmg_report_refusal_capture), then queued for the
 * thread (explained here when it could not start). Returns once the
 * message is written, or after at most 2 s, having written its first line
 * (the whole message follows from the thread; the first line is never
 * written after it). In a process forked without fork handlers (no
 * thread), writes the first line and returns at once; the whole message
 * is written at exit. Under abort, explained at once with a whole report,
 * on the calling thread, which then aborts. */
int gmg_reporter_refused(const struct gmg_refusal *r); /* 0: dropped (too many at once), counted only */
/* A refusal at a call site explained before, on a device whose timeline has
 * no mark of that site: marked by the thread, no message. Does not wait. */
void gmg_reporter_marked(const struct gmg_refusal *r);

/* Exit: explain the refusals still queued and write a dump still asked
 * for, before the exit report. */
void gmg_reporter_flush(void);

/* In a process made without fork handlers (glibc's _Fork(), a raw clone):
 * 1 when its parent's thread was at work at that moment in a build whose
 * allocator is not fork-safe (AddressSanitizer's, ThreadSanitizer's), or,
 * in any build, giving the heap back to the system after its warm-up
 * (malloc_trim: every arena's lock in turn). The allocator's locks that
 * thread held are never let go of here, and the first allocation or free
 * that needs one waits for ever: such a process writes no whole message
 * and no report (guard.c's exit says so instead). Otherwise 0 (the C
 * library's allocator gives the thread an arena of its own). */
int gmg_reporter_orphan_unsafe(void);

/* fork child: the thread did not survive; start another if one ran (or
 * ran in the parent of a process forked without handlers). */
void gmg_reporter_atfork_child(void);

#endif
