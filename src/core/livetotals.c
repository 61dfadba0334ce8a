/*
 * livetotals.c - see livetotals.h.
 */
#include "core/livetotals.h"

#include "base/cpuslot.h"
#include "core/peak.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define CHUNK_BITS 12
#define CHUNKS 4096 /* ids up to 16M, as the depot's (core/stacks.c) */

#define STRIPE_AFTER 32                      /* totals split by CPU after this many waits (below) */
static uint32_t stripe_after = STRIPE_AFTER; /* GMG_STRIPE_AFTER: tests */
static unsigned long stat_striped;           /* totals split so far */

__attribute__((constructor)) static void live_init(void)
{
    const char *after = getenv("GMG_STRIPE_AFTER"); /* tests: 0 splits every call site's totals at its first move */
    if (after && after[0] >= '0' && after[0] <= '9')
        stripe_after = (uint32_t)strtoul(after, NULL, 10);
}

/*
 * A (stack, device, family)'s totals move under the small lock of their
 * peak slot, a line that every allocation and free of that call site
 * writes. Where threads on several CPUs allocate from one call site at once
 * (a pool's sub-allocations, a data loader's threads), they would all wait
 * on that line: once moves have found its lock held STRIPE_AFTER times, the
 * totals get one stripe per CPU slot (base/cpuslot.h), each on its own line
 * with its own lock, and every later move goes to its thread's stripe. The
 * totals are then the slot's own (what moved before) plus every stripe's:
 * a free may land on another stripe than its allocation did, so that one
 * stripe alone may read below zero (the sums wrap), and the peak's scheme
 * holds per stripe as per slot (core/peak.c: it is linear in the moves).
 * A reader that summed the stripes one by one while moves go on could see a
 * free on one and not its allocation on another, or the other way round: a
 * total the call site never had. live_sum holds the slot's lock and every
 * stripe's while it adds them up (movers hold one lock at a time), so that
 * it reads the totals as they were at one moment.
 */

/* Every call site's totals moved by one thread alone (most programs):
 * taken by that thread's bias (base/bias.h) instead of each slot's lock,
 * until another thread moves one, or a reader needs the slots' locks
 * (the peak's make-up, a busy call site's stripes); then, for good, by
 * their locks: this bias is never given back (the slots' lock takers do
 * not check it under the lock, as the table's shards' do). */
static gmg_bias_t solo;

struct live_stripe {
    uint64_t bytes, count;
    struct gmg_peak_slot peak;
} __attribute__((aligned(64)));

/* Each on cache lines of its own: the stacks the depot numbers one after
 * the other are often those of threads running side by side, and two
 * threads at two call sites must not write one line. */
struct live_slot {
    uint32_t tag;              /* 0: free; else live_tag(device, family) */
    uint32_t waits;            /* moves that found its lock held, until it has stripes */
    uint64_t bytes, count;
    struct live_slot *next;    /* further (device, family) pairs of the stack */
    struct live_stripe *stripes; /* nstripes of them once busy (above), else NULL */
    uint32_t nstripes;         /* gmg_cpu_slots when they were made: set before they are published */
    struct gmg_peak_slot peak; /* its counted allocations, and at the peak (core/peak.h) */
} __attribute__((aligned(64)));

static void *lines_alloc(size_t n, size_t size)
{
    void *p = aligned_alloc(64, n * size); /* size: a multiple of 64 */
    if (p)
        memset(p, 0, n * size);
    return p;
}

static struct live_slot *live_chunks[CHUNKS];
static uint32_t chunks_made; /* chunks below this index may exist */

static uint32_t live_tag(int device, int family)
{
    return 1u << 16 | (uint32_t)(uint8_t)family << 8 | (uint32_t)(uint8_t)(int8_t)device;
}

/* NULL with *oom set: out of memory for the slot (try again next time);
 * NULL alone: an id with no slot, ever. */
static struct live_slot *live_slot_of(uint32_t id, int device, int family, int *oom)
{
    uint32_t c = id >> CHUNK_BITS;
    *oom = 0;
    if (id == 0 || c >= CHUNKS)
        return NULL;
    struct live_slot *chunk = __atomic_load_n(&live_chunks[c], __ATOMIC_ACQUIRE);
    if (!chunk) {
        /* mapped, not allocated and cleared: its pages are made as stacks use them */
        size_t size = (size_t)(1u << CHUNK_BITS) * sizeof(struct live_slot);
        struct live_slot *nc = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
                         *expected = NULL;
        if (nc == MAP_FAILED) {
            *oom = 1;
            return NULL;
        }
        if (!__atomic_compare_exchange_n(&live_chunks[c], &expected, nc, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            munmap(nc, size);
        /* readers walk the chunks below chunks_made (a chunk there may
         * still be NULL, made by another thread a moment later) */
        uint32_t m = __atomic_load_n(&chunks_made, __ATOMIC_RELAXED);
        while (m < c + 1 && !__atomic_compare_exchange_n(&chunks_made, &m, c + 1, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
            ;
        chunk = __atomic_load_n(&live_chunks[c], __ATOMIC_ACQUIRE);
    }
    struct live_slot *slot = &chunk[id & ((1u << CHUNK_BITS) - 1)];
    uint32_t tag = live_tag(device, family), cur = __atomic_load_n(&slot->tag, __ATOMIC_ACQUIRE);
    if (cur == tag)
        return slot;
    if (cur == 0) {
        if (__atomic_compare_exchange_n(&slot->tag, &cur, tag, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) || cur == tag)
            return slot;
    }
    struct live_slot *fresh = NULL;
    for (;;) {
        struct live_slot *head = __atomic_load_n(&slot->next, __ATOMIC_ACQUIRE);
        for (struct live_slot *s = head; s; s = __atomic_load_n(&s->next, __ATOMIC_ACQUIRE))
            if (s->tag == tag) {
                free(fresh);
                return s;
            }
        if (!fresh && !(fresh = lines_alloc(1, sizeof *fresh))) {
            *oom = 1;
            return NULL;
        }
        fresh->tag = tag;
        fresh->next = head;
        if (__atomic_compare_exchange_n(&slot->next, &head, fresh, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            return fresh;
    }
}

/* The slot's stripes, made once (under the caller's shard lock: once per
 * busy call site in the process's life). Out of memory: none yet, and the
 * next STRIPE_AFTER waits try again. */
static __attribute__((noinline, cold)) void stripes_make(struct live_slot *s)
{
    uint32_t n = gmg_cpu_slots;
    struct live_stripe *st = lines_alloc(n, sizeof *st), *none = NULL;
    if (!st) {
        __atomic_store_n(&s->waits, 0, __ATOMIC_RELAXED);
        return;
    }
    __atomic_store_n(&s->nstripes, n, __ATOMIC_RELAXED); /* any maker stores the same */
    if (__atomic_compare_exchange_n(&s->stripes, &none, st, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        __atomic_fetch_add(&stat_striped, 1, __ATOMIC_RELAXED);
    else
        free(st);
}

int gmg_stack_live_add(uint32_t id, int device, int family, uint64_t bytes, int sign, int counted)
{
    int oom;
    struct live_slot *s = live_slot_of(id, device, family, &oom);
    if (!s)
        return oom ? -1 : 0;
#ifndef GMG_NO_PEAK /* scripts/bench.sh builds a copy without it, to measure it */
    int peak = counted && device >= 0 && bytes < GMG_PEAK_MAX_RECORD;
#else
    int peak = 0;
    (void)counted;
#endif
    /* the stack's totals and its make-up at the peak under one lock: the
     * slot's, or its thread's stripe's once it has them */
    struct live_stripe *st = __atomic_load_n(&s->stripes, __ATOMIC_ACQUIRE);
    if (st) {
        uint32_t i = gmg_cpu_slot();
        st += i < __atomic_load_n(&s->nstripes, __ATOMIC_RELAXED) ? i : 0;
        gmg_peak_slot_move_with(&st->peak, device, bytes, sign, peak, &st->bytes, &st->count);
    } else if (__builtin_expect(gmg_peak_slot_move_biased(&s->peak, &solo, device, bytes, sign, peak, &s->bytes,
                                                         &s->count) ||
                                !stripe_after, 0) &&
               __atomic_add_fetch(&s->waits, 1, __ATOMIC_RELAXED) >= stripe_after) {
        stripes_make(s);
    }
    return 0;
}

/* The (stack, device, family)'s totals now: its own, and its stripes'
 * added up under all their locks (above). */
static void live_sum(struct live_slot *s, uint64_t *bytes, uint64_t *count)
{
    struct live_stripe *st = __atomic_load_n(&s->stripes, __ATOMIC_ACQUIRE);
    if (!st) { /* one slot: each figure as it is */
        *bytes = __atomic_load_n(&s->bytes, __ATOMIC_RELAXED);
        *count = __atomic_load_n(&s->count, __ATOMIC_RELAXED);
        return;
    }
    uint32_t n = __atomic_load_n(&s->nstripes, __ATOMIC_RELAXED);
    /* signals held off meanwhile: a reader may be a program's thread (a
     * refusal's message is captured on the refusing thread), and a handler
     * that allocated at this call site there would wait for ever on a lock
     * its own thread holds */
    sigset_t all, was;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &was);
    gmg_bias_revoke(&solo); /* the slots' locks taken below: nobody may move them without */
    gmg_peak_slot_hold(&s->peak);
    for (uint32_t i = 0; i < n; i++)
        gmg_peak_slot_hold(&st[i].peak);
    uint64_t b = __atomic_load_n(&s->bytes, __ATOMIC_RELAXED), c = __atomic_load_n(&s->count, __ATOMIC_RELAXED);
    for (uint32_t i = 0; i < n; i++) {
        b += __atomic_load_n(&st[i].bytes, __ATOMIC_RELAXED);
        c += __atomic_load_n(&st[i].count, __ATOMIC_RELAXED);
    }
    for (uint32_t i = n; i-- > 0;)
        gmg_peak_slot_release(&st[i].peak);
    gmg_peak_slot_release(&s->peak);
    pthread_sigmask(SIG_SETMASK, &was, NULL);
    *bytes = b;
    *count = c;
}

/* A reading's callback, and for the peak's its device and generation. */
struct walk {
    gmg_live_fn fn;
    void *arg;
    int device;
    uint64_t gen;
};

/* Every slot ever made, with its stack id. */
static void each_slot(void (*visit)(uint32_t id, struct live_slot *s, const struct walk *w), const struct walk *w)
{
    uint32_t n = __atomic_load_n(&chunks_made, __ATOMIC_ACQUIRE);
    for (uint32_t c = 0; c < n; c++) {
        struct live_slot *chunk = __atomic_load_n(&live_chunks[c], __ATOMIC_ACQUIRE);
        for (uint32_t i = 0; chunk && i < (1u << CHUNK_BITS); i++) {
            uint32_t id = c << CHUNK_BITS | i;
            visit(id, &chunk[i], w);
            for (struct live_slot *s = __atomic_load_n(&chunk[i].next, __ATOMIC_ACQUIRE); s;
                 s = __atomic_load_n(&s->next, __ATOMIC_ACQUIRE))
                visit(id, s, w);
        }
    }
}

static void live_visit(uint32_t id, struct live_slot *s, const struct walk *w)
{
    uint32_t tag = __atomic_load_n(&s->tag, __ATOMIC_ACQUIRE);
    uint64_t bytes, count;
    if (!tag)
        return;
    live_sum(s, &bytes, &count);
    if (count)
        w->fn(id, (int8_t)(tag & 0xff), (int)(tag >> 8 & 0xff), bytes, count, w->arg);
}

void gmg_stack_live_each(gmg_live_fn fn, void *arg)
{
    struct walk w = { fn, arg, 0, 0 };
    each_slot(live_visit, &w);
}

static void peak_visit(uint32_t id, struct live_slot *s, const struct walk *w)
{
    uint32_t tag = __atomic_load_n(&s->tag, __ATOMIC_ACQUIRE);
    if (!tag || (int8_t)(tag & 0xff) != w->device)
        return;
    uint64_t bytes, count;
    gmg_peak_slot_at(&s->peak, w->gen, &bytes, &count);
    /* each stripe's value at the peak stands still under the device's peak
     * lock, but for moves half done, which the peak's reading sees (their
     * sum is not the peak) and reads again for */
    struct live_stripe *st = __atomic_load_n(&s->stripes, __ATOMIC_ACQUIRE);
    uint32_t n = st ? __atomic_load_n(&s->nstripes, __ATOMIC_RELAXED) : 0;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t b, c;
        gmg_peak_slot_at(&st[i].peak, w->gen, &b, &c);
        bytes += b;
        count += c;
    }
    if (count)
        w->fn(id, w->device, (int)(tag >> 8 & 0xff), bytes, count, w->arg);
}

void gmg_stack_peak_each(int device, uint64_t gen, gmg_live_fn fn, void *arg)
{
    /* the slots' locks taken (gmg_peak_slot_at): nobody may move them
     * without. Under the device's peak lock: the bias's owner waits for it
     * only outside the bias (gmg_peak_slot_move_biased). */
    gmg_bias_revoke(&solo);
    struct walk w = { fn, arg, device, gen };
    each_slot(peak_visit, &w);
}

unsigned long gmg_live_split(void) { return __atomic_load_n(&stat_striped, __ATOMIC_RELAXED); }

void gmg_live_atfork_child(void)
{
    /* no allocation is live in the child: its totals start from nothing
     * (the parent's chunks are left untouched, costing the child nothing) */
    memset(live_chunks, 0, sizeof live_chunks);
    chunks_made = 0;
    gmg_bias_forget(&solo);
}
