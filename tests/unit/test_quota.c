/*
 * test_quota.c - the device's quota counter and its credits (core/quota.c):
 * a free leaves its bytes in the counter as credit in its CPU's slot, which
 * the next reservation there spends without writing the counter. Checked:
 * a thread's alloc+free pairs on one CPU leave the counter unwritten; used,
 * peak and refusals stay exact while credit is held elsewhere (credit never
 * makes a peak or a refusal); credit goes back past CREDIT_MAX, stays in its
 * slot when its thread exits, and is never kept under GPUMEM_ON_LIMIT=warn;
 * threads sharing a limit never see a refusal the bytes in use do not call
 * for, and never pass the limit; readings of used and peaks are one
 * moment's while other threads move credit (the races two reviews found).
 * Prints "quota: N checks, M failed"; exits 1 on a failed check.
 */
#define _GNU_SOURCE
#include "base/config.h"
#include "core/quota.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int checks, failed;

#define CHECK(cond, ...)                                          \
    do {                                                          \
        checks++;                                                 \
        if (!(cond)) {                                            \
            failed++;                                             \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);           \
            printf(__VA_ARGS__);                                  \
            printf("\n");                                         \
        }                                                         \
    } while (0)

#define MiB (1ull << 20)

/* Each case on a device of its own: a limit, once resolved on a device,
 * stays (as in a process, whose configuration never changes). */
static int D;

static const char *env_limit, *env_on_limit;
static const char *get(const char *name)
{
    if (strcmp(name, "GPUMEM_LIMIT") == 0)
        return env_limit;
    if (strcmp(name, "GPUMEM_ON_LIMIT") == 0)
        return env_on_limit;
    return NULL;
}

/* A fresh quota under this limit ("" for none) and GPUMEM_ON_LIMIT. */
static void configure(int dev, const char *limit, const char *on_limit)
{
    D = dev;
    char err[512];
    env_limit = limit && *limit ? limit : NULL;
    env_on_limit = on_limit;
    memset(&gmg_cfg, 0, sizeof gmg_cfg);
    if (gmg_config_parse(get, &gmg_cfg, err, sizeof err) != 0) {
        printf("config: %s\n", err);
        exit(1);
    }
    gmg_quota_reset();
}

/* An allocation the driver made: reserved, then committed (the peak). */
static int alloc(uint64_t bytes)
{
    int got = gmg_quota_reserve(D, bytes, NULL);
    if (got == 1) {
        gmg_quota_count_alloc(D);
        gmg_quota_commit();
    }
    return got;
}

static void release(uint64_t bytes)
{
    gmg_quota_release(D, bytes);
    gmg_quota_count_free(D);
}

/* Runs fn on a thread of its own that then waits, alive, until let_go. */
struct helper {
    pthread_t t;
    void (*fn)(void);
    pthread_barrier_t done, go;
};

static void *helper_main(void *arg)
{
    struct helper *h = arg;
    h->fn();
    pthread_barrier_wait(&h->done);
    pthread_barrier_wait(&h->go);
    return NULL;
}

static void helper_start(struct helper *h, void (*fn)(void))
{
    h->fn = fn;
    pthread_barrier_init(&h->done, NULL, 2);
    pthread_barrier_init(&h->go, NULL, 2);
    pthread_create(&h->t, NULL, helper_main, h);
    pthread_barrier_wait(&h->done);
}

static void helper_end(struct helper *h)
{
    pthread_barrier_wait(&h->go);
    pthread_join(h->t, NULL);
    pthread_barrier_destroy(&h->done);
    pthread_barrier_destroy(&h->go);
}

static void one_mib_pair(void)
{
    alloc(MiB);
    release(MiB);
}

/* This thread kept on one CPU, so that every credit it leaves is in the
 * slot its next reservation looks in (quota.c: credit slots per CPU). */
static cpu_set_t pinned_from;
static void pin(void)
{
    cpu_set_t one;
    sched_getaffinity(0, sizeof pinned_from, &pinned_from);
    CPU_ZERO(&one);
    CPU_SET(sched_getcpu() < 0 ? 0 : sched_getcpu(), &one);
    sched_setaffinity(0, sizeof one, &one);
}
static void unpin(void) { sched_setaffinity(0, sizeof pinned_from, &pinned_from); }

static void pairs_alone(void)
{
    configure(0, "", NULL);
    pin();
    CHECK(alloc(4096) == 1, "reserved");
    CHECK(gmg_quota_used(D) == 4096 && gmg_quota_counter(D) == 4096, "used %llu, counter %llu",
          (unsigned long long)gmg_quota_used(D), (unsigned long long)gmg_quota_counter(D));
    release(4096);
    CHECK(gmg_quota_used(D) == 0, "used after the free: %llu", (unsigned long long)gmg_quota_used(D));
    CHECK(gmg_quota_counter(D) == 4096, "the free's bytes stay in the counter as credit: %llu",
          (unsigned long long)gmg_quota_counter(D));
    int moved = 0;
    for (int i = 0; i < 1000; i++) {
        alloc(4096);
        moved |= gmg_quota_counter(D) != 4096 || gmg_quota_used(D) != 4096;
        release(4096);
        moved |= gmg_quota_counter(D) != 4096 || gmg_quota_used(D) != 0;
    }
    CHECK(!moved, "1,000 pairs of one thread leave the counter as it was (no shared write)");
    CHECK(gmg_quota_peak(D) == 4096, "peak %llu", (unsigned long long)gmg_quota_peak(D));
    CHECK(gmg_quota_allocs(D) == 1001 && gmg_quota_frees(D) == 1001, "counts %llu/%llu",
          (unsigned long long)gmg_quota_allocs(D), (unsigned long long)gmg_quota_frees(D));

    /* a reservation its credit does not cover: the counter takes it all,
     * the credit stays */
    CHECK(alloc(12288) == 1, "reserved 12 KiB");
    CHECK(gmg_quota_counter(D) == 16384 && gmg_quota_used(D) == 12288, "counter %llu, used %llu",
          (unsigned long long)gmg_quota_counter(D), (unsigned long long)gmg_quota_used(D));
    CHECK(gmg_quota_peak(D) == 12288, "peak %llu", (unsigned long long)gmg_quota_peak(D));
    release(12288);

    /* past CREDIT_MAX (64 MiB) the bytes go back at once */
    CHECK(alloc(100 * MiB) == 1, "reserved 100 MiB");
    release(100 * MiB);
    CHECK(gmg_quota_counter(D) <= 64 * MiB && gmg_quota_used(D) == 0, "counter %llu after a 100 MiB free",
          (unsigned long long)gmg_quota_counter(D));
    unpin();
}

static void peaks_across_threads(void)
{
    configure(1, "", NULL);
    struct helper h;
    helper_start(&h, one_mib_pair); /* its 1 MiB stays in the counter as its credit */
    CHECK(gmg_quota_used(D) == 0 && gmg_quota_counter(D) == MiB, "used %llu, counter %llu",
          (unsigned long long)gmg_quota_used(D), (unsigned long long)gmg_quota_counter(D));
    CHECK(alloc(MiB) == 1, "reserved");
    CHECK(gmg_quota_peak(D) == MiB, "another thread's credit is no peak: %llu (want 1 MiB)",
          (unsigned long long)gmg_quota_peak(D));
    CHECK(alloc(MiB) == 1, "reserved");
    CHECK(gmg_quota_peak(D) == 2 * MiB && gmg_quota_used(D) == 2 * MiB, "peak %llu, used %llu",
          (unsigned long long)gmg_quota_peak(D), (unsigned long long)gmg_quota_used(D));
    release(MiB);
    release(MiB);
    helper_end(&h);
    CHECK(gmg_quota_used(D) == 0, "used %llu", (unsigned long long)gmg_quota_used(D));
    /* the helper exited: its credit stays in its CPU's slot (the counter
     * holds what the threads freed, less what the slots they shared spent) */
    CHECK(gmg_quota_counter(D) >= 2 * MiB && gmg_quota_counter(D) <= 3 * MiB, "counter %llu after the helper's exit",
          (unsigned long long)gmg_quota_counter(D));
    helper_start(&h, one_mib_pair);
    CHECK(gmg_quota_counter(D) <= 4 * MiB && gmg_quota_used(D) == 0, "counter %llu, used %llu after a new thread's pair",
          (unsigned long long)gmg_quota_counter(D), (unsigned long long)gmg_quota_used(D));
    helper_end(&h);
    CHECK(gmg_quota_peak(D) == 2 * MiB, "peak %llu", (unsigned long long)gmg_quota_peak(D));
}

static void eight_mib_pair(void)
{
    alloc(8 * MiB);
    release(8 * MiB);
}

static void limit_across_threads(void)
{
    configure(2, "16M", NULL);
    struct helper h;
    helper_start(&h, eight_mib_pair); /* half the limit, as its credit */
    CHECK(gmg_quota_counter(D) == 8 * MiB && gmg_quota_used(D) == 0, "counter %llu, used %llu",
          (unsigned long long)gmg_quota_counter(D), (unsigned long long)gmg_quota_used(D));
    CHECK(alloc(16 * MiB) == 1, "16 MiB under a 16 MiB limit while another thread holds 8 MiB of credit: granted");
    CHECK(gmg_quota_used(D) == 16 * MiB && gmg_quota_counter(D) <= 16 * MiB, "used %llu, counter %llu",
          (unsigned long long)gmg_quota_used(D), (unsigned long long)gmg_quota_counter(D));
    CHECK(alloc(1) == 0, "1 byte more: refused");
    CHECK(gmg_quota_used(D) == 16 * MiB, "used %llu after the refusal", (unsigned long long)gmg_quota_used(D));
    release(16 * MiB);
    CHECK(gmg_quota_counter(D) == 0, "within an eighth of the limit a free gives its bytes straight back: counter %llu",
          (unsigned long long)gmg_quota_counter(D));
    CHECK(alloc(8 * MiB) == 1 && alloc(8 * MiB) == 1, "the limit again");
    CHECK(alloc(4096) == 0, "refused at the limit");
    release(8 * MiB); /* at the limit: straight back */
    release(8 * MiB); /* half of it: kept as credit */
    /* a refusal drains this thread's own credit too */
    CHECK(alloc(4 * MiB) == 1, "4 MiB");
    release(4 * MiB);
    CHECK(gmg_quota_counter(D) == 8 * MiB && gmg_quota_used(D) == 0, "its credit: counter %llu, used %llu",
          (unsigned long long)gmg_quota_counter(D), (unsigned long long)gmg_quota_used(D));
    CHECK(alloc(20 * MiB) == 0, "20 MiB: refused");
    CHECK(gmg_quota_counter(D) == 0 && gmg_quota_used(D) == 0, "counter %llu, used %llu after the refusal",
          (unsigned long long)gmg_quota_counter(D), (unsigned long long)gmg_quota_used(D));
    helper_end(&h);
    CHECK(gmg_quota_used(D) == 0, "used %llu", (unsigned long long)gmg_quota_used(D));
}

static void warn_keeps_no_credit(void)
{
    configure(3, "1M", "warn");
    CHECK(alloc(4096) == 1, "reserved");
    release(4096);
    CHECK(gmg_quota_counter(D) == 0 && gmg_quota_used(D) == 0, "under warn a free gives its bytes back at once: %llu",
          (unsigned long long)gmg_quota_counter(D));
}

/* Threads that share a limit, each holding at most its share: no refusal
 * can be right, and the bytes they hold never pass the limit. */
#define THREADS 4
#define SHARE (4 * MiB)
static uint64_t holding;     /* what the threads hold, by the test's own count */
static int refusals, passed_limit;

static void *share_main(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    uint64_t held[16];
    int n = 0;
    uint64_t mine = 0;
    for (int i = 0; i < 200000; i++) {
        if (n < 16 && (n == 0 || rand_r(&seed) % 2)) {
            uint64_t b = 4096ull << (rand_r(&seed) % 8); /* 4 KiB to 512 KiB */
            if (mine + b > SHARE)
                continue;
            int got = alloc(b);
            if (got != 1) {
                __atomic_fetch_add(&refusals, 1, __ATOMIC_RELAXED);
                continue;
            }
            if (__atomic_add_fetch(&holding, b, __ATOMIC_ACQ_REL) > THREADS * SHARE)
                __atomic_store_n(&passed_limit, 1, __ATOMIC_RELAXED);
            held[n++] = b;
            mine += b;
        } else if (n) {
            uint64_t b = held[--n];
            __atomic_fetch_sub(&holding, b, __ATOMIC_ACQ_REL);
            release(b);
            mine -= b;
        }
    }
    while (n) {
        uint64_t b = held[--n];
        __atomic_fetch_sub(&holding, b, __ATOMIC_ACQ_REL);
        release(b);
    }
    return NULL;
}

static void shared_limit(void)
{
    configure(4, "16M", NULL);
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, share_main, (void *)(uintptr_t)(i + 1));
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    CHECK(refusals == 0, "%d refusals of threads within their shares of the limit", refusals);
    CHECK(!passed_limit, "the threads held more than the limit");
    CHECK(gmg_quota_used(D) == 0 && gmg_quota_counter(D) <= 16 * MiB, "used %llu, counter %llu after every thread exited",
          (unsigned long long)gmg_quota_used(D), (unsigned long long)gmg_quota_counter(D));
    CHECK(gmg_quota_peak(D) <= 16 * MiB, "peak %llu", (unsigned long long)gmg_quota_peak(D));
}

/* Races (tests/review of the credits): a refusal must never be decided on
 * credit another thread is moving, nor `used` read half a transfer. */
static volatile unsigned race_seq;
static int race_stop;

/* A: hold 40 MiB, free it (credit, or straight back near the limit), ask
 * for 1 GiB (refused: it drains). race_seq is odd while A holds bytes. */
static void *race_holder(void *arg)
{
    (void)arg;
    int dev = D;
    while (!__atomic_load_n(&race_stop, __ATOMIC_SEQ_CST)) {
        __atomic_add_fetch(&race_seq, 1, __ATOMIC_SEQ_CST);
        if (gmg_quota_reserve(dev, 40 * MiB, NULL) != 1) {
            __atomic_add_fetch(&race_seq, 1, __ATOMIC_SEQ_CST);
            continue;
        }
        gmg_quota_commit();
        gmg_quota_release(dev, 40 * MiB);
        __atomic_add_fetch(&race_seq, 1, __ATOMIC_SEQ_CST);
        if (gmg_quota_reserve(dev, 1024 * MiB, NULL) != 0)
            __atomic_store_n(&race_stop, 2, __ATOMIC_SEQ_CST);
    }
    return NULL;
}

static void race_refusals(void)
{
    configure(5, "100M", NULL);
    __atomic_store_n(&race_stop, 0, __ATOMIC_SEQ_CST);
    pthread_t t;
    pthread_create(&t, NULL, race_holder, NULL);
    long wrong = 0;
    for (int i = 0; i < 400000; i++) {
        unsigned s1 = __atomic_load_n(&race_seq, __ATOMIC_SEQ_CST);
        int got = alloc(70 * MiB);
        unsigned s2 = __atomic_load_n(&race_seq, __ATOMIC_SEQ_CST);
        if (got == 1)
            release(70 * MiB);
        else if (s1 == s2 && !(s1 & 1)) /* the other thread held nothing all along */
            wrong++;
    }
    int granted_1g = __atomic_exchange_n(&race_stop, 1, __ATOMIC_SEQ_CST) == 2;
    pthread_join(t, NULL);
    CHECK(wrong == 0 && !granted_1g, "%ld refusals of 70 MiB under 100 MiB while the other thread held nothing%s",
          wrong, granted_1g ? "; 1 GiB granted" : "");
}

/* T: per round, 10 MiB and 60 MiB, the 60 freed (credit), phase 4r+1 (10 MiB
 * in use), the 10 freed (past CREDIT_MAX: a transfer), phase 4r+2 (none).
 * The reader reads used only within one round's phases 1-2. */
static volatile uint64_t race_phase;

static void *race_mover(void *arg)
{
    (void)arg;
    for (uint64_t r = 1; !__atomic_load_n(&race_stop, __ATOMIC_SEQ_CST); r++) {
        alloc(10 * MiB);
        alloc(60 * MiB);
        release(60 * MiB);
        __atomic_store_n(&race_phase, 4 * r + 1, __ATOMIC_SEQ_CST);
        release(10 * MiB);
        __atomic_store_n(&race_phase, 4 * r + 2, __ATOMIC_SEQ_CST);
        __atomic_store_n(&race_phase, 4 * r + 3, __ATOMIC_SEQ_CST);
    }
    return NULL;
}

static void race_used(void)
{
    configure(6, "", NULL);
    __atomic_store_n(&race_stop, 0, __ATOMIC_SEQ_CST);
    pthread_t t;
    pthread_create(&t, NULL, race_mover, NULL);
    long checked = 0, over = 0;
    uint64_t worst = 0;
    for (long i = 0; i < 20000000 && checked < 200000; i++) {
        uint64_t p1 = __atomic_load_n(&race_phase, __ATOMIC_SEQ_CST);
        if ((p1 & 3) != 1)
            continue;
        uint64_t u = gmg_quota_used(D);
        uint64_t p2 = __atomic_load_n(&race_phase, __ATOMIC_SEQ_CST);
        if (p2 != p1 && p2 != p1 + 1)
            continue;
        checked++;
        if (u > 10 * MiB) {
            over++;
            worst = u > worst ? u : worst;
        }
    }
    __atomic_store_n(&race_stop, 1, __ATOMIC_SEQ_CST);
    pthread_join(t, NULL);
    CHECK(over == 0, "%ld of %ld reads of used said more than the 10 MiB in use (up to %llu)", over, checked,
          (unsigned long long)worst);
}

/* A reading of used must be one moment's, though owners spend and add
 * credit without a lock and other threads write the counter meanwhile (a
 * second review of the credits): never more than was ever in use, never
 * less than a thread holds all along. PADS idle threads come and go
 * meanwhile (in the third version each kept a block the reading walked). */
#define PADS 64
static pthread_barrier_t pads_bar;
static void *pad_main(void *arg)
{
    (void)arg;
    gmg_quota_count_free(D);
    pthread_barrier_wait(&pads_bar);
    return NULL;
}

static void add_pads(void)
{
    pthread_t p[PADS];
    pthread_barrier_init(&pads_bar, NULL, PADS + 1);
    for (int i = 0; i < PADS; i++)
        pthread_create(&p[i], NULL, pad_main, NULL);
    pthread_barrier_wait(&pads_bar); /* all alive at once */
    for (int i = 0; i < PADS; i++)
        pthread_join(p[i], NULL);
    pthread_barrier_destroy(&pads_bar);
}

static int race_go;

/* Under a 1 GiB limit with 800 MiB held by main: credit 15 MiB, then in
 * and out of the limit's last eighth (frees there go straight back). In
 * use never passes 910 MiB. */
static void *over_mover(void *arg)
{
    (void)arg;
    alloc(15 * MiB);
    release(15 * MiB);
    __atomic_store_n(&race_go, 1, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(&race_go, __ATOMIC_SEQ_CST) != 2)
        ;
    while (!__atomic_load_n(&race_stop, __ATOMIC_SEQ_CST)) {
        alloc(20 * MiB);
        release(20 * MiB);
        alloc(100 * MiB);
        alloc(10 * MiB);
        release(10 * MiB);
        alloc(10 * MiB);
        release(10 * MiB);
        release(100 * MiB);
    }
    return NULL;
}

static void race_snapshot_over(void)
{
    configure(7, "1G", NULL);
    __atomic_store_n(&race_stop, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&race_go, 0, __ATOMIC_SEQ_CST);
    gmg_quota_count_free(D);
    pthread_t t;
    pthread_create(&t, NULL, over_mover, NULL);
    while (!__atomic_load_n(&race_go, __ATOMIC_SEQ_CST))
        ;
    add_pads();
    CHECK(alloc(800 * MiB) == 1, "800 MiB");
    __atomic_store_n(&race_go, 2, __ATOMIC_SEQ_CST);
    long over = 0, under = 0;
    for (int i = 0; i < 100000; i++) {
        uint64_t u = gmg_quota_used(D);
        over += u > 910 * MiB;
        under += u < 800 * MiB;
    }
    __atomic_store_n(&race_stop, 1, __ATOMIC_SEQ_CST);
    pthread_join(t, NULL);
    CHECK(over == 0 && under == 0, "of 100,000 readings of used, %ld above the most ever in use, %ld below what main held",
          over, under);
    release(800 * MiB);
}

/* No limit, main holds 100 MiB: the other thread's pairs go through its
 * credit and the counter by turns (and flush past 64 MiB). */
static void *under_mover(void *arg)
{
    (void)arg;
    alloc(1);
    release(1);
    alloc(1);
    __atomic_store_n(&race_go, 1, __ATOMIC_SEQ_CST);
    while (!__atomic_load_n(&race_stop, __ATOMIC_SEQ_CST)) {
        alloc(40 * MiB);
        release(40 * MiB);
        alloc(40 * MiB);
        alloc(30 * MiB);
        release(30 * MiB);
        release(40 * MiB);
    }
    release(1);
    return NULL;
}

static void race_snapshot_under(void)
{
    configure(8, "", NULL);
    __atomic_store_n(&race_stop, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&race_go, 0, __ATOMIC_SEQ_CST);
    CHECK(alloc(100 * MiB) == 1, "100 MiB");
    pthread_t t;
    pthread_create(&t, NULL, under_mover, NULL);
    while (!__atomic_load_n(&race_go, __ATOMIC_SEQ_CST))
        ;
    add_pads();
    long under = 0, lowpeak = 0;
    for (int i = 0; i < 100000; i++) {
        under += gmg_quota_used(D) < 100 * MiB;
        if (i % 40 == 0) {
            uint64_t big = 1024 * MiB + (uint64_t)i * 4 * MiB; /* each a new high */
            if (alloc(big) == 1) {
                lowpeak += gmg_quota_peak(D) < 100 * MiB + big;
                release(big);
            }
        }
    }
    __atomic_store_n(&race_stop, 1, __ATOMIC_SEQ_CST);
    pthread_join(t, NULL);
    CHECK(under == 0 && lowpeak == 0, "of 100,000 readings of used, %ld below what main held; %ld peaks below the bytes in use",
          under, lowpeak);
}

/* More threads than CPUs, or threads that move: credit left on one CPU's
 * slot is spent by a reservation on another CPU rather than let the
 * counter pass the peak (each such reservation would then read every
 * slot). Pairs on the first CPU, then one allocation on the second. */
static void *pair_on_cpu(void *arg)
{
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(((int *)arg)[0], &one);
    sched_setaffinity(0, sizeof one, &one);
    alloc(4096);
    if (((int *)arg)[1])
        release(4096);
    return NULL;
}

static void credit_across_cpus(void)
{
    configure(9, "", NULL);
    cpu_set_t all;
    sched_getaffinity(0, sizeof all, &all);
    int cpus[2] = { -1, -1 };
    for (int i = 0; i < CPU_SETSIZE && cpus[1] < 0; i++)
        if (CPU_ISSET(i, &all))
            cpus[cpus[0] < 0 ? 0 : 1] = i;
    if (cpus[1] < 0) {
        printf("credit across CPUs: one CPU only, not checked\n");
        return;
    }
    pthread_t t;
    int first[2] = { cpus[0], 1 }, second[2] = { cpus[1], 0 };
    pthread_create(&t, NULL, pair_on_cpu, first); /* threads of their own: each looks its slot up afresh */
    pthread_join(t, NULL);
    pthread_create(&t, NULL, pair_on_cpu, second);
    pthread_join(t, NULL);
    CHECK(gmg_quota_counter(D) == 4096 && gmg_quota_peak(D) == 4096 && gmg_quota_used(D) == 4096,
          "credit freed on CPU %d, 4 KiB allocated on CPU %d: counter %llu (want 4096), peak %llu, used %llu", cpus[0],
          cpus[1], (unsigned long long)gmg_quota_counter(D), (unsigned long long)gmg_quota_peak(D),
          (unsigned long long)gmg_quota_used(D));
}

/* Start-up settles whether counters are kept: under a limit they are; with
 * no limit and no group nothing is counted (what is in use is the tracked
 * bytes, core/peak.h), and a release of bytes reserved before the decision
 * leaves the counter alone. Last: the decision holds for the process. */
static void counters_only_under_a_limit(void)
{
    configure(14, "1G", NULL);
    gmg_quota_settle_counting();
    CHECK(gmg_quota_counting(), "a limit: counters kept");
    CHECK(gmg_quota_reserve(D, 4096, NULL) == 1 && gmg_quota_counter(D) == 4096,
          "a limit: a reservation counted (counter %llu)", (unsigned long long)gmg_quota_counter(D));
    gmg_quota_release(D, 4096);
    configure(15, "", NULL);
    CHECK(gmg_quota_reserve(D, 8192, NULL) == 1 && gmg_quota_counter(D) == 8192,
          "before start-up settles: counted (counter %llu)", (unsigned long long)gmg_quota_counter(D));
    gmg_quota_commit();
    gmg_quota_settle_counting();
    CHECK(!gmg_quota_counting(), "no limit, no group: no counters");
    for (int i = 0; i < 1000; i++) {
        CHECK(gmg_quota_reserve(D, 1 << 20, NULL) == 1, "no limit: a reservation granted");
        gmg_quota_commit();
        gmg_quota_release(D, 1 << 20);
    }
    gmg_quota_release(D, 8192); /* reserved before: left where it was */
    CHECK(gmg_quota_counter(D) == 8192 && gmg_quota_used(D) == 8192 && gmg_quota_peak(D) == 8192,
          "no counters: the counter untouched (%llu, want 8192), used %llu, peak %llu",
          (unsigned long long)gmg_quota_counter(D), (unsigned long long)gmg_quota_used(D),
          (unsigned long long)gmg_quota_peak(D));
}

int main(void)
{
    pairs_alone();
    peaks_across_threads();
    limit_across_threads();
    warn_keeps_no_credit();
    shared_limit();
    race_refusals();
    race_used();
    race_snapshot_over();
    race_snapshot_under();
    credit_across_cpus();
    counters_only_under_a_limit();
    printf("quota: %d checks, %d failed\n", checks, failed);
    return failed != 0;
}
