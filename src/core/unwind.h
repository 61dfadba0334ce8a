/*
 * unwind.h - the calling thread's native return addresses, fast (core).
 *
 * gmg_unwind gives the return addresses that libunwind's unw_backtrace
 * gives for the same call, at about the price of a frame-pointer walk.
 * Each step applies the rule of the return address it stands at: where the
 * frame's canonical frame address is (the stack pointer or the frame
 * pointer plus a constant), where the caller's return address and frame
 * pointer were saved. The rule is read once from the module's DWARF call
 * frame information (.eh_frame, found through _dl_find_object and the
 * .eh_frame_hdr search table), then kept in a per-thread cache keyed by the
 * return address, forgotten when a library is unloaded (a library loaded
 * where an unloaded one was never inherits its rules). So
 * code built with or without frame pointers is walked alike and exactly.
 *
 * Nothing read is trusted: every stack word read lies between the walk's
 * starting stack pointer and the top of the thread's stack (its bounds are
 * cached per thread), each frame's address must be above the last, and
 * return addresses are only looked up (in the cache, then with
 * _dl_find_object), never dereferenced. Any frame whose
 * rule is not one of these simple forms (a signal frame, a stack realigned
 * through an expression, code without unwind information, a stack the
 * thread does not own such as a sigaltstack or a coroutine's) makes it
 * answer -1: the caller then walks with libunwind, which knows them all.
 *
 * Each thread keeps its last walk with every stack word it read: a walk
 * that starts where that one did, with the same arguments, and finds those
 * words unchanged is given the same frames without walking (unwind.c,
 * struct walkmemo, says why that is exact).
 */
#ifndef GMG_CORE_UNWIND_H
#define GMG_CORE_UNWIND_H

#include <stdint.h>

/* Up to max return addresses of the caller's callers, outermost last, as
 * unw_backtrace called from the same function gives them, less the first
 * ones that lie in [skip_lo, skip_hi) (the guard's own frames): the count,
 * or -1 when this stack must be walked by libunwind. With stop_at_interp
 * the walk ends after the first return address into the Python
 * interpreter (gmg_py_is_interpreter): the Python frames stand for what
 * lies below. *memo_seq: 0, or, when the frames are the thread's last
 * walk given again (struct walkmemo), a number that stays the same exactly
 * as long as that walk is the one kept: two walks of the thread with the
 * same nonzero number gave the same frames. */
int gmg_unwind(void **buf, int max, int stop_at_interp, uintptr_t skip_lo, uintptr_t skip_hi, unsigned *memo_seq);

/* Whether the code at pc has unwind information: an entry of its
 * module's .eh_frame (found through .eh_frame_hdr), whatever its rule. 0
 * for code in no module (a JIT's), in a module without that table, or
 * built without unwind tables: a walk past such a frame could only guess. */
int gmg_unwind_described(uintptr_t pc);

/* The calling thread's own stack [*lo, *hi): 1, or 0 when it cannot be had. */
int gmg_unwind_stack_bounds(uintptr_t *lo, uintptr_t *hi);

/* Every thread forgets the rules it learnt, before its next walk, and
 * libunwind its caches: a library was unloaded (hooks/unload.c). */
void gmg_unwind_forget(void);
/* How many times that happened since start-up (a stack captured after it
 * is another stack, even at the same addresses: core/stacks.c). */
unsigned gmg_unwind_generation(void);

#endif
