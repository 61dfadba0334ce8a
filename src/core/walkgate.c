/*
 * walkgate.c - see walkgate.h.
 *
 * Each thread counts the walks it is inside on one of SLOTS counters, its
 * own cache line (threads get slots in turn; beyond SLOTS threads, some
 * share one). Entering is an atomic add on that line followed by a read of
 * `forking`; a fork's prepare handler adds to `forking` and then reads every
 * slot. Both are sequentially consistent, so either the walker sees the
 * fork coming (and backs out) or the forker sees the walker (and waits for
 * it to leave): never neither.
 *
 * A walker that sees a fork coming does not wait for it: it may hold the
 * program's own locks, which a prepare handler of the program's that runs
 * after ours may need (a fork-safe allocator's pattern), so waiting could
 * stall the fork. It walks no native frames that once (its Python frames
 * are still taken). Only the prepare handler waits, and only so long.
 *
 * Several threads may fork at once: glibc runs the handlers of one fork
 * while another is between its own, so `forking` counts forks in progress,
 * and what a prepare found (`stuck`) is the forking thread's own.
 */
#define _GNU_SOURCE
#include "core/walkgate.h"

#include "base/log.h"

#include <stdint.h>
#include <time.h>

#define SLOTS 128

static struct slot {
    int n;                       /* walks in progress of the threads on this slot */
} __attribute__((aligned(64))) slots[SLOTS];

static unsigned next_slot;
static int forking;              /* forks between their prepare and parent/child handlers */
static int child_off;            /* forked while a walk was in progress: libunwind may hold a lock */

static __thread struct {
    int slot;                    /* 1 + the thread's slot; 0 until its first walk */
    int depth;                   /* walks this thread is inside (a signal handler may nest one) */
    int forking;                 /* forks of this thread in progress */
    int stuck;                   /* its prepare gave up waiting for a walker */
} tl __attribute__((tls_model("initial-exec")));

static struct slot *my_slot(void)
{
    if (__builtin_expect(!tl.slot, 0))
        tl.slot = 1 + (int)(__atomic_fetch_add(&next_slot, 1, __ATOMIC_RELAXED) % SLOTS);
    return &slots[tl.slot - 1];
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

int gmg_walkgate_enter(void)
{
    if (__atomic_load_n(&child_off, __ATOMIC_RELAXED))
        return 0;
    struct slot *s = my_slot();
    /* depth first, the slot after (and the reverse on the way out): a fork
     * from a signal handler in between finds no walk of its own thread in
     * the slot that it does not count in depth */
    tl.depth++;
    __atomic_add_fetch(&s->n, 1, __ATOMIC_SEQ_CST);
    if (__builtin_expect(__atomic_load_n(&forking, __ATOMIC_SEQ_CST) != 0, 0) && !tl.forking) {
        __atomic_sub_fetch(&s->n, 1, __ATOMIC_RELEASE);
        tl.depth--;
        return 0;
    }
    return 1;
}

int gmg_walkgate_off(void) { return __atomic_load_n(&child_off, __ATOMIC_RELAXED); }

void gmg_walkgate_leave(void)
{
    __atomic_sub_fetch(&slots[tl.slot - 1].n, 1, __ATOMIC_RELEASE);
    tl.depth--;
}

void gmg_walkgate_prepare(void)
{
    tl.forking++;
    __atomic_add_fetch(&forking, 1, __ATOMIC_SEQ_CST);
    /* the forking thread's own walks (a fork from a signal handler that
     * interrupted one) continue in the child as they would have here */
    int own = tl.slot ? tl.slot - 1 : -1;
    uint64_t deadline = now_ms() + GMG_WALKGATE_WAIT_MS;
    int late = 0;
    for (int i = 0; i < SLOTS && !late; i++) {
        int mine = i == own ? tl.depth : 0;
        while (__atomic_load_n(&slots[i].n, __ATOMIC_SEQ_CST) > mine) {
            if (now_ms() >= deadline) {
                late = 1;
                break;
            }
            struct timespec ts = { 0, 50000 }; /* 50 us */
            nanosleep(&ts, NULL);
        }
    }
    tl.stuck = late;
}

void gmg_walkgate_parent(void)
{
    tl.stuck = 0; /* the parent's walker goes on and lets go of its locks */
    tl.forking--;
    __atomic_sub_fetch(&forking, 1, __ATOMIC_RELEASE);
}

void gmg_walkgate_child(void)
{
    /* only this thread is left: only its own walks are in progress, and
     * only its own fork */
    for (int i = 0; i < SLOTS; i++)
        __atomic_store_n(&slots[i].n, 0, __ATOMIC_RELAXED);
    if (tl.slot)
        __atomic_store_n(&slots[tl.slot - 1].n, tl.depth, __ATOMIC_RELAXED);
    tl.forking = 0;
    __atomic_store_n(&forking, 0, __ATOMIC_RELEASE);
    if (tl.stuck && !__atomic_load_n(&child_off, __ATOMIC_RELAXED)) {
        __atomic_store_n(&child_off, 1, __ATOMIC_RELAXED);
        gmg_error("forked while another thread was still walking its stack after %d ms: this process records "
                  "no native call stacks (Python frames still), since the unwinder's locks may be held",
                  GMG_WALKGATE_WAIT_MS);
    }
    tl.stuck = 0;
}
