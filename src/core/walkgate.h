/*
 * walkgate.h - native stack walks and fork (core layer).
 *
 * libunwind keeps process-wide locks of its own (its global register-state
 * cache, the pool its per-thread trace caches come from) that nothing
 * resets in a forked child: a child forked while another thread was inside
 * unw_backtrace hangs at its first walk. The gate keeps walks and forks
 * apart: a walk is entered and left (a count in the walking thread's own
 * slot, never a shared line), and a fork's prepare handler waits until no
 * other thread is inside one. A walk that would begin while a fork is
 * being prepared is skipped instead (enter says 0): waiting there could
 * stall the fork (walkgate.c says how). The forking thread itself walks
 * freely (a prepare handler of the program may allocate). A walker that
 * does not leave within GMG_WALKGATE_WAIT_MS (stopped, or starved) lets the
 * fork go on; the child then walks no native stacks (enter says 0 there),
 * and says so once. The reporter's symbolizer warm-up (report/reporter.c)
 * enters the gate too: libdw allocates all along, and a sanitizer's
 * allocator keeps locks that a child does not get back either.
 */
#ifndef GMG_CORE_WALKGATE_H
#define GMG_CORE_WALKGATE_H

#define GMG_WALKGATE_WAIT_MS 500

/* Before a native walk: 1 when the caller may walk (then call leave), 0
 * when it must not: another thread is forking, or this is a child forked
 * while a walk was in progress. Never waits. */
int gmg_walkgate_enter(void);
void gmg_walkgate_leave(void);
/* 1 in a child forked while a walk was in progress: enter says 0 for good. */
int gmg_walkgate_off(void);

/* pthread_atfork handlers, from guard.c. */
void gmg_walkgate_prepare(void);
void gmg_walkgate_parent(void);
void gmg_walkgate_child(void);

#endif
