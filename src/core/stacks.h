/*
 * stacks.h - call stacks of allocations: capture and the stack depot (core).
 *
 * A stack is captured by the guard's own walker, or libunwind's where that
 * gives it up (core/unwind.h; return addresses only, no symbolization), the
 * guard's own leading frames dropped, and interned in
 * a depot so that equal stacks are stored once and named by a small id.
 * Depot entries live until exit; ids are stable across fork.
 */
#ifndef GMG_CORE_STACKS_H
#define GMG_CORE_STACKS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/buildid.h"

#define GMG_MAX_STACK_DEPTH 256

/* A loaded object, as it was when a stack first pointed into it: so that a
 * frame of a library unloaded later keeps its name, and is never blamed on
 * one mapped at the same address afterwards. */
struct gmg_module {
    const void *map;         /* its link_map then                 */
    uintptr_t start, end;    /* where it was mapped               */
    uintptr_t bias;          /* its load bias (l_addr)            */
    const char *path;        /* its file ("" for the main program) */
    uint8_t build_id[GMG_BUILD_ID_MAX]; /* its build ID then (base/buildid.h) */
    uint8_t build_id_len;    /* 0: it had none                    */
};

/* Is the build ID bid (n bytes, 0: none read) the module's? */
static inline int gmg_module_build_is(const struct gmg_module *m, const uint8_t *bid, size_t n)
{
    return n == m->build_id_len && memcmp(bid, m->build_id, n) == 0;
}

struct gmg_stack {
    uint32_t id;
    uint32_t depth;
    uint64_t hash;
    struct gmg_stack *next;  /* depot bucket chain */
    uintptr_t frames[];      /* innermost first; then `depth` uint16_t
                                module numbers (gmg_stack_module)  */
};

/* The module a frame pointed into when its stack was first seen; NULL if
 * unknown. Modules are recorded once per new stack, never per allocation. */
const struct gmg_module *gmg_stack_module(const struct gmg_stack *s, uint32_t i);

/* Frames to keep (GPUMEM_STACK_DEPTH); 0 turns capture off. */
void gmg_stacks_set_depth(int depth);

/* Capture the caller's stack and intern it; 0 when off or on failure.
 * With capture off it costs one load (gmg_stack_depth: the frames kept,
 * 0 when off; set by gmg_stacks_set_depth, read without a lock). */
extern int gmg_stack_depth;
uint32_t gmg_stack_capture_walk(void);
static inline uint32_t gmg_stack_capture(void)
{
    return __atomic_load_n(&gmg_stack_depth, __ATOMIC_RELAXED) ? gmg_stack_capture_walk() : 0;
}

/* Intern given frames (tests, and capture itself). */
uint32_t gmg_stack_intern(const uintptr_t *frames, uint32_t depth);
/* Stacks not kept (out of memory, or the depot full) since start-up: their
 * allocations were given stack 0. */
uint64_t gmg_stack_lost(void);

/* The stack with this id, or NULL. */
const struct gmg_stack *gmg_stack_get(uint32_t id);

/* How many distinct stacks the depot holds. */
uint32_t gmg_stack_count(void);

/* Is this address inside the guard's own code? */
int gmg_stack_is_internal(uintptr_t pc);



/* fork child: the depot stays, its locks start afresh. */
void gmg_stacks_atfork_child(void);
#endif
