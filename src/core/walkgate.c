/*
 * walkgate.c - see walkgate.h.
 *
 * Each thread counts the walks it is inside on one of SLOTS counters, its
 * own cache line (threads get slots in turn; beyond SLOTS threads, some
 * share one). Entering is an atomic add on that line followed by a read of
 * `forking`; a fork's prepare handler sets `forking` and then reads every
 * slot. Both are sequentially consistent, so either the walker sees the
 * fork coming (and backs out, waiting for it to end) or the forker sees the
 * walker (and waits for it to leave): never neither.
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
static int forking;              /* between a fork's prepare and its parent/child handlers */
static int stuck;                /* prepare gave up waiting for a walker (until parent/child) */
static int child_off;            /* forked while a walk was in progress: libunwind may hold a lock */

static __thread struct {
    int slot;                    /* 1 + the thread's slot; 0 until its first walk */
    int depth;                   /* walks this thread is inside (a signal handler may nest one) */
    int forking;                 /* this thread is the one forking */
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

static void nap(void)
{
    struct timespec ts = { 0, 50000 }; /* 50 us */
    nanosleep(&ts, NULL);
}

int gmg_walkgate_enter(void)
{
    if (__atomic_load_n(&child_off, __ATOMIC_RELAXED))
        return 0;
    struct slot *s = my_slot();
    uint64_t deadline = 0;
    for (;;) {
        __atomic_add_fetch(&s->n, 1, __ATOMIC_SEQ_CST);
        if (!__atomic_load_n(&forking, __ATOMIC_SEQ_CST) || tl.forking)
            break;
        /* a fork is being prepared: out of its way until it is done (at
         * most ten times the forker's own wait, then walk anyway: only a
         * child forked now could be hurt, and it would be told) */
        __atomic_sub_fetch(&s->n, 1, __ATOMIC_RELEASE);
        if (!deadline)
            deadline = now_ms() + 10 * GMG_WALKGATE_WAIT_MS;
        while (__atomic_load_n(&forking, __ATOMIC_ACQUIRE) && now_ms() < deadline)
            nap();
        if (now_ms() >= deadline) {
            __atomic_add_fetch(&s->n, 1, __ATOMIC_SEQ_CST);
            break;
        }
    }
    tl.depth++;
    return 1;
}

void gmg_walkgate_leave(void)
{
    tl.depth--;
    __atomic_sub_fetch(&slots[tl.slot - 1].n, 1, __ATOMIC_RELEASE);
}

void gmg_walkgate_prepare(void)
{
    tl.forking = 1;
    __atomic_store_n(&forking, 1, __ATOMIC_SEQ_CST);
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
            nap();
        }
    }
    __atomic_store_n(&stuck, late, __ATOMIC_RELAXED);
}

void gmg_walkgate_parent(void)
{
    __atomic_store_n(&stuck, 0, __ATOMIC_RELAXED); /* the parent's walker goes on and lets go of its locks */
    tl.forking = 0;
    __atomic_store_n(&forking, 0, __ATOMIC_RELEASE);
}

void gmg_walkgate_child(void)
{
    /* only this thread is left: only its own walks are in progress */
    for (int i = 0; i < SLOTS; i++)
        __atomic_store_n(&slots[i].n, 0, __ATOMIC_RELAXED);
    if (tl.slot)
        __atomic_store_n(&slots[tl.slot - 1].n, tl.depth, __ATOMIC_RELAXED);
    tl.forking = 0;
    __atomic_store_n(&forking, 0, __ATOMIC_RELEASE);
    if (__atomic_load_n(&stuck, __ATOMIC_RELAXED) && !__atomic_load_n(&child_off, __ATOMIC_RELAXED)) {
        __atomic_store_n(&stuck, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&child_off, 1, __ATOMIC_RELAXED);
        gmg_error("forked while another thread was still walking its stack after %d ms: this process records "
                  "no native call stacks (Python frames still), since the unwinder's locks may be held",
                  GMG_WALKGATE_WAIT_MS);
    }
}
