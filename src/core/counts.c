/*
 * counts.c - see counts.h.
 *
 * A thread's counts are in a block of its own, a device's two side by side,
 * each changed with a plain load and store: no other thread writes them, and
 * readers load them as they are. Kept in the slot of the CPU beside its
 * credit word (core/quota.c), each count was an atomic add: two more atomic
 * operations a pair, which cost 14 ns a pair on an Intel Xeon (where each
 * waits for every store before it) and about 2 on an AMD EPYC, against the
 * one more cache line a pair a block of the thread's own costs
 * (docs/benchmarks.md).
 *
 * Blocks are never freed: a list that only grows, read without a lock. At
 * its exit a thread gives its block up (a pthread key's destructor), and a
 * thread that starts later takes it over (a compare-and-swap on `taken`,
 * whose acquire orders the last owner's stores before the new owner's),
 * adding to what is counted there. So there are as many blocks as threads
 * ever alive at once. A thread that counts after its block's destructor
 * ran (another key's destructor freeing memory), or that got no block (out
 * of memory, no key), adds to `spill`, with atomic adds.
 */
#define _GNU_SOURCE
#include "core/counts.h"

#include "base/limit_parse.h" /* GMG_MAX_DEVICES */

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct block {
    struct { uint64_t allocs, frees; } d[GMG_MAX_DEVICES];
    struct block *next;
    int taken;           /* a live thread counts here */
} __attribute__((aligned(64)));

static struct block *blocks;
static uint64_t spill[GMG_MAX_DEVICES][2];

enum { NO_BLOCK_YET, HAS_BLOCK, SPILLS };
static __thread struct block *tl __attribute__((tls_model("initial-exec")));
static __thread unsigned char tl_state __attribute__((tls_model("initial-exec")));

static pthread_key_t key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static int have_key;

static void give_up(void *arg)
{
    struct block *b = arg;
    tl = NULL;
    tl_state = SPILLS; /* whatever this thread counts from now on */
    __atomic_store_n(&b->taken, 0, __ATOMIC_RELEASE);
}

static void key_make(void) { have_key = pthread_key_create(&key, give_up) == 0; }

/* The thread's first count: a block given up by a thread that exited, or
 * a new one. NULL: count in spill. */
static __attribute__((noinline, cold)) struct block *take_block(void)
{
    if (tl_state == SPILLS)
        return NULL;
    tl_state = SPILLS; /* unless all goes well below */
    pthread_once(&key_once, key_make);
    if (!have_key)
        return NULL;
    struct block *b;
    for (b = __atomic_load_n(&blocks, __ATOMIC_ACQUIRE); b; b = b->next) {
        int free_ = 0;
        if (!__atomic_load_n(&b->taken, __ATOMIC_RELAXED) &&
            __atomic_compare_exchange_n(&b->taken, &free_, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
            break;
    }
    if (!b) {
        if (!(b = aligned_alloc(64, sizeof *b)))
            return NULL;
        memset(b, 0, sizeof *b);
        b->taken = 1;
        b->next = __atomic_load_n(&blocks, __ATOMIC_RELAXED);
        while (!__atomic_compare_exchange_n(&blocks, &b->next, b, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
            ;
    }
    if (pthread_setspecific(key, b) != 0) { /* nothing would give it up at exit */
        __atomic_store_n(&b->taken, 0, __ATOMIC_RELEASE);
        return NULL;
    }
    tl = b;
    tl_state = HAS_BLOCK;
    return b;
}

static inline void add(uint64_t *v) { __atomic_store_n(v, __atomic_load_n(v, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED); }

static inline void count(int dev, int which)
{
    if ((unsigned)dev >= GMG_MAX_DEVICES)
        return;
    struct block *b = tl;
    if (__builtin_expect(!b, 0) && !(b = take_block())) {
        __atomic_fetch_add(&spill[dev][which], 1, __ATOMIC_RELAXED);
        return;
    }
    add(which ? &b->d[dev].frees : &b->d[dev].allocs);
}

void gmg_counts_alloc(int dev) { count(dev, 0); }
void gmg_counts_free(int dev) { count(dev, 1); }

static uint64_t sum(int dev, int which)
{
    if (dev >= GMG_MAX_DEVICES)
        return 0;
    int lo = dev < 0 ? 0 : dev, hi = dev < 0 ? GMG_MAX_DEVICES : dev + 1;
    uint64_t n = 0;
    for (int d = lo; d < hi; d++)
        n += __atomic_load_n(&spill[d][which], __ATOMIC_RELAXED);
    for (struct block *b = __atomic_load_n(&blocks, __ATOMIC_ACQUIRE); b; b = b->next)
        for (int d = lo; d < hi; d++)
            n += __atomic_load_n(which ? &b->d[d].frees : &b->d[d].allocs, __ATOMIC_RELAXED);
    return n;
}

uint64_t gmg_counts_allocs(int dev) { return sum(dev, 0); }
uint64_t gmg_counts_frees(int dev) { return sum(dev, 1); }

void gmg_counts_atfork_child(void)
{
    memset(spill, 0, sizeof spill);
    for (struct block *b = blocks; b; b = b->next) {
        memset(b->d, 0, sizeof b->d);
        b->taken = b == tl; /* the other threads are not in the child */
    }
}
