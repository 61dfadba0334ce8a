/*
 * heaps.c - see heaps.h.
 *
 * Heaps live in slots, in chunks of CHUNK that are never moved or freed, so
 * that the region calls find a heap without a lock. A handle is a slot's
 * number + 1 and the slot's generation, odd while the heap is live, so that
 * a stale or garbage handle is told from a live one without following a
 * pointer. Adding, removing and naming heaps take `mu` (a program registers
 * a few heaps); the region calls, on the sub-allocator's path, take nothing.
 *
 * A slot's description is written while its generation is even (free), and
 * made live by storing the odd generation; every field is an atomic word,
 * stored with release and loaded with acquire. A reader loads the
 * generation, the fields, and the generation again: the copy is the live
 * heap's when both match its handle (a slot reused meanwhile shows a new
 * generation). A heap's region bytes are one word with the generation in
 * its top bits: each region call moves it with a compare-and-swap that
 * fails once the heap is gone, so that a call racing the heap's removal
 * never changes the next heap of that slot.
 */
#define _GNU_SOURCE
#include "core/heaps.h"

#include "base/hashtab.h"
#include "base/log.h"
#include "core/record.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct slot {
    uint64_t lo, size, seg_size, seg_value;
    uint32_t seg_seq;
    int32_t device, seg_family;
    uint32_t ctx, seg_stack;
    const char *name;
    uint64_t rb;              /* generation << RB_SHIFT | region bytes */
    uint64_t serial;          /* order of registration: the latest of a start wins */
    uint32_t gen;             /* odd while live; 12 bits */
};

#define GEN_MASK 0xfffu
#define RB_SHIFT 52
#define RB_MAX ((1ull << RB_SHIFT) - 1)
#define CHUNK 256u
#define MAX_SLOTS (1u << 20)

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct slot *chunks[MAX_SLOTS / CHUNK];
static uint32_t nslots;       /* slots in use so far (their chunks exist) */
static unsigned live;
static uint64_t serials;      /* under mu */
static uint64_t version;      /* +2 by every add and remove (gmg_heap_at's memo); odd while the index changes */

/* An index of the live heaps by start address, for gmg_heap_at on the
 * region calls' path (a scan of every slot costs microseconds at 1000
 * heaps): per start, the slot of the latest heap registered there, in an
 * open-addressed table (linear probing). It changes under mu only, inside
 * a sequence lock: `version` is odd meanwhile, and a reader that saw it odd
 * or changed by its end scans the slots instead (latest_at). A start no
 * heap holds keeps its entry (slot 0) until the table is rebuilt. A table
 * that grows is never freed (a reader may still be in it); each is at
 * least twice the last, so together they take at most twice the biggest. */
struct ix_entry {
    uint64_t lo;              /* 0: empty */
    uint32_t slot;            /* index + 1 of the latest live heap at lo; 0: none */
};
struct ix_table {
    uint32_t cap, used;       /* used: entries with a start (under mu) */
    struct ix_table *older;   /* the table it replaced: kept, and reachable */
    struct ix_entry e[];
};
static struct ix_table *ix;

/* The calling thread's last gmg_heap_at answer, good while no heap came or
 * went (a heap's range, device, context and name never change) */
static __thread struct {
    uint64_t lo, version;
    uintptr_t handle;
    struct gmg_heap_info info;
} tl_at __attribute__((tls_model("initial-exec")));

#define LD(x) __atomic_load_n(&(x), __ATOMIC_ACQUIRE)
#define ST(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELEASE)

static struct slot *slot_at(uint32_t i)
{
    struct slot *c = LD(chunks[i / CHUNK]);
    return c ? &c[i % CHUNK] : NULL;
}

/* The slot of a live heap's handle, and its generation; NULL otherwise. */
static struct slot *find(uintptr_t handle, uint32_t *gen_out)
{
    uint32_t i = (uint32_t)(handle & 0xfffff), gen = (uint32_t)(handle >> 20);
    if (!i || handle >> 32 || i > LD(nslots) || !(gen & 1))
        return NULL;
    struct slot *s = slot_at(i - 1);
    if (!s || LD(s->gen) != gen)
        return NULL;
    *gen_out = gen;
    return s;
}

static uint32_t ix_home(const struct ix_table *t, uint64_t lo)
{
    return (uint32_t)((lo >> 8) * 0x9E3779B97F4A7C15ull >> 32) & (t->cap - 1);
}

/* The entry of lo, or the empty one where it goes; NULL: full. */
static struct ix_entry *ix_find(struct ix_table *t, uint64_t lo)
{
    for (uint32_t k = 0, i = ix_home(t, lo); k < t->cap; k++, i = (i + 1) & (t->cap - 1)) {
        uint64_t key = __atomic_load_n(&t->e[i].lo, __ATOMIC_RELAXED);
        if (key == lo || !key)
            return &t->e[i];
    }
    return NULL;
}

/* Under mu, version odd: lo's entry names `slot` (0: none). */
static void ix_set(uint64_t lo, uint32_t slot);

/* Under mu, version odd: every live heap's start anew, in a table big
 * enough for them (a new one when the current is too small). */
static void ix_rebuild(uint32_t more)
{
    uint32_t want = 64;
    while (want < 2 * (live + more) + 2)
        want *= 2;
    struct ix_table *t = ix;
    if (!t || t->cap < want) {
        struct ix_table *n = calloc(1, sizeof *n + (size_t)want * sizeof n->e[0]);
        if (!n) { /* out of memory: an empty table (reads scan); or none */
            if (t) {
                for (uint32_t i = 0; i < t->cap; i++)
                    __atomic_store_n(&t->e[i].slot, 0, __ATOMIC_RELAXED);
            }
            return;
        }
        n->cap = want;
        n->older = t;
        __atomic_store_n(&ix, n, __ATOMIC_RELEASE);
        t = n;
    } else {
        for (uint32_t i = 0; i < t->cap; i++) {
            __atomic_store_n(&t->e[i].lo, 0, __ATOMIC_RELAXED);
            __atomic_store_n(&t->e[i].slot, 0, __ATOMIC_RELAXED);
        }
    }
    t->used = 0;
    for (uint32_t i = 0; i < nslots; i++) {
        struct slot *sl = slot_at(i);
        if (!(sl->gen & 1) || !sl->lo)
            continue;
        struct ix_entry *e = ix_find(t, sl->lo);
        uint32_t cur = e ? e->slot : 0;
        if (e && (!cur || slot_at(cur - 1)->serial < sl->serial))
            ix_set(sl->lo, i + 1);
    }
}

static void ix_set(uint64_t lo, uint32_t slot)
{
    if (!lo)
        return; /* a heap at 0 is found by the scan */
    if (!ix || (ix->used + 1) * 4 > ix->cap * 3) {
        if (!slot)
            return; /* nothing to say of a start the table does not hold */
        ix_rebuild(1);
        if (!ix)
            return;
    }
    struct ix_entry *e = ix_find(ix, lo);
    if (!e || (!e->lo && !slot))
        return;
    if (!e->lo) {
        ix->used++;
        __atomic_store_n(&e->lo, lo, __ATOMIC_RELAXED);
    }
    __atomic_store_n(&e->slot, slot, __ATOMIC_RELAXED);
}

/* The sequence lock around a change of the index (under mu). */
static void ix_begin(void)
{
    __atomic_store_n(&version, version + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
}

static void ix_end(void)
{
    __atomic_store_n(&version, version + 1, __ATOMIC_RELEASE);
}

/* The latest live heap at lo by the index; *ok 0 when the index could not
 * say (changing meanwhile, or none): then the caller scans. */
static uintptr_t ix_lookup(uint64_t lo, int *ok)
{
    uint64_t v = __atomic_load_n(&version, __ATOMIC_ACQUIRE);
    struct ix_table *t = __atomic_load_n(&ix, __ATOMIC_ACQUIRE);
    *ok = 0;
    if ((v & 1) || !t || !lo)
        return 0;
    struct ix_entry *e = ix_find(t, lo);
    uint32_t slot = e && __atomic_load_n(&e->lo, __ATOMIC_RELAXED) == lo ? __atomic_load_n(&e->slot, __ATOMIC_RELAXED)
                                                                       : 0;
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (__atomic_load_n(&version, __ATOMIC_RELAXED) != v)
        return 0;
    *ok = 1;
    struct slot *s = slot ? slot_at(slot - 1) : NULL;
    uint32_t gen = s ? LD(s->gen) : 0;
    return (gen & 1) && LD(s->lo) == lo ? (uintptr_t)gen << 20 | slot : 0;
}

static void copy_out(const struct slot *s, struct gmg_heap_info *h)
{
    h->lo = LD(s->lo);
    h->size = LD(s->size);
    h->seg_size = LD(s->seg_size);
    h->seg_value = LD(s->seg_value);
    h->seg_seq = LD(s->seg_seq);
    h->device = LD(s->device);
    h->seg_family = LD(s->seg_family);
    h->ctx = LD(s->ctx);
    h->seg_stack = LD(s->seg_stack);
    h->name = LD(s->name);
    h->region_bytes = LD(s->rb) & RB_MAX;
    h->serial = LD(s->serial);
}

uintptr_t gmg_heap_add(const struct gmg_heap_info *h)
{
    pthread_mutex_lock(&mu);
    uint32_t i = 0, n = nslots;
    struct slot *s = NULL;
    while (i < n && (LD(slot_at(i)->gen) & 1))
        i++;
    if (i == n) {
        if (n == MAX_SLOTS || (n % CHUNK == 0 && !chunks[n / CHUNK] &&
                               !(chunks[n / CHUNK] = calloc(CHUNK, sizeof(struct slot))))) {
            pthread_mutex_unlock(&mu);
            return 0;
        }
        ST(nslots, n + 1); /* after its chunk */
    }
    s = slot_at(i);
    uint32_t gen = (s->gen + 1) & GEN_MASK; /* odd: live */
    if (!(gen & 1))
        gen = 1;
    ST(s->lo, h->lo);
    ST(s->size, h->size);
    ST(s->seg_size, h->seg_size);
    ST(s->seg_value, h->seg_value);
    ST(s->seg_seq, h->seg_seq);
    ST(s->device, h->device);
    ST(s->seg_family, h->seg_family);
    ST(s->ctx, h->ctx);
    ST(s->seg_stack, h->seg_stack);
    ST(s->name, h->name);
    ST(s->rb, (uint64_t)gen << RB_SHIFT | (h->region_bytes & RB_MAX));
    ST(s->serial, ++serials);
    ST(s->gen, gen);
    __atomic_add_fetch(&live, 1, __ATOMIC_RELAXED);
    ix_begin();
    ix_set(h->lo, i + 1); /* the latest at its start */
    ix_end();
    pthread_mutex_unlock(&mu);
    return (uintptr_t)gen << 20 | (i + 1);
}

int gmg_heap_get(uintptr_t handle, struct gmg_heap_info *out)
{
    uint32_t gen;
    struct slot *s = find(handle, &gen);
    if (!s)
        return 0;
    copy_out(s, out);
    return LD(s->gen) == gen; /* not removed (and reused) while copied */
}

/* The latest registered live heap that starts at lo and, when `fits`,
 * holds [ptr, ptr + size); 0 when none does. */
static uintptr_t latest_at(uint64_t lo, int fits, uint64_t ptr, uint64_t size)
{
    uint32_t n = LD(nslots);
    uintptr_t best = 0;
    uint64_t best_serial = 0;
    for (uint32_t i = 0; i < n; i++) {
        struct slot *s = slot_at(i);
        uint32_t gen = s ? LD(s->gen) : 0;
        if (!(gen & 1) || LD(s->lo) != lo)
            continue;
        uint64_t hsize = LD(s->size), serial = LD(s->serial);
        if (fits && (ptr < lo || size > hsize || ptr - lo > hsize - size))
            continue;
        if (LD(s->gen) == gen && serial > best_serial) { /* the copy is the live heap's */
            best_serial = serial;
            best = (uintptr_t)gen << 20 | (i + 1);
        }
    }
    return best;
}

uintptr_t gmg_heap_at(uint64_t lo, struct gmg_heap_info *out)
{
    uint64_t v = LD(version);
    if (tl_at.handle && tl_at.lo == lo && tl_at.version == v && !(v & 1)) {
        *out = tl_at.info; /* a sub-allocator's regions, one heap after another */
        return tl_at.handle;
    }
    int ok;
    uintptr_t best = ix_lookup(lo, &ok);
    if (!ok)
        best = latest_at(lo, 0, 0, 0);
    if (!best || !gmg_heap_get(best, out))
        return 0;
    tl_at.lo = lo;
    tl_at.version = v;
    tl_at.handle = best;
    tl_at.info = *out;
    return best;
}

uintptr_t gmg_heap_at_holding(uint64_t lo, uint64_t ptr, uint64_t size)
{
    return latest_at(lo, 1, ptr, size);
}

int gmg_heap_remove(uintptr_t handle)
{
    pthread_mutex_lock(&mu);
    uint32_t gen;
    struct slot *s = find(handle, &gen);
    if (s) {
        ST(s->gen, (gen + 1) & GEN_MASK); /* even: free */
        __atomic_sub_fetch(&live, 1, __ATOMIC_RELAXED);
        ix_begin();
        struct ix_entry *e = ix && s->lo ? ix_find(ix, s->lo) : NULL;
        if (e && e->lo == s->lo && e->slot == (uint32_t)(handle & 0xfffff)) /* its start's entry was this heap's */
            ix_set(s->lo, (uint32_t)(latest_at(s->lo, 0, 0, 0) & 0xfffff)); /* the latest left there, if any */
        ix_end();
    }
    pthread_mutex_unlock(&mu);
    return s != NULL;
}

/* Move the slot's region bytes, clamped to [0, RB_MAX], while the heap of
 * generation gen is live there. */
static void rb_move(struct slot *s, uint32_t gen, int64_t delta, int set_zero)
{
    uint64_t w = LD(s->rb);
    for (;;) {
        if ((uint32_t)(w >> RB_SHIFT) != gen)
            return; /* the heap is gone */
        uint64_t b = w & RB_MAX;
        if (set_zero)
            b = 0;
        else if (delta < 0)
            b = (uint64_t)-delta > b ? 0 : b - (uint64_t)-delta;
        else
            b = (uint64_t)delta > RB_MAX - b ? RB_MAX : b + (uint64_t)delta;
        if (__atomic_compare_exchange_n(&s->rb, &w, (uint64_t)gen << RB_SHIFT | b, 1, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE))
            return;
    }
}

void gmg_heap_regions_add(uintptr_t handle, int64_t delta)
{
    uint32_t gen;
    struct slot *s = find(handle, &gen);
    if (s)
        rb_move(s, gen, delta, 0);
}

void gmg_heap_regions_clear(uintptr_t handle)
{
    uint32_t gen, n = LD(nslots);
    if (handle) {
        struct slot *s = find(handle, &gen);
        if (s)
            rb_move(s, gen, 0, 1);
        return;
    }
    for (uint32_t i = 0; i < n; i++) {
        struct slot *s = slot_at(i);
        if (s && ((gen = LD(s->gen)) & 1))
            rb_move(s, gen, 0, 1);
    }
}

/* Forget the segment of every live heap `match` picks; said once. A look
 * without the lock first: most frees are no heap's segment. */
static void segments_gone(int (*match)(const struct slot *, uint64_t, uint64_t), uint64_t a, uint64_t b)
{
    int found = 0;
    uint32_t n = LD(nslots);
    for (uint32_t i = 0; i < n && !found; i++) {
        struct slot *s = slot_at(i);
        found = s && (LD(s->gen) & 1) && LD(s->seg_family) >= 0 && match(s, a, b);
    }
    if (!found)
        return;
    static int said;
    int say = 0;
    pthread_mutex_lock(&mu);
    for (uint32_t i = 0; i < nslots; i++) {
        struct slot *s = slot_at(i);
        if ((s->gen & 1) && s->seg_family >= 0 && match(s, a, b)) {
            ST(s->seg_family, -1); /* no segment: what reports count of it goes */
            ST(s->seg_stack, 0);
            ST(s->seg_size, 0);
            say = !__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED);
        }
    }
    pthread_mutex_unlock(&mu);
    if (say)
        gmg_error("NVTX memory API: an allocation was freed while a heap in it was still registered (said once): "
                  "that heap has no segment any more, and its regions still registered stay leaks");
}

static int same_record(const struct slot *s, uint64_t value, uint64_t seq)
{
    return LD(s->seg_value) == value && LD(s->seg_seq) == (uint32_t)seq;
}

static int mapped_in(const struct slot *s, uint64_t lo, uint64_t size)
{
    int32_t fam = LD(s->seg_family);
    return (fam == GMG_FAM_VMM || fam == GMG_FAM_VMM_HOST) && LD(s->lo) - lo < size;
}

void gmg_heaps_segment_gone(uint64_t value, uint32_t seq)
{
    segments_gone(same_record, value, seq);
}

void gmg_heaps_unmapped(uint64_t lo, uint64_t size)
{
    segments_gone(mapped_in, lo, size);
}

unsigned gmg_heaps_live(void)
{
    return __atomic_load_n(&live, __ATOMIC_RELAXED);
}

void gmg_heaps_each(void (*fn)(const struct gmg_heap_info *, void *), void *arg)
{
    pthread_mutex_lock(&mu); /* no heap comes or goes meanwhile */
    for (uint32_t i = 0; i < nslots; i++) {
        struct slot *s = slot_at(i);
        if (LD(s->gen) & 1) {
            struct gmg_heap_info h;
            copy_out(s, &h);
            fn(&h, arg);
        }
    }
    pthread_mutex_unlock(&mu);
}

/* Names are kept for ever, so that a report holding one never sees it
 * freed; equal names share a copy, found by hash (a program that names each
 * heap differently makes as many). */
struct name {
    UT_hash_handle hh;
    char s[];
};
static struct name *names;

const char *gmg_heap_name(const char *s, unsigned maxlen)
{
    size_t n = strnlen(s, maxlen);
    struct name *p;
    pthread_mutex_lock(&mu);
    HASH_FIND(hh, names, s, n, p);
    if (!p && (p = malloc(sizeof *p + n + 1))) {
        memcpy(p->s, s, n);
        p->s[n] = 0;
        HASH_ADD_KEYPTR(hh, names, p->s, n, p);
        if (!p->hh.tbl) { /* the table could not grow: the name is not kept */
            free(p);
            p = NULL;
        }
    }
    pthread_mutex_unlock(&mu);
    return p ? p->s : NULL;
}

void gmg_heaps_atfork_child(void)
{
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    mu = fresh;
    /* the child's table is empty (core/track.h): so are its heaps */
    for (uint32_t i = 0; i < nslots; i++) {
        struct slot *s = slot_at(i);
        if (s && (s->gen & 1))
            s->gen = (s->gen + 1) & GEN_MASK;
    }
    live = 0;
    version = (version | 1) + 1; /* even: no change of the index under way here */
    if (ix) {
        for (uint32_t i = 0; i < ix->cap; i++)
            ix->e[i].lo = 0, ix->e[i].slot = 0;
        ix->used = 0;
    }
}
