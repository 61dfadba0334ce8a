/*
 * walkstack.h - a stack of the guard's own, one per thread, on which
 * libunwind's walk runs (core layer): the walk takes about 16 KiB of stack,
 * and the stack the program allocated from may not have that much left (a
 * coroutine's of 8 KiB, a thread of 16 KiB, a signal handler's alternate
 * stack), nor can its room always be known (a coroutine's stack from
 * malloc).
 */
#ifndef GMG_CORE_WALKSTACK_H
#define GMG_CORE_WALKSTACK_H

#include <stddef.h>
#include <stdint.h>

/* The calling thread's walk stack, made at its first use (256 KiB and a
 * guard page; unmapped when the thread ends), taken: `n` bytes at its top
 * for the caller's own (at most 4 KiB, 16-byte aligned), or NULL where it
 * cannot be had: out of memory, another architecture than x86_64, or in
 * use (a signal handler interrupted a walk on it). Async-signal-safe but
 * for the first use on a thread. */
void *gmg_walkstack_take(size_t n);
/* fn(arg) on the stack taken, below those bytes. */
void gmg_walkstack_run(void (*fn)(void *), void *arg);
void gmg_walkstack_give_back(void);
/* How many bytes lie below sp on the calling thread's walk stack, or -1
 * when sp is not on it (a signal handler interrupted a walk and runs on
 * it). */
long gmg_walkstack_room(uintptr_t sp);

#endif
