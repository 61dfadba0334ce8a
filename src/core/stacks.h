/*
 * stacks.h - call stacks of allocations: capture and the stack depot (core).
 *
 * A stack is captured with libunwind's unw_backtrace (return addresses only,
 * no symbolization), the guard's own leading frames dropped, and interned in
 * a depot so that equal stacks are stored once and named by a small id.
 * Depot entries live until exit; ids are stable across fork.
 */
#ifndef GMG_CORE_STACKS_H
#define GMG_CORE_STACKS_H

#include <stdint.h>

#define GMG_MAX_STACK_DEPTH 256

struct gmg_stack {
    uint32_t id;
    uint32_t depth;
    uint64_t hash;
    struct gmg_stack *next;  /* depot bucket chain */
    uintptr_t frames[];      /* innermost first */
};

/* Frames to keep (GPUMEM_STACK_DEPTH); 0 turns capture off. */
void gmg_stacks_set_depth(int depth);

/* Capture the caller's stack and intern it; 0 when off or on failure. */
uint32_t gmg_stack_capture(void);

/* Intern given frames (tests, and capture itself). */
uint32_t gmg_stack_intern(const uintptr_t *frames, uint32_t depth);

/* The stack with this id, or NULL. */
const struct gmg_stack *gmg_stack_get(uint32_t id);

/* How many distinct stacks the depot holds. */
uint32_t gmg_stack_count(void);

/* Is this address inside the guard's own code? */
int gmg_stack_is_internal(uintptr_t pc);



/* fork child: the depot stays, its locks start afresh. */
void gmg_stacks_atfork_child(void);
#endif
