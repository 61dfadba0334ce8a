/*
 * test_track.c - core/track.c's frees, step by step, on the real table
 * (track.c, record.c, base/lock.c linked in; the depot and the quota's
 * counters stubbed): frees in flight, the fallback to marking in the table
 * when a shard's flight slots are all taken, racing frees in either order,
 * a context torn down during a free, an address the driver hands out again
 * while its free is in flight, and the spare records a free hands back
 * (reused by the thread, on the pool's returned stack, an exiting thread's
 * given to others), and keys taken out lately, inserted again without a
 * look for a stale record, yet found stale once back in the table (a
 * refused free, a second insert). After each case the table's count and the live totals
 * are checked against what must be live. Last, the shards' uthash tables
 * cannot grow (aligned_alloc, which track.c makes them with, fails here on
 * demand): inserts are refused one by one, the program lives on (uthash's
 * default would exit(-1)), and the table stays exact. Then contexts get
 * their indices with no memory to be had (calloc fails here on demand: the
 * first table is static), a shard's records when no chunk over 4 KiB can
 * be had (malloc fails on demand), and a dump's marks undone and kept.
 * Last, with owner-biased shards (base/bias.h): three threads take turns
 * at one shard in bursts long enough for its bias to be given back, then
 * all at once, beside a thread that takes it at random moments: every
 * insert and removal kept, and the bias given back.
 * Prints "track: N checks" and exits 0, or names each failed check and
 * exits 1.
 */
#define _GNU_SOURCE
#include "core/track.h"
#include "base/bias.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* track.c makes its tables with aligned_alloc; this one, the program's own,
 * is found first, and fails while `no_tables` is set. */
static int no_tables;
void *aligned_alloc(size_t align, size_t size)
{
    void *p;
    if (__atomic_load_n(&no_tables, __ATOMIC_RELAXED)) {
        errno = ENOMEM;
        return NULL;
    }
    return posix_memalign(&p, align, size) == 0 ? p : NULL;
}

/* record.c grows its context table with calloc: this one, the program's
 * own, fails while `no_calloc` is set, and is malloc and memset otherwise. */
static int no_calloc;
void *calloc(size_t n, size_t size)
{
    size_t bytes;
    if (__atomic_load_n(&no_calloc, __ATOMIC_RELAXED) || __builtin_mul_overflow(n, size, &bytes)) {
        errno = ENOMEM;
        return NULL;
    }
    void *p = malloc(bytes);
    return p ? memset(p, 0, bytes) : NULL;
}

/* record.c carves records from chunks it mallocs, 4 KiB growing to 256
 * KiB: this malloc, the program's own, fails for more than 4 KiB while
 * `no_big` is set. Not under a sanitizer, whose allocator must serve every
 * malloc of the process (its free would not know glibc's blocks). */
#ifndef __has_feature
#define __has_feature(x) 0
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || __has_feature(address_sanitizer) || \
    __has_feature(thread_sanitizer)
#define OWN_MALLOC 0
#else
#define OWN_MALLOC 1
extern void *__libc_malloc(size_t);
static int no_big;
void *malloc(size_t size)
{
    if (__atomic_load_n(&no_big, __ATOMIC_RELAXED) && size > 4096) {
        errno = ENOMEM;
        return NULL;
    }
    return __libc_malloc(size);
}
#endif

/* ---- stubs of what track.c and record.c call above them ---- */
/* the depot's live totals: out of memory for new ones while no_totals is set */
static int no_totals;
static long stack_live; /* allocations counted on stacks other than 0 */
int gmg_stack_live_add(uint32_t stack, int device, int family, uint64_t bytes, int sign, int counted)
{
    (void)stack; (void)device; (void)family; (void)bytes; (void)counted;
    if (sign > 0 && no_totals)
        return -1;
    stack_live += sign > 0 ? 1 : -1;
    return 0;
}
void gmg_stack_live_each(void (*fn)(uint32_t, int, int, uint64_t, uint64_t, void *), void *arg)
{
    (void)fn; (void)arg;
}
void gmg_stack_peak_each(int device, uint64_t gen, void (*fn)(uint32_t, int, int, uint64_t, uint64_t, void *), void *arg)
{
    (void)device; (void)gen; (void)fn; (void)arg;
}
void gmg_quota_count_alloc(int dev) { (void)dev; }
uint64_t gmg_quota_allocs(int dev) { (void)dev; return 0; }

static int checks, failed;
#define CHECK(cond, what) do { checks++; if (!(cond)) { failed++; printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, what); } } while (0)

/* gmg_track_insert's answer for a record of 100 bytes at key */
static int try_insert(uint64_t key, uint32_t ctx)
{
    struct gmg_alloc t;
    memset(&t, 0, sizeof t);
    t.value = key;
    t.space = GMG_SPACE_DEVPTR;
    t.device = 0;
    t.family = GMG_FAM_LINEAR;
    t.counted = 1;
    t.size = 100;
    t.ctx = ctx;
    struct gmg_gone stale;
    return gmg_track_insert(&t, 0, &stale);
}

static void insert(uint64_t key, uint32_t ctx)
{
    CHECK(try_insert(key, ctx) == 0, "insert of a key not live");
}

static uint32_t shard_of_key(uint64_t key)
{
    struct gmg_freeing f;
    gmg_track_free_begin(GMG_SPACE_DEVPTR, key, &f); /* a miss changes nothing */
    return f.shard;
}

static void live_sum(uint32_t stack, int device, int family, uint64_t bytes, uint64_t count, void *arg)
{
    (void)stack; (void)device; (void)family;
    uint64_t *v = arg;
    v[0] += bytes;
    v[1] += count;
}

static void count_fresh(const struct gmg_alloc *a, int fresh, void *arg)
{
    (void)a;
    *(int *)arg += fresh;
}

/* How many records a walk finds fresh (no kept marking walk listed them). */
static int fresh_in_walk(int mark)
{
    int n = 0;
    gmg_track_walk(mark, count_fresh, &n);
    return n;
}

/* The table holds exactly n records of 100 bytes, as its count and its
 * live totals say. */
static void expect_live(size_t n, const char *when)
{
    uint64_t v[2] = { 0, 0 };
    gmg_track_live_each(live_sum, v);
    char what[160];
    snprintf(what, sizeof what, "%s: %zu live (count %zu, totals %llu bytes in %llu)", when, n, gmg_track_count(),
             (unsigned long long)v[0], (unsigned long long)v[1]);
    CHECK(gmg_track_count() == n && v[0] == 100 * n && v[1] == n, what);
}

/* 15. threads taking turns at one shard (see the top) */
#define TURN_THREADS 3
#define TURN_KEYS 200
static uint64_t turn_keys[TURN_THREADS + 1][TURN_KEYS];
static int turn, turns_together, turn_failures;
extern unsigned gmg_track_test_regains(uint32_t shard);

static void burst(int me, int n)
{
    struct gmg_gone g;
    for (int i = 0; i < n; i++)
        if (try_insert(turn_keys[me][i], 1) != 0)
            __atomic_add_fetch(&turn_failures, 1, __ATOMIC_RELAXED);
    for (int i = n - 1; i >= 0; i--)
        if (gmg_track_remove(GMG_SPACE_DEVPTR, turn_keys[me][i], &g) != 1 || g.value != turn_keys[me][i])
            __atomic_add_fetch(&turn_failures, 1, __ATOMIC_RELAXED);
}

static void *turn_taker(void *arg)
{
    int me = (int)(long)arg;
    unsigned seed = 31u + (unsigned)me;
    for (int t = 0; t < 40; t++) {
        while (__atomic_load_n(&turn, __ATOMIC_ACQUIRE) % TURN_THREADS != me)
            sched_yield();
        for (int b = 0; b < 10; b++)
            burst(me, 1 + (int)(rand_r(&seed) % TURN_KEYS));
        __atomic_add_fetch(&turn, 1, __ATOMIC_RELEASE);
    }
    __atomic_add_fetch(&turns_together, 1, __ATOMIC_RELEASE);
    while (__atomic_load_n(&turns_together, __ATOMIC_ACQUIRE) < TURN_THREADS)
        sched_yield();
    for (int b = 0; b < 200; b++) /* all at once */
        burst(me, 1 + (int)(rand_r(&seed) % 20));
    return NULL;
}

static int turns_done;
static void *turn_intruder(void *arg)
{
    (void)arg;
    unsigned seed = 7;
    while (!__atomic_load_n(&turns_done, __ATOMIC_ACQUIRE)) {
        for (volatile int i = 0, n = (int)(rand_r(&seed) % 20000); i < n; i++)
            ;
        burst(TURN_THREADS, 1);
    }
    return NULL;
}

static void taking_turns(uint32_t s0)
{
    gmg_bias_start();
    int n = 0;
    for (uint64_t k = 0xA000000000ull; n < (TURN_THREADS + 1) * TURN_KEYS; k += 0x200)
        if (shard_of_key(k) == s0) {
            turn_keys[n / TURN_KEYS][n % TURN_KEYS] = k;
            n++;
        }
    pthread_t t[TURN_THREADS], x;
    for (int i = 0; i < TURN_THREADS; i++)
        pthread_create(&t[i], NULL, turn_taker, (void *)(long)i);
    pthread_create(&x, NULL, turn_intruder, NULL);
    for (int i = 0; i < TURN_THREADS; i++)
        pthread_join(t[i], NULL);
    __atomic_store_n(&turns_done, 1, __ATOMIC_RELEASE);
    pthread_join(x, NULL);
    CHECK(turn_failures == 0, "threads taking turns at a shard: every insert and removal done");
    expect_live(0, "after threads took turns at a shard");
    char what[96];
    snprintf(what, sizeof what, "the shard's bias given back to threads taking turns (%u times)",
             gmg_track_test_regains(s0));
    CHECK(gmg_track_test_regains(s0) >= 2, what);
}

static struct gmg_alloc *exiting_record;

static void *exiting_thread(void *arg)
{
    uint64_t key = *(uint64_t *)arg;
    insert(key, 1);
    struct gmg_freeing f;
    struct gmg_gone g;
    gmg_track_free_begin(GMG_SPACE_DEVPTR, key, &f);
    exiting_record = f.a;
    CHECK(f.a && f.flight >= 0, "the exiting thread's free is in flight");
    CHECK(gmg_track_free_end(&f, 1, &g) == GMG_FREE_DROPPED, "the exiting thread's free drops");
    return NULL; /* its spare goes to the orphans */
}

int main(void)
{
    /* keys of one shard, and of a shard nothing else uses */
    uint64_t same[64];
    int n = 0;
    uint32_t s0 = shard_of_key(0x7000000000ull);
    for (uint64_t k = 0x7000000000ull; n < 64; k += 0x200)
        if (shard_of_key(k) == s0)
            same[n++] = k;
    uint64_t spare_key = 0, other = 0;
    for (uint64_t k = 0x9000000000ull; !other; k += 0x200) {
        uint32_t s = shard_of_key(k);
        if (s != s0 && !spare_key)
            spare_key = k;
        else if (s != s0 && s != shard_of_key(spare_key))
            other = k;
    }
    struct gmg_freeing f[8], b;
    struct gmg_gone g;

    /* 1. five frees in flight in one shard: four slots, the fifth marked in the table */
    for (int i = 0; i < 5; i++)
        insert(same[i], 1);
    for (int i = 0; i < 5; i++) {
        gmg_track_free_begin(GMG_SPACE_DEVPTR, same[i], &f[i]);
        CHECK(f[i].a != NULL && f[i].shard == s0, "a live record is taken for its free");
    }
    for (int i = 0; i < 4; i++)
        CHECK(f[i].flight >= 0, "the first four frees are in flight slots");
    CHECK(f[4].flight == -1, "the fifth is marked in the table (no free slot)");
    expect_live(1, "four in flight, one marked");
    gmg_track_free_begin(GMG_SPACE_DEVPTR, same[4], &b);
    CHECK(!b.a && b.racing == f[4].a->seq && b.flight == -1, "a racing free of the marked one sees its seq");
    gmg_track_free_begin(GMG_SPACE_DEVPTR, same[2], &b);
    CHECK(!b.a && b.racing && b.flight == f[2].flight, "a racing free of one in flight finds its slot");
    for (int i = 0; i < 5; i++)
        CHECK(gmg_track_free_end(&f[i], 1, &g) == GMG_FREE_DROPPED && g.value == same[i] && g.size == 100,
              "each free the driver did drops its record");
    expect_live(0, "all five freed");

    /* 2. racing, the owner's driver call fails, the racer's succeeds while the owner is still in flight */
    insert(same[0], 1);
    gmg_track_free_begin(GMG_SPACE_DEVPTR, same[0], &f[0]);
    gmg_track_free_begin(GMG_SPACE_DEVPTR, same[0], &b);
    CHECK(f[0].flight >= 0 && !b.a && b.racing, "owner in flight, racer sees it");
    CHECK(gmg_track_free_racing(GMG_SPACE_DEVPTR, same[0], &b, &g, NULL) == 0, "the racer tells the owner");
    CHECK(gmg_track_free_end(&f[0], 0, &g) == GMG_FREE_DROPPED, "the owner drops what the racer freed");
    expect_live(0, "racer freed, owner failed");

    /* 3. the owner fails first (live again), then the racer's free succeeds */
    insert(same[0], 1);
    gmg_track_free_begin(GMG_SPACE_DEVPTR, same[0], &f[0]);
    uint32_t seq = f[0].a->seq;
    gmg_track_free_begin(GMG_SPACE_DEVPTR, same[0], &b);
    CHECK(gmg_track_free_end(&f[0], 0, &g) == GMG_FREE_KEPT, "a refused free: live again");
    expect_live(1, "refused free");
    struct gmg_alloc copy;
    CHECK(gmg_track_lookup(GMG_SPACE_DEVPTR, same[0], &copy, NULL) && copy.seq == seq && !copy.freeing,
          "back in the table with its sequence number");
    CHECK(gmg_track_free_racing(GMG_SPACE_DEVPTR, same[0], &b, &g, NULL) == 1 && g.value == same[0],
          "the racer's success drops it from the table");
    expect_live(0, "owner failed, then racer freed");

    /* 4. a refused free whose racer also failed: live, and freed later */
    insert(same[0], 1);
    gmg_track_free_begin(GMG_SPACE_DEVPTR, same[0], &f[0]);
    gmg_track_free_begin(GMG_SPACE_DEVPTR, same[0], &b);
    CHECK(gmg_track_free_end(&f[0], 0, &g) == GMG_FREE_KEPT, "both refused: live");
    gmg_track_free_begin(GMG_SPACE_DEVPTR, same[0], &f[0]);
    CHECK(f[0].a && gmg_track_free_end(&f[0], 1, &g) == GMG_FREE_DROPPED, "freed later");
    expect_live(0, "refused, then freed");

    /* 5. a context torn down during a free: the teardown freed it if the driver refuses ... */
    insert(same[1], 9);
    insert(same[2], 8);
    gmg_track_free_begin(GMG_SPACE_DEVPTR, same[1], &f[1]);
    CHECK(gmg_track_reclaim_ctx(9, NULL, NULL) == 0, "nothing of context 9 left in the table");
    CHECK(gmg_track_free_end(&f[1], 0, &g) == GMG_FREE_RECLAIMED, "refused after the teardown: reclaimed");
    gmg_track_reclaimed_add(f[1].a);
    expect_live(1, "one reclaimed, one of another context live");
    /* ... and the program freed it if the driver did */
    insert(same[3], 9);
    gmg_track_free_begin(GMG_SPACE_DEVPTR, same[3], &f[3]);
    gmg_track_reclaim_ctx(9, NULL, NULL);
    CHECK(gmg_track_free_end(&f[3], 1, &g) == GMG_FREE_DROPPED, "freed by the driver: dropped, not reclaimed");
    gmg_track_free_begin(GMG_SPACE_DEVPTR, same[2], &f[2]);
    CHECK(gmg_track_free_end(&f[2], 1, &g) == GMG_FREE_DROPPED, "context 8's record untouched, freed");
    expect_live(0, "teardown cases");

    /* 6. the driver hands the address out again while its free is in flight */
    insert(same[0], 1);
    gmg_track_free_begin(GMG_SPACE_DEVPTR, same[0], &f[0]);
    insert(same[0], 1); /* not live in the table: a plain insert */
    CHECK(gmg_track_free_end(&f[0], 0, &g) == GMG_FREE_DROPPED, "refused, yet reused: the old record goes");
    expect_live(1, "the new allocation at the reused address");
    gmg_track_free_begin(GMG_SPACE_DEVPTR, same[0], &f[0]);
    CHECK(f[0].a && gmg_track_free_end(&f[0], 1, &g) == GMG_FREE_DROPPED, "the new one freed");
    expect_live(0, "reuse case");

    /* 7. spares: a freed record is the thread's next; a second goes on the returned stack */
    insert(same[0], 1);
    insert(same[1], 1);
    gmg_track_free_begin(GMG_SPACE_DEVPTR, same[0], &f[0]);
    gmg_track_free_begin(GMG_SPACE_DEVPTR, same[1], &f[1]);
    struct gmg_alloc *r0 = f[0].a, *r1 = f[1].a;
    gmg_track_free_end(&f[0], 1, &g);
    gmg_track_free_end(&f[1], 1, &g);
    insert(same[5], 1);
    gmg_track_free_begin(GMG_SPACE_DEVPTR, same[5], &f[5]);
    CHECK(f[5].a == r0, "the next insert takes the thread's spare");
    CHECK(gmg_track_free_end(&f[5], 1, &g) == GMG_FREE_DROPPED, "freed");
    /* r1 went on the shard's returned stack: an insert takes it once the
     * shard's free list (records dropped under the lock) is used up */
    int got = -1;
    struct gmg_freeing many[64];
    for (int i = 6; i < 64 && got < 0; i++) {
        insert(same[i], 1);
        gmg_track_free_begin(GMG_SPACE_DEVPTR, same[i], &many[i]);
        if (many[i].a == r1)
            got = i;
        gmg_track_free_end(&many[i], 0, &g); /* refused: stays live */
    }
    CHECK(got >= 0, "the record on the shard's returned stack is reused");
    for (int i = 6; i < 64 && i <= got; i++) {
        gmg_track_free_begin(GMG_SPACE_DEVPTR, same[i], &many[i]);
        CHECK(many[i].a && gmg_track_free_end(&many[i], 1, &g) == GMG_FREE_DROPPED, "freed");
    }
    expect_live(0, "spares");

    /* 8. an exiting thread's spare goes to the orphans, which another thread's pool takes */
    pthread_t t;
    pthread_create(&t, NULL, exiting_thread, &spare_key);
    pthread_join(t, NULL);
    insert(spare_key, 1); /* takes this thread's own spare (r0 again) */
    insert(other, 1);     /* a shard with nothing free: the orphan */
    gmg_track_free_begin(GMG_SPACE_DEVPTR, other, &f[7]);
    CHECK(f[7].a == exiting_record, "an exited thread's spare is reused, not lost");
    gmg_track_free_end(&f[7], 1, &g);
    gmg_track_free_begin(GMG_SPACE_DEVPTR, spare_key, &f[7]);
    gmg_track_free_end(&f[7], 1, &g);
    expect_live(0, "orphans");

    /* 9. a key never seen: neither owned nor racing */
    gmg_track_free_begin(GMG_SPACE_DEVPTR, 0x1234, &b);
    CHECK(!b.a && !b.racing && b.flight == -1, "an unknown free");

    /* 9b. keys taken out lately (the shard's gone slots) are inserted
     * without a look for a stale record; every way back into the table
     * clears that, so a key the driver hands out again while it is live
     * (a free we never saw) is still found stale. */
    struct gmg_gone gone;
    insert(same[0], 1);
    gmg_track_free_begin(GMG_SPACE_DEVPTR, same[0], &f[0]); /* out of the table */
    CHECK(gmg_track_free_end(&f[0], 0, &g) == GMG_FREE_KEPT, "a refused free: back in the table");
    CHECK(try_insert(same[0], 1) == 1, "handed out again after a refused free: the record back in the table is stale");
    expect_live(1, "refused free, then the same address again");
    CHECK(gmg_track_remove(GMG_SPACE_DEVPTR, same[0], &gone) == 1, "removed");
    CHECK(try_insert(same[0], 1) == 0, "a removed key: inserted, nothing stale");
    CHECK(try_insert(same[0], 1) == 1, "inserted again while live: stale");
    expect_live(1, "removed, then inserted twice");
    /* every key of one shard out (more than its slots: they overwrite one
     * another), then each in twice: the second always finds the first */
    for (int i = 1; i < 64; i++)
        insert(same[i], 1);
    for (int i = 0; i < 64; i++)
        CHECK(gmg_track_remove(GMG_SPACE_DEVPTR, same[i], &gone) == 1, "removed");
    int stale_found = 0;
    for (int i = 63; i >= 0; i--)
        stale_found += try_insert(same[i], 1) == 0 && try_insert(same[i], 1) == 1;
    CHECK(stale_found == 64, "64 keys out, each in twice: every second insert finds the first stale");
    expect_live(64, "64 keys of one shard in again");
    for (int i = 0; i < 64; i++)
        CHECK(gmg_track_remove(GMG_SPACE_DEVPTR, same[i], &gone) == 1, "removed");
    expect_live(0, "gone slots");

    /* 10. out of memory for the tables. First a shard whose table is made
     * (s0's, from case 1): keys enough that its buckets must double, which
     * they cannot; each is added all the same, to longer chains */
    enum { ONE_SHARD = 3000 };
    static uint64_t chained[ONE_SHARD];
    int nchained = 0;
    for (uint64_t k = 0xc00000000000ull; nchained < ONE_SHARD; k += 0x1000)
        if (shard_of_key(k) == s0)
            chained[nchained++] = k;
    size_t chained_in = 0;
    no_tables = 1;
    for (int i = 0; i < ONE_SHARD; i++)
        chained_in += try_insert(chained[i], 1) == 0;
    no_tables = 0;
    CHECK(chained_in == ONE_SHARD, "a shard whose buckets cannot double takes every insert");
    expect_live(ONE_SHARD, "inserts into longer chains");
    size_t chained_out = 0;
    for (int i = 0; i < ONE_SHARD; i++)
        chained_out += gmg_track_remove(GMG_SPACE_DEVPTR, chained[i], &g) == 1;
    CHECK(chained_out == ONE_SHARD, "each is found and removed");
    expect_live(0, "after removing them");

    /* then keys of every shard: those whose table was never made are refused */
    enum { MANY = 40000 };
    static uint64_t keys[MANY];
    static signed char got_in[MANY];
    size_t in = 0, refused = 0, odd = 0;
    no_tables = 1;
    for (int i = 0; i < MANY; i++) {
        keys[i] = 0xa00000000000ull + (uint64_t)i * 0x1000;
        int r = try_insert(keys[i], 1);
        got_in[i] = (signed char)r;
        in += r == 0;
        refused += r == -1;
        odd += r != 0 && r != -1;
    }
    no_tables = 0;
    char what[160];
    snprintf(what, sizeof what, "tables that cannot be made refuse some inserts (%zu of %d) and no more", refused, MANY);
    CHECK(refused > 0 && refused < MANY && odd == 0, what);
    expect_live(in, "inserts while the tables could not grow");
    size_t found = 0, wrong = 0;
    for (int i = 0; i < MANY; i++) {
        int r = gmg_track_remove(GMG_SPACE_DEVPTR, keys[i], &g);
        found += r == 1;
        wrong += r != (got_in[i] == 0);
    }
    CHECK(found == in && wrong == 0, "exactly the keys inserted are live");
    expect_live(0, "after removing them");
    size_t again = 0;
    for (int i = 0; i < MANY; i++) /* the tables grow again */
        again += try_insert(keys[i], 1) == 0;
    CHECK(again == MANY, "every insert once the tables can grow");
    expect_live(MANY, "inserts once the tables can grow");
    for (int i = 0; i < MANY; i++)
        gmg_track_remove(GMG_SPACE_DEVPTR, keys[i], &g);
    expect_live(0, "the end");

    /* 11. no memory for a new stack's live totals: the record is not added
     * either, so that its free never takes away what was never counted */
    struct gmg_alloc rec;
    memset(&rec, 0, sizeof rec);
    rec.value = 0xb00000000000ull;
    rec.space = GMG_SPACE_DEVPTR;
    rec.family = GMG_FAM_LINEAR;
    rec.size = 100;
    rec.stack = 7;
    size_t before = gmg_track_count();
    no_totals = 1;
    int r = gmg_track_insert(&rec, 0, &g);
    no_totals = 0;
    CHECK(r == -1 && gmg_track_count() == before && stack_live == 0, "a record without live totals is not added");
    CHECK(gmg_track_remove(GMG_SPACE_DEVPTR, rec.value, &g) == 0 && stack_live == 0,
          "its removal finds nothing and takes nothing away");
    CHECK(gmg_track_insert(&rec, 0, &g) == 0 && stack_live == 1, "added once the totals can be made");
    CHECK(gmg_track_remove(GMG_SPACE_DEVPTR, rec.value, &g) == 1 && stack_live == 0, "and removed");

    /* 12. contexts while no memory can be had: the first table needs none,
     * and when it cannot grow it fills to its last free slot (63 of 64);
     * every index stays distinct and found again */
    no_calloc = 1;
    uint32_t idx[80];
    int distinct = 1, indexed = 0;
    for (int i = 0; i < 80; i++) {
        idx[i] = gmg_ctx_index(0x5000 + 0x100 * (uintptr_t)i, 1);
        indexed += idx[i] != 0;
        for (int j = 0; j < i; j++)
            if (idx[i] && idx[i] == idx[j])
                distinct = 0;
    }
    CHECK(indexed == 63 && idx[0] && idx[62] && !idx[63] && !idx[79], "63 contexts indexed without memory, then none");
    CHECK(gmg_ctx_unindexed() == 17, "the 17 tries that found no room are counted, for reports");
    CHECK(distinct, "their indices are distinct");
    int kept = 1;
    for (int i = 0; i < 80; i++)
        kept &= gmg_ctx_index(0x5000 + 0x100 * (uintptr_t)i, 0) == idx[i];
    CHECK(kept, "each is found again (0 for those not indexed)");
    no_calloc = 0;
    for (int i = 63; i < 80; i++)
        idx[i] = gmg_ctx_index(0x5000 + 0x100 * (uintptr_t)i, 1);
    kept = 1;
    for (int i = 0; i < 80; i++) {
        kept &= idx[i] != 0 && gmg_ctx_index(0x5000 + 0x100 * (uintptr_t)i, 0) == idx[i];
        for (int j = 0; j < i; j++)
            kept &= idx[i] != idx[j];
    }
    CHECK(kept, "once memory is back the table grows: 80 distinct indices, the first 63 kept");

    /* 13. a shard's pool needs a new chunk, and no big one can be had: it
     * takes small ones, and nothing goes untracked */
    enum { POOLED = 3000 };
    static uint64_t pk[POOLED];
    uint32_t ps = shard_of_key(0xc00000000000ull);
    n = 0;
    for (uint64_t k = 0xc00000000000ull; n < POOLED; k += 0x200)
        if (shard_of_key(k) == ps)
            pk[n++] = k;
    for (int i = 0; i < 200; i++) /* the pool's chunks grow past 4 KiB */
        insert(pk[i], 1);
#if OWN_MALLOC
    struct gmg_track_lost lost0, lost1;
    gmg_track_lost(&lost0);
    no_big = 1;
    int pooled = 0;
    for (int i = 200; i < POOLED; i++)
        pooled += try_insert(pk[i], 1) == 0;
    no_big = 0;
    gmg_track_lost(&lost1);
    CHECK(pooled == POOLED - 200 && lost1.untracked_allocs == lost0.untracked_allocs,
          "with no chunk over 4 KiB to be had, every record is still kept");
#else
    for (int i = 200; i < POOLED; i++)
        insert(pk[i], 1);
#endif
    expect_live(POOLED, "records from small chunks");
    for (int i = 0; i < POOLED; i++)
        gmg_track_remove(GMG_SPACE_DEVPTR, pk[i], &g);
    expect_live(0, "after their removal");

    /* 14. a dump's marks undone (its report was lost): what it found fresh
     * is fresh again for the next; kept, it is not */
    for (int i = 0; i < 3; i++)
        insert(pk[i], 1);
    CHECK(fresh_in_walk(1) == 3, "a marking walk finds 3 fresh");
    CHECK(fresh_in_walk(0) == 0, "and marks them");
    gmg_track_marks_undo();
    CHECK(fresh_in_walk(1) == 3, "undone: the next walk finds the 3 fresh again");
    gmg_track_marks_keep();
    CHECK(fresh_in_walk(1) == 0, "kept: none fresh");
    gmg_track_marks_keep();
    insert(pk[3], 1);
    insert(pk[4], 1);
    CHECK(fresh_in_walk(1) == 2, "two made since are fresh");
    gmg_track_marks_undo();
    insert(pk[5], 1);
    CHECK(fresh_in_walk(1) == 3, "undone: those two and one made after are fresh");
    gmg_track_marks_keep();
    CHECK(fresh_in_walk(1) == 0, "kept: none fresh");
    gmg_track_marks_undo();
    CHECK(fresh_in_walk(0) == 0, "undoing a walk that marked nothing unmarks none of the kept");
    for (int i = 0; i < 6; i++)
        gmg_track_remove(GMG_SPACE_DEVPTR, pk[i], &g);
    expect_live(0, "after the marking walks");

    taking_turns(s0);

    printf("track: %d checks, %d failed\n", checks, failed);
    return failed != 0;
}
