/*
 * track.c - see track.h.
 *
 * Keys are hashed once (key_hash): the top byte picks the shard, the
 * low 32 bits are uthash's hash value (HASH_*_BYHASHVALUE), so that neither
 * hashes the key again. Every place a record enters or leaves a shard goes
 * through add_locked / del_locked, which keep the shard's count and the
 * live totals (per stack in the depot; for stack 0, stacks off, per shard
 * here) equal to what the table holds.
 */
#include "core/track.h"

#include "base/bias.h"
#include "base/lock.h"
#include "base/log.h"
#include "core/peak.h"
#include "core/livetotals.h"

#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define SHARDS 256

/* uthash doubles a table's buckets when one chain reaches 10 (times its
 * bucket's multiplier). With 1,000,000 live in 256 shards (3.9 records a
 * bucket at 1,024 buckets) one chain in four shards reaches 10 by chance,
 * and those tables double to 2,048 buckets (32 KB): a megabyte in all, one
 * byte per live allocation, for chains of 1.9. At 12 the same tables stay
 * at 1,024 (docs/benchmarks.md, memory per live allocation); tables double
 * a little later, at most about a fifth more records a bucket. */
#undef HASH_BKT_CAPACITY_THRESH
#define HASH_BKT_CAPACITY_THRESH 12U

/* Each shard's uthash table (its header and its buckets) on cache lines of
 * its own: most adds and deletes write the header (the item count, the
 * tail), and malloc puts two small blocks made one after the other side by
 * side, so that two threads at two shards would write one line. */
static void *table_alloc(size_t size) { return aligned_alloc(64, (size + 63) & ~(size_t)63); }
#undef uthash_malloc
#define uthash_malloc(sz) table_alloc(sz)

/* Live totals of stack 0 in one shard, per (device, family): written under
 * the shard's lock, read without it (a list that only grows). */
struct zero_total {
    struct zero_total *next;
    int device, family;
    uint64_t bytes, count;
    struct gmg_peak_slot peak; /* its counted allocations, and at the peak (core/peak.h) */
};

/*
 * Flights: frees in progress, out of the table. A free takes its record
 * out of the table before the driver call and notes it in a free flight
 * slot of the shard; when the driver has freed it, the freeing thread
 * clears the slot with one release store and gives the record back to the
 * pool (record.h), without taking the lock again. Everything else about a
 * slot happens under the shard's lock: claiming it, a racing free of the
 * same key finding it (and telling the owner it freed the memory:
 * FL_OTHER), a context teardown finding it (FL_TORN), and the owner's
 * settling when the driver refused. When every slot is taken (FLIGHTS
 * frees in flight in one shard), and for VMM handles (which stay while
 * mapped), the record is marked in the table instead (`freeing`) and
 * settled under the lock.
 *
 * A slot whose free the driver did leaves FL_DONE behind, with its key and
 * seq, until the slot is claimed again: a racing free of the same key that
 * the driver also did then knows that its own call freed a newer
 * allocation given the same address meanwhile (gmg_track_free_racing).
 */
#define FLIGHTS 4
#define GONE 16 /* a power of two */
enum { FL_FREE = 0, FL_ON = 1, FL_OTHER = 2, FL_TORN = 4, FL_DONE = 8 };
struct flight {
    uint64_t value;
    uint32_t seq, ctx;
    uint8_t space, family;
    uint32_t state;         /* FL_*: cleared by its owner without the lock */
};

struct shard {
    gmg_lock_t mu;
    /* Taken by its owner (base/bias.h) instead of mu: the thread that
     * uses the shard alone (most programs allocate from one thread) takes
     * it with plain stores, no atomic read-modify-write (docs/benchmarks.md,
     * where a stacks-off pair goes), and given back to a thread that
     * takes the lock alone for a while (`turns`, under mu). `inside`: the
     * holder's busy flag when it took the shard by the bias, else NULL. */
    gmg_bias_t bias;
    uint8_t *inside;
    gmg_bias_turns_t turns;
    struct gmg_alloc *head;
    size_t count;           /* written under mu, read without it */
    uint32_t seq;           /* under mu: the last record's seq   */
    struct zero_total *zero;
    struct gmg_pool pool;   /* under mu: the shard's records     */
    struct flight fl[FLIGHTS];
    /* Keys taken out of the table lately, none of which is in it (gone_*
     * below): an insert of one of them (the driver gave a freed address
     * out again, as its allocators mostly do) needs no look for a stale
     * record, which walks the key's whole bucket chain, a cache miss a
     * record at 1,000,000 live (docs/benchmarks.md, twelfth pass). */
    struct gmg_key gone[GONE];
    /* The shard's first (device, family) of stack 0, `zero` once used, and
     * a record that is never removed (space 0: no key matches it, and every
     * walk skips it): uthash frees a table when its last item goes and makes
     * it again with the next, two mallocs and two frees per pair when
     * nothing else is live in the shard. Both are written by most adds and
     * deletes (a stacks-off total; the sentinel's list links while the
     * shard is nearly empty): kept here, on the shard's own cache lines,
     * and not beside another shard's, so that two threads at two shards do
     * not write one line for them (docs/benchmarks.md, fourth pass). */
    struct zero_total zero_first;
    struct gmg_alloc sentinel; /* last: a record ends in its ninth word's flexible array */
} __attribute__((aligned(1024))); /* 704 bytes used; a power of two makes a shard's address its number
                                   * shifted, which the allocation path computes several times (2-4 ns a
                                   * pair with stacks off, for 80 kB more resident: docs/benchmarks.md) */

static struct shard shards[SHARDS];

/* The shard's exclusion: its owner's bias, or its lock once revoked (and
 * still revoked once the lock is held: a taker gives it back under it). */
static __attribute__((noinline, cold)) void shard_lock_again(struct shard *s)
{
    do {
        gmg_unlock(&s->mu);
        gmg_bias_revoke(&s->bias);
        gmg_lock(&s->mu);
    } while (!gmg_bias_revoked(&s->bias));
}

static inline __attribute__((always_inline)) void shard_lock(struct shard *s)
{
    uint8_t *inside = gmg_bias_take_flag(&s->bias);
    if (inside) {
        s->inside = inside;
        return;
    }
    gmg_lock(&s->mu);
    if (__builtin_expect(!gmg_bias_revoked(&s->bias), 0))
        shard_lock_again(s);
    s->inside = NULL;
}

static inline __attribute__((always_inline)) void shard_unlock(struct shard *s)
{
    if (s->inside) {
        gmg_bias_leave_flag(s->inside);
    } else {
        gmg_bias_note_take(&s->bias, &s->turns);
        gmg_unlock(&s->mu);
    }
}

#ifdef GMG_TRACK_TEST_HOOKS /* tests/unit/test_track.c only */
unsigned gmg_track_test_regains(uint32_t shard);
unsigned gmg_track_test_regains(uint32_t shard) { return shards[shard % SHARDS].turns.regains; }
#endif

/* Before a walk of every shard: every bias revoked at one barrier, where
 * the walk's locks would each make one (a shard given back meanwhile is
 * revoked again by its lock's taker, shard_lock). */
static void unbias_all(void)
{
    int dropped[SHARDS], any = 0;
    for (int i = 0; i < SHARDS; i++)
        any |= dropped[i] = gmg_bias_drop(&shards[i].bias);
    if (any)
        gmg_bias_barrier();
    /* every shard whose owner is not inside first: one owner inside (a
     * thread preempted there) holds up its shard only, not the table */
    for (int i = 0; i < SHARDS; i++)
        if (dropped[i] && gmg_bias_settled(&shards[i].bias))
            dropped[i] = 0;
    for (int i = 0; i < SHARDS; i++) {
        if (dropped[i])
            gmg_bias_settle(&shards[i].bias);
        gmg_bias_revoke(&shards[i].bias); /* those another thread was revoking */
    }
}

static pthread_mutex_t reclaimed_mu = PTHREAD_MUTEX_INITIALIZER;
static struct gmg_alloc **reclaimed;
static size_t reclaimed_n, reclaimed_cap;

static uint64_t key_hash(uint64_t value, unsigned space)
{
    uint64_t h = value ^ ((uint64_t)space << 59) ^ space;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return h;
}

_Static_assert(SHARDS == 256, "shard_of takes a hash's top 8 bits");
static struct shard *shard_of(uint64_t h) { return &shards[h >> 56]; }

/* a plain add by the one writer (the lock holder), for lock-free readers */
static void bump(size_t *v, long d) { __atomic_store_n(v, __atomic_load_n(v, __ATOMIC_RELAXED) + (size_t)d, __ATOMIC_RELAXED); }
static void bump64(uint64_t *v, int sign, uint64_t d)
{
    uint64_t cur = __atomic_load_n(v, __ATOMIC_RELAXED);
    __atomic_store_n(v, sign > 0 ? cur + d : cur - d, __ATOMIC_RELAXED);
}

/* Stack 0's totals of (device, family) in a shard, made when first needed
 * (NULL when out of memory, or for a removal that finds none). */
static __attribute__((noinline)) struct zero_total *zero_find(struct shard *s, const struct gmg_alloc *a, int make)
{
    struct zero_total *z = s->zero;
    while (z && (z->device != a->device || z->family != a->family))
        z = z->next;
    if (!z && make && (z = s->zero ? calloc(1, sizeof *z) : &s->zero_first) != NULL) {
        z->device = a->device;
        z->family = a->family;
        z->next = s->zero;
        __atomic_store_n(&s->zero, z, __ATOMIC_RELEASE);
    }
    return z;
}

/* -1: an add found no memory for its totals (nothing counted). A removal
 * always finds the totals its add made (they are never freed). */
static inline __attribute__((always_inline)) int live_change(struct shard *s, const struct gmg_alloc *a, int sign)
{
    if (a->stack)
        return gmg_stack_live_add(a->stack, a->device, a->family, a->size, sign, a->counted);
    /* usually one (device, family) per shard: the first */
    struct zero_total *z = s->zero;
    if (__builtin_expect(!z || z->device != a->device || z->family != a->family, 0))
        if (!(z = zero_find(s, a, sign > 0)))
            return sign > 0 ? -1 : 0;
#ifndef GMG_NO_PEAK /* scripts/bench.sh builds a copy without it, to measure it */
    if (a->counted && a->device >= 0 && a->size < GMG_PEAK_MAX_RECORD) /* under the shard's lock */
        gmg_peak_slot_move_serial(&z->peak, a->device, a->size, sign);
#endif
    bump64(&z->bytes, sign, a->size);
    bump64(&z->count, sign, 1);
    return 0;
}

/* Allocations whose records could not be added (all families, and per
 * family: reserved ranges and mappings are no leaks; the bytes are those
 * they counted against the quota, which stay counted), and reclaimed ones
 * that could not be listed (out of memory), for reports
 * (gmg_track_lost); the first said once per process, after the lock. */
static uint64_t untracked_allocs, untracked_bytes, unlisted_allocs, unlisted_bytes;
static uint64_t untracked_fam[GMG_FAM_COUNT];
static int untracked_said;

static __attribute__((noinline, cold)) void untracked(int family, int device, uint64_t counted_bytes)
{
    __atomic_fetch_add(&untracked_allocs, 1, __ATOMIC_RELAXED);
    gmg_peak_note_untracked(device, counted_bytes); /* in use still: the quota keeps them */
    if (family == GMG_FAM_VMM_HOST)
        family = GMG_FAM_VMM; /* counted by API name (JSON's by_api): both are cuMemCreate */
    if (family >= 0 && family < GMG_FAM_COUNT)
        __atomic_fetch_add(&untracked_fam[family], 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&untracked_bytes, counted_bytes, __ATOMIC_RELAXED);
    if (!__atomic_exchange_n(&untracked_said, 1, __ATOMIC_RELAXED))
        gmg_error("out of memory for the guard's records: some allocations are not tracked (not in reports; "
                  "what they count against the quota stays counted)");
}

/* The add failed because the shard's buckets could not be doubled (out
 * of memory; uthash has rolled it back): add it without doubling, to a
 * longer chain. Lookups get slower, the table stays exact; the next add
 * that crosses the threshold tries to double again. 0, or -1 when even
 * this fails. */
static __attribute__((noinline, cold)) int add_unexpanded(struct shard *s, struct gmg_alloc *a, uint64_t h)
{
    UT_hash_table *tbl = s->head->hh.tbl;
    unsigned was = tbl->noexpand;
    tbl->noexpand = 1;
    HASH_ADD_KEYPTR_BYHASHVALUE(hh, s->head, &a->value, GMG_KEY_LEN, (unsigned)h, a);
    tbl->noexpand = was;
    return a->hh.tbl ? 0 : -1;
}

/* The shard's gone slots hold keys that are not in its table: del_locked
 * notes each key it takes out (over whatever the slot held), add_locked
 * clears the slot of each key it puts in, and nothing else adds or removes
 * a record (space 0, the sentinel's, never matches a key). Under the
 * shard's lock; the slot is picked by bits of the key's hash that neither
 * the shard nor, short of 2^20 buckets, uthash's bucket uses. */
static inline struct gmg_key *gone_slot(struct shard *s, uint32_t hashv) { return &s->gone[(hashv >> 20) & (GONE - 1)]; }

static inline int gone_has(const struct gmg_key *g, enum gmg_space space, uint64_t value)
{
    return g->value == value && g->space == (uint8_t)space;
}

/* keep_seq: a record back from a flight keeps its sequence number (a
 * racing free may be looking for it by that number). -1: out of memory (the
 * shard's table could not be made or grown, record.h), `a` not added and
 * nothing counted: the caller still owns it. */
static inline __attribute__((always_inline)) int add_locked(struct shard *s, struct gmg_alloc *a, uint64_t h, int keep_seq)
{
    if (__builtin_expect(!s->head, 0)) {
        struct gmg_alloc *z = &s->sentinel;
        HASH_ADD_KEYPTR_BYHASHVALUE(hh, s->head, &z->value, GMG_KEY_LEN, 0u, z);
        if (!s->head)
            return -1;
    }
    if (!keep_seq) {
        if (++s->seq == 0)
            s->seq = 1;
        a->seq = s->seq;
    }
    HASH_ADD_KEYPTR_BYHASHVALUE(hh, s->head, &a->value, GMG_KEY_LEN, (unsigned)h, a);
    if (__builtin_expect(!a->hh.tbl, 0) && add_unexpanded(s, a, h) != 0)
        return -1;
    if (__builtin_expect(live_change(s, a, 1) != 0, 0)) { /* no totals: not in the table either */
        HASH_DEL(s->head, a);
        return -1;
    }
    bump(&s->count, 1);
    struct gmg_key *g = gone_slot(s, (uint32_t)h);
    if (gone_has(g, a->space, a->value))
        g->space = 0; /* in the table again */
    return 0;
}

static inline __attribute__((always_inline)) void del_locked(struct shard *s, struct gmg_alloc *a)
{
    struct gmg_key *g = gone_slot(s, a->hh.hashv);
    g->value = a->value;
    g->space = a->space;
    HASH_DEL(s->head, a);
    bump(&s->count, -1);
    live_change(s, a, -1);
}

static inline __attribute__((always_inline)) struct gmg_alloc *find_locked(struct shard *s, enum gmg_space space, uint64_t value, uint64_t h)
{
    struct gmg_key k;
    k.value = value;
    k.space = (uint8_t)space;
    struct gmg_alloc *a;
    HASH_FIND_BYHASHVALUE(hh, s->head, &k, GMG_KEY_LEN, (unsigned)h, a);
    return a;
}

/* Out of the table for good (the caller has taken it out, or it was
 * never in): *g gets what is left of it, and its memory goes back to the
 * shard's pool. */
static void gone_locked(struct shard *s, struct gmg_alloc *a, struct gmg_gone *g)
{
    gmg_gone_of(a, g);
    gmg_pool_put(&s->pool, a);
}

int gmg_track_insert(const struct gmg_alloc *t, uint64_t aux, struct gmg_gone *stale)
{
    uint64_t h = key_hash(t->value, t->space);
    struct shard *s = shard_of(h);
    int ret = 0;
    shard_lock(s);
    struct gmg_alloc *a = gmg_pool_get(&s->pool, t->has_aux);
    if (!a) {
        shard_unlock(s);
        untracked(t->family, t->device, t->counted ? t->size : 0);
        return -1;
    }
    memcpy(a, t, offsetof(struct gmg_alloc, hh));
    if (a->has_aux)
        a->aux[0] = aux;
    /* a key taken out lately is not in the table: no stale record to look for */
    struct gmg_alloc *old = gone_has(gone_slot(s, (uint32_t)h), a->space, a->value) ? NULL
                                                                                    : find_locked(s, a->space, a->value, h);
    if (old) {
        del_locked(s, old);
        if (old->freeing) {
            old->detached = 1; /* its freeing thread owns it */
        } else {
            gone_locked(s, old, stale);
            ret = 1;
        }
    }
    if (__builtin_expect(add_locked(s, a, h, 0) != 0, 0)) {
        gmg_pool_put(&s->pool, a); /* untracked; a stale record is still gone */
        ret = ret ? GMG_INSERT_FAILED_STALE : -1;
    }
    shard_unlock(s);
    if (__builtin_expect(ret < 0, 0))
        untracked(t->family, t->device, t->counted ? t->size : 0);
    return ret;
}

int gmg_track_remove(enum gmg_space space, uint64_t value, struct gmg_gone *out)
{
    uint64_t h = key_hash(value, space);
    struct shard *s = shard_of(h);
    shard_lock(s);
    struct gmg_alloc *a = find_locked(s, space, value, h);
    if (a) {
        del_locked(s, a);
        gone_locked(s, a, out);
    }
    shard_unlock(s);
    return a != NULL;
}

/* A free slot, or FLIGHTS if none; under the lock (acquire: the slot's
 * last owner is done with it). */
static int flight_claim(struct shard *s)
{
    for (int i = 0; i < FLIGHTS; i++)
        if (!(__atomic_load_n(&s->fl[i].state, __ATOMIC_ACQUIRE) & FL_ON)) /* FL_FREE or FL_DONE */
            return i;
    return FLIGHTS;
}

/* The slot of a free in flight of this key, or -1; under the lock. */
static int flight_find(struct shard *s, enum gmg_space space, uint64_t value)
{
    for (int i = 0; i < FLIGHTS; i++) {
        struct flight *fl = &s->fl[i];
        if ((__atomic_load_n(&fl->state, __ATOMIC_ACQUIRE) & FL_ON) && fl->value == value && fl->space == space)
            return i;
    }
    return -1;
}

/* Add bits to a slot still in flight; 0 if its owner has cleared it.
 * Under the lock (only the owner changes it meanwhile, and only to FL_FREE). */
static int flight_mark(struct flight *fl, uint32_t bits)
{
    uint32_t st = __atomic_load_n(&fl->state, __ATOMIC_ACQUIRE);
    return (st & FL_ON) &&
           __atomic_compare_exchange_n(&fl->state, &st, st | bits, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

/* The same, only if the slot is still the free of this key and seq (and
 * not another free's since). */
static int flight_tell(struct flight *fl, enum gmg_space space, uint64_t value, uint32_t seq, uint32_t bits)
{
    return fl->value == value && fl->space == space && fl->seq == seq && flight_mark(fl, bits);
}

void gmg_track_free_begin(enum gmg_space space, uint64_t value, struct gmg_freeing *f)
{
    uint64_t h = key_hash(value, space);
    struct shard *s = shard_of(h);
    f->a = NULL;
    f->racing = 0;
    f->flight = -1;
    f->shard = (uint32_t)(s - shards);
    shard_lock(s);
    struct gmg_alloc *a = find_locked(s, space, value, h);
    if (a && a->freeing) {
        f->racing = a->seq; /* marked in the table by another thread */
    } else if (a) {
        int i = space == GMG_SPACE_VMM ? FLIGHTS : flight_claim(s);
        if (i < FLIGHTS) {
            del_locked(s, a);
            struct flight *fl = &s->fl[i];
            fl->value = value;
            fl->space = (uint8_t)space;
            fl->seq = a->seq;
            fl->ctx = a->ctx;
            fl->family = a->family;
            __atomic_store_n(&fl->state, FL_ON, __ATOMIC_RELAXED);
            f->flight = i;
        }
        a->freeing = 1;
        a->freed_by_other = 0;
        a->torn_down = 0;
        f->a = a;
    } else {
        int i = flight_find(s, space, value);
        if (i >= 0) { /* in flight: another thread is freeing it */
            f->racing = s->fl[i].seq;
            f->flight = i;
        }
    }
    shard_unlock(s);
}

/* The record was in a flight slot: see gmg_track_free_end. */
static int flight_end(struct gmg_freeing *f, int freed, struct gmg_gone *out)
{
    struct shard *s = &shards[f->shard];
    struct flight *fl = &s->fl[f->flight];
    struct gmg_alloc *a = f->a;
    if (freed) { /* the usual end: the memory is gone, so is the record */
        gmg_gone_of(a, out);
        __atomic_store_n(&fl->state, FL_DONE, __ATOMIC_RELEASE);
        gmg_pool_give_back(&s->pool, a);
        return GMG_FREE_DROPPED;
    }
    int what, lost = 0, lost_family = 0, lost_device = -1;
    uint64_t lost_bytes = 0;
    shard_lock(s);
    uint32_t st = __atomic_load_n(&fl->state, __ATOMIC_ACQUIRE);
    __atomic_store_n(&fl->state, FL_FREE, __ATOMIC_RELEASE);
    if (st & FL_OTHER) { /* a racing free of the same pointer freed it */
        gone_locked(s, a, out);
        what = GMG_FREE_DROPPED;
    } else if (st & FL_TORN) { /* the teardown freed it, not the program */
        gmg_gone_of(a, out);
        what = GMG_FREE_RECLAIMED;
    } else {
        uint64_t h = key_hash(a->value, a->space);
        a->freeing = 0;
        if (find_locked(s, a->space, a->value, h)) {
            /* the driver refused the free, yet gave the address out again:
             * the memory it stood for is gone */
            gone_locked(s, a, out);
            what = GMG_FREE_DROPPED;
        } else { /* the driver kept it: live again */
            if ((lost = add_locked(s, a, h, 1) != 0)) { /* out of memory: untracked, its bytes still counted */
                lost_bytes = a->counted ? a->size : 0;
                lost_family = a->family;
                lost_device = a->device;
                gmg_pool_put(&s->pool, a);
            }
            what = GMG_FREE_KEPT;
        }
    }
    shard_unlock(s);
    if (__builtin_expect(lost, 0))
        untracked(lost_family, lost_device, lost_bytes);
    return what;
}

int gmg_track_free_end(struct gmg_freeing *f, int freed, struct gmg_gone *out)
{
    if (f->flight >= 0)
        return flight_end(f, freed, out);
    struct gmg_alloc *a = f->a;
    struct shard *s = &shards[f->shard];
    int what = GMG_FREE_DROPPED;
    shard_lock(s);
    if (a->detached) {
        gone_locked(s, a, out); /* already out of the table */
    } else if ((freed || a->freed_by_other) && a->space == GMG_SPACE_VMM && a->aux[0] > 0) {
        a->freeing = 0; /* released while mapped: counts until the last unmap */
        a->released = 1;
        what = GMG_FREE_KEPT;
    } else if (freed || a->freed_by_other) {
        del_locked(s, a);
        gone_locked(s, a, out);
    } else if (a->torn_down) {
        del_locked(s, a); /* the teardown freed it, not the program */
        gmg_gone_of(a, out);
        what = GMG_FREE_RECLAIMED;
    } else {
        a->freeing = 0; /* the driver kept it: live again */
        what = GMG_FREE_KEPT;
    }
    shard_unlock(s);
    return what;
}

int gmg_track_free_racing(enum gmg_space space, uint64_t value, const struct gmg_freeing *f, struct gmg_gone *out,
                          uint32_t *suspect)
{
    uint64_t h = key_hash(value, space);
    struct shard *s = shard_of(h);
    uint32_t seq = (uint32_t)f->racing;
    shard_lock(s);
    struct flight *fl = f->flight >= 0 ? &s->fl[f->flight] : NULL;
    if (fl && flight_tell(fl, space, value, seq, FL_OTHER)) {
        shard_unlock(s); /* still in flight: its owner drops it */
        return 0;
    }
    /* the free we raced was done by the driver too (its slot not claimed
     * since): ours freed what the driver had given that address since,
     * perhaps the record at the key now, perhaps one made after ours and
     * not yet in the table. Which, only the driver can say: the caller asks
     * it, and gmg_track_drop_dead settles. */
    int first_done = fl && __atomic_load_n(&fl->state, __ATOMIC_ACQUIRE) == FL_DONE && fl->value == value &&
                     fl->space == space && fl->seq == seq;
    struct gmg_alloc *a = find_locked(s, space, value, h);
    if (a && a->seq != seq && first_done && space != GMG_SPACE_VMM) {
        if (suspect)
            *suspect = a->seq;
        shard_unlock(s);
        return GMG_RACING_CHECK;
    } else if (!a || a->seq != seq) {
        a = NULL; /* gone, or the key is a newer allocation's now */
    } else if (a->freeing) {
        a->freed_by_other = 1; /* the thread that began drops it */
        a = NULL;
    } else {
        del_locked(s, a); /* the first free failed and ours freed it */
        gone_locked(s, a, out);
    }
    shard_unlock(s);
    return a != NULL;
}

int gmg_track_drop_dead(enum gmg_space space, uint64_t value, uint32_t seq, uint32_t ctx, struct gmg_gone *out)
{
    uint64_t h = key_hash(value, space);
    struct shard *s = shard_of(h);
    shard_lock(s);
    struct gmg_alloc *a = find_locked(s, space, value, h);
    if (a && a->seq == seq && a->ctx == ctx && a->freeing) {
        a->freed_by_other = 1; /* the thread that began freeing it drops it */
        a = NULL;
    } else if (a && a->seq == seq && a->ctx == ctx) {
        del_locked(s, a);
        gone_locked(s, a, out);
    } else {
        a = NULL; /* gone meanwhile, or a newer allocation's: alive */
        for (int i = 0; i < FLIGHTS; i++)
            if (s->fl[i].ctx == ctx && flight_tell(&s->fl[i], space, value, seq, FL_OTHER))
                break; /* in flight: its owner drops it */
    }
    shard_unlock(s);
    return a != NULL;
}

/* Find a VMM handle's record under its shard's lock; `s` is set. */
static struct gmg_alloc *vmm_locked(uint64_t handle, struct shard **s)
{
    uint64_t h = key_hash(handle, GMG_SPACE_VMM);
    *s = shard_of(h);
    shard_lock(*s);
    struct gmg_alloc *a = find_locked(*s, GMG_SPACE_VMM, handle, h);
    return a && a->has_aux ? a : NULL; /* a handle's record always has its mapping count */
}

int gmg_track_vmm_mapped(uint64_t handle, uint64_t extent)
{
    struct shard *s;
    struct gmg_alloc *a = vmm_locked(handle, &s);
    if (a) {
        a->aux[0]++;
        if (!a->counted && extent > a->size) {
            /* the live totals hold the size it was added with, and its
             * removal takes its size now: move them with it (the totals
             * its add made are never freed, so the add back finds them) */
            live_change(s, a, -1);
            a->size = extent;
            live_change(s, a, 1);
        }
    }
    shard_unlock(s);
    return a != NULL;
}

int gmg_track_vmm_is_mapped(uint64_t handle)
{
    struct shard *s;
    struct gmg_alloc *a = vmm_locked(handle, &s);
    int mapped = a && a->aux[0] > 0;
    shard_unlock(s);
    return mapped;
}

int gmg_track_vmm_unmapped(uint64_t handle, struct gmg_gone *out)
{
    struct shard *s;
    struct gmg_alloc *a = vmm_locked(handle, &s);
    if (a && a->aux[0] > 0 && --a->aux[0] == 0 && a->released && !a->freeing) {
        del_locked(s, a);
        gone_locked(s, a, out);
    } else {
        a = NULL;
    }
    shard_unlock(s);
    return a != NULL;
}

int gmg_track_vmm_released(uint64_t handle, struct gmg_gone *out)
{
    struct shard *s;
    struct gmg_alloc *a = vmm_locked(handle, &s);
    if (a && !a->freeing && a->released && a->aux[0] > 0)
        a->aux[0]--; /* the handle's own reference went before: this was a retain's */
    if (a && !a->freeing && a->aux[0] == 0) {
        del_locked(s, a); /* the last mapping went meanwhile */
        gone_locked(s, a, out);
    } else {
        if (a)
            a->released = 1;
        a = NULL;
    }
    shard_unlock(s);
    return a != NULL;
}

int gmg_track_lookup(enum gmg_space space, uint64_t value, struct gmg_alloc *out, uint64_t *aux)
{
    uint64_t h = key_hash(value, space);
    struct shard *s = shard_of(h);
    shard_lock(s);
    struct gmg_alloc *a = find_locked(s, space, value, h);
    if (a && out)
        *out = *a; /* without aux */
    if (a && aux)
        *aux = a->has_aux ? a->aux[0] : 0;
    shard_unlock(s);
    return a != NULL;
}

size_t gmg_track_remove_range(enum gmg_space space, uint64_t lo, uint64_t len, const uint64_t *aux,
                              void (*fn)(const struct gmg_gone *, void *), void *arg)
{
    unbias_all();
    size_t n = 0;
    for (int i = 0; i < SHARDS; i++) {
        struct shard *s = &shards[i];
        struct gmg_alloc *a, *tmp;
        struct gmg_gone buf[64];
        size_t k;
        do { /* at most 64 a time: fn runs unlocked (it may call the table) */
            k = 0;
            shard_lock(s);
            HASH_ITER(hh, s->head, a, tmp) {
                if (k < 64 && a->space == space && a->value >= lo && a->value - lo < len && !a->freeing &&
                    (!aux || (a->has_aux && a->aux[0] == *aux))) {
                    del_locked(s, a);
                    gone_locked(s, a, &buf[k++]);
                }
            }
            shard_unlock(s);
            for (size_t j = 0; j < k; j++)
                fn(&buf[j], arg);
            n += k;
        } while (k == 64);
    }
    return n;
}

static int reclaimable_family(int family)
{
    switch (family) {
    case GMG_FAM_LINEAR: case GMG_FAM_PITCH: case GMG_FAM_MANAGED: case GMG_FAM_ASYNC:
    case GMG_FAM_ARRAY: case GMG_FAM_MIPMAP: case GMG_FAM_GRAPH:
    case GMG_FAM_HOST: case GMG_FAM_HOST_REGISTER: case GMG_FAM_NVTX_REGION:
        /* pinned host memory and registrations go with their context, as an
           H100's driver showed (docs/gpu-validation.md); cuMemCreate handles stay */
        return 1;
    default:
        return 0;
    }
}

static int reclaimable(const struct gmg_alloc *a)
{
    return a->space && reclaimable_family(a->family); /* space 0: the sentinel */
}

static void reclaimed_push(struct gmg_alloc *a)
{
    pthread_mutex_lock(&reclaimed_mu);
    if (reclaimed_n == reclaimed_cap) {
        size_t cap = reclaimed_cap ? reclaimed_cap * 2 : 64;
        struct gmg_alloc **p = realloc(reclaimed, cap * sizeof *p);
        if (!p) { /* out of memory: the record is lost (its shard's pool never has it back) */
            pthread_mutex_unlock(&reclaimed_mu);
            __atomic_fetch_add(&unlisted_allocs, 1, __ATOMIC_RELAXED);
            __atomic_fetch_add(&unlisted_bytes, a->size, __ATOMIC_RELAXED);
            return;
        }
        reclaimed = p;
        reclaimed_cap = cap;
    }
    reclaimed[reclaimed_n++] = a;
    pthread_mutex_unlock(&reclaimed_mu);
}

void gmg_track_reclaimed_add(struct gmg_alloc *a)
{
    a->freeing = 0;
    reclaimed_push(a);
}

size_t gmg_track_reclaim_ctx(uint32_t ctx, void (*fn)(const struct gmg_alloc *, void *), void *arg)
{
    unbias_all();
    size_t n = 0;
    for (int i = 0; i < SHARDS; i++) {
        struct shard *s = &shards[i];
        struct gmg_alloc *a, *tmp, *out = NULL;
        shard_lock(s);
        for (int k = 0; k < FLIGHTS; k++) { /* frees in flight: their owners settle */
            struct flight *fl = &s->fl[k];
            if (fl->ctx == ctx && reclaimable_family(fl->family))
                flight_mark(fl, FL_TORN);
        }
        HASH_ITER(hh, s->head, a, tmp) {
            if (a->ctx == ctx && reclaimable(a) && a->freeing) {
                a->torn_down = 1; /* its freeing thread settles it */
            } else if (a->ctx == ctx && reclaimable(a)) {
                del_locked(s, a);
                a->hh.next = out;
                out = a;
            }
        }
        shard_unlock(s);
        while (out) {
            struct gmg_alloc *next = out->hh.next;
            if (fn)
                fn(out, arg);
            reclaimed_push(out);
            out = next;
            n++;
        }
    }
    return n;
}

/* Each shard's sequence number when the last kept marking walk passed it,
 * and when the last marking walk did: the records a walk marked have seq
 * in (kept, walked], modulo 2^32. Under the reports' lock (track.h). */
static uint32_t marks_kept[SHARDS], marks_walked[SHARDS];

void gmg_track_walk(int mark, gmg_walk_fn fn, void *arg)
{
    unbias_all();
    for (int i = 0; i < SHARDS; i++) {
        struct shard *s = &shards[i];
        shard_lock(s);
        if (mark)
            marks_walked[i] = s->seq;
        for (struct gmg_alloc *a = s->head; a; a = a->hh.next) {
            if (!a->space)
                continue; /* the sentinel */
            int fresh = !a->seen;
            if (mark)
                a->seen = 1;
            fn(a, fresh, arg);
        }
        shard_unlock(s);
    }
}

void gmg_track_marks_keep(void)
{
    memcpy(marks_kept, marks_walked, sizeof marks_kept);
}

void gmg_track_marks_undo(void)
{
    unbias_all();
    for (int i = 0; i < SHARDS; i++) {
        struct shard *s = &shards[i];
        uint32_t span = marks_walked[i] - marks_kept[i];
        if (!span)
            continue; /* nothing made here since the last kept walk */
        shard_lock(s);
        for (struct gmg_alloc *a = s->head; a; a = a->hh.next)
            if (a->space && a->seen && a->seq - marks_kept[i] - 1 < span)
                a->seen = 0;
        shard_unlock(s);
    }
    memcpy(marks_walked, marks_kept, sizeof marks_walked);
}

_Static_assert(GMG_TRACK_SHARDS == SHARDS, "a mark holds each shard's number");

void gmg_track_mark(struct gmg_track_mark *m)
{
    unbias_all();
    for (int i = 0; i < SHARDS; i++) {
        shard_lock(&shards[i]);
        m->seq[i] = shards[i].seq;
        shard_unlock(&shards[i]);
    }
}

void gmg_track_walk_since(const struct gmg_track_mark *m, gmg_walk_fn fn, void *arg)
{
    unbias_all();
    for (int i = 0; i < SHARDS; i++) {
        struct shard *s = &shards[i];
        shard_lock(s);
        uint32_t span = s->seq - m->seq[i];
        for (struct gmg_alloc *a = span ? s->head : NULL; a; a = a->hh.next)
            if (a->space && a->seq - m->seq[i] - 1 < span)
                fn(a, !a->seen, arg);
        shard_unlock(s);
    }
}

void gmg_track_reclaimed_walk(gmg_walk_fn fn, void *arg)
{
    pthread_mutex_lock(&reclaimed_mu);
    for (size_t k = 0; k < reclaimed_n; k++)
        fn(reclaimed[k], 0, arg);
    pthread_mutex_unlock(&reclaimed_mu);
}

struct live_acc { int device, family; uint64_t bytes, count; };

void gmg_track_live_each(gmg_live_fn fn, void *arg)
{
    /* stack 0: the shards' totals, summed per (device, family) */
    struct live_acc acc[64], *v = acc;
    size_t n = 0, cap = sizeof acc / sizeof acc[0];
    for (int i = 0; i < SHARDS; i++)
        for (struct zero_total *z = __atomic_load_n(&shards[i].zero, __ATOMIC_ACQUIRE); z; z = z->next) {
            size_t k = 0;
            while (k < n && (v[k].device != z->device || v[k].family != z->family))
                k++;
            if (k == n) {
                if (n == cap) {
                    struct live_acc *nv = malloc(2 * cap * sizeof *nv);
                    if (!nv)
                        continue;
                    memcpy(nv, v, n * sizeof *v);
                    if (v != acc)
                        free(v);
                    v = nv;
                    cap *= 2;
                }
                v[n++] = (struct live_acc){ z->device, z->family, 0, 0 };
            }
            v[k].bytes += __atomic_load_n(&z->bytes, __ATOMIC_RELAXED);
            v[k].count += __atomic_load_n(&z->count, __ATOMIC_RELAXED);
        }
    for (size_t k = 0; k < n; k++)
        if (v[k].count)
            fn(0, v[k].device, v[k].family, v[k].bytes, v[k].count, arg);
    if (v != acc)
        free(v);
    gmg_stack_live_each(fn, arg);
}

void gmg_track_peak_each(int device, uint64_t gen, gmg_live_fn fn, void *arg)
{
    /* stack 0: the shards' totals (a list that only grows), each read by
     * its sequence count: never under the shard's lock, which an allocation
     * holds while it may wait for the device's peak lock, held here */
    uint64_t by_family[GMG_FAM_COUNT][2];
    memset(by_family, 0, sizeof by_family);
    for (int i = 0; i < SHARDS; i++) {
        for (struct zero_total *z = __atomic_load_n(&shards[i].zero, __ATOMIC_ACQUIRE); z; z = z->next) {
            if (z->device != device || z->family < 0 || z->family >= GMG_FAM_COUNT)
                continue;
            uint64_t bytes, count;
            gmg_peak_slot_at_serial(&z->peak, gen, &bytes, &count);
            by_family[z->family][0] += bytes;
            by_family[z->family][1] += count;
        }
    }
    for (int f = 0; f < GMG_FAM_COUNT; f++)
        if (by_family[f][1])
            fn(0, device, f, by_family[f][0], by_family[f][1], arg);
    gmg_stack_peak_each(device, gen, fn, arg);
}

void gmg_track_lost(struct gmg_track_lost *out)
{
    out->untracked_allocs = __atomic_load_n(&untracked_allocs, __ATOMIC_RELAXED);
    out->untracked_bytes = __atomic_load_n(&untracked_bytes, __ATOMIC_RELAXED);
    out->unlisted_allocs = __atomic_load_n(&unlisted_allocs, __ATOMIC_RELAXED);
    out->unlisted_bytes = __atomic_load_n(&unlisted_bytes, __ATOMIC_RELAXED);
    for (int f = 0; f < GMG_FAM_COUNT; f++)
        out->untracked_by_family[f] = __atomic_load_n(&untracked_fam[f], __ATOMIC_RELAXED);
}

size_t gmg_track_count(void)
{
    size_t n = 0;
    for (int i = 0; i < SHARDS; i++)
        n += __atomic_load_n(&shards[i].count, __ATOMIC_RELAXED);
    return n;
}

void gmg_track_atfork_child(void)
{
    /* Only the forking thread survives, and another thread may have been
     * inside any shard, half way through a uthash update. The child wants
     * an empty table anyway: it abandons the parent's records (copies the
     * child never touches, so they cost no memory) without walking them,
     * and starts every lock afresh. Nothing is locked across fork, so the
     * parent's fork never waits on the table. */
    for (int i = 0; i < SHARDS; i++) {
        memset(&shards[i], 0, sizeof shards[i]); /* lock, table, pool, flights */
        gmg_bias_forget(&shards[i].bias);        /* its owner may be a thread the child has not */
    }
    pthread_mutex_init(&reclaimed_mu, NULL);
    reclaimed = NULL;
    reclaimed_n = reclaimed_cap = 0;
    untracked_allocs = untracked_bytes = unlisted_allocs = unlisted_bytes = 0;
    memset(untracked_fam, 0, sizeof untracked_fam);
    untracked_said = 0;
    memset(marks_kept, 0, sizeof marks_kept); /* the shards' numbers start again */
    memset(marks_walked, 0, sizeof marks_walked);
    gmg_peak_atfork_child(); /* nothing tracked: no peak either */
}
