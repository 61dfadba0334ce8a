/*
 * test_quota_counts.c - the allocation and free counts (core/counts.c via
 * core/quota.h), which each thread keeps in a block of its own and hands
 * on when it exits.
 *   - 8 threads count 200,000 allocations and frees each, on devices 0 and
 *     3, and exit: not one lost, none gone with its thread;
 *   - 8 more threads, started after, take those blocks over: the totals
 *     double exactly;
 *   - a thread that counts from a destructor of its own that runs after
 *     the counts' (another library freeing memory at thread exit): counted;
 *   - a fork child's reset starts every count from zero.
 * Prints "quota counts: N checks, M failed"; exit status 1 on failure.
 */
#define _GNU_SOURCE
#include "base/config.h"
#include "core/quota.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int checks, failed;
#define CHECK(cond, ...) do { checks++; if (!(cond)) { failed++; printf("FAIL: " __VA_ARGS__); printf("\n"); } } while (0)

#define THREADS 8
#define COUNTED 200000
static pthread_barrier_t start;

static void *counter_main(void *arg)
{
    int dev = (int)(intptr_t)arg;
    pthread_barrier_wait(&start);
    for (int i = 0; i < COUNTED; i++) {
        gmg_quota_count_alloc(dev);
        gmg_quota_count_free(dev);
    }
    return NULL;
}

static void wave(void)
{
    pthread_t t[THREADS];
    pthread_barrier_init(&start, NULL, THREADS);
    for (int i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, counter_main, (void *)(intptr_t)(i & 1 ? 3 : 0));
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&start);
}

static void check_totals(const char *when, uint64_t want)
{
    CHECK(gmg_quota_allocs(0) == want && gmg_quota_frees(0) == want && gmg_quota_allocs(3) == want &&
              gmg_quota_frees(3) == want && gmg_quota_allocs(-1) == 2 * want,
          "counts %s: device 0 %llu/%llu, device 3 %llu/%llu, all %llu (want %llu each)", when,
          (unsigned long long)gmg_quota_allocs(0), (unsigned long long)gmg_quota_frees(0),
          (unsigned long long)gmg_quota_allocs(3), (unsigned long long)gmg_quota_frees(3),
          (unsigned long long)gmg_quota_allocs(-1), (unsigned long long)want);
}

/* A key made after the counts' (the thread below counts first): glibc runs
 * the destructors of a thread's keys in the order the keys were made. */
static pthread_key_t late_key;

static void late_free(void *arg)
{
    (void)arg;
    gmg_quota_count_free(5);
}

static void late_key_make(void) { pthread_key_create(&late_key, late_free); }

static void *late_main(void *arg)
{
    (void)arg;
    gmg_quota_count_alloc(5);
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, late_key_make);
    pthread_setspecific(late_key, &late_key);
    return NULL;
}

int main(void)
{
    memset(&gmg_cfg, 0, sizeof gmg_cfg);
    wave();
    uint64_t want = (uint64_t)THREADS / 2 * COUNTED;
    check_totals("after 8 threads exited", want);
    wave();
    check_totals("after 8 more threads took their blocks over", 2 * want);
    pthread_t t;
    pthread_create(&t, NULL, late_main, NULL);
    pthread_join(t, NULL);
    CHECK(gmg_quota_allocs(5) == 1 && gmg_quota_frees(5) == 1,
          "a free counted by a destructor run after the counts': %llu/%llu (want 1/1)",
          (unsigned long long)gmg_quota_allocs(5), (unsigned long long)gmg_quota_frees(5));
    CHECK(gmg_quota_devices_seen() == 6, "devices seen: %d", gmg_quota_devices_seen());
    gmg_quota_reset(); /* a fork child's */
    CHECK(gmg_quota_allocs(-1) == 0 && gmg_quota_frees(0) == 0 && gmg_quota_frees(5) == 0, "counts after a reset: %llu",
          (unsigned long long)gmg_quota_allocs(-1));
    gmg_quota_count_alloc(3);
    CHECK(gmg_quota_allocs(-1) == 1, "counted after a reset: %llu (want 1)", (unsigned long long)gmg_quota_allocs(-1));
    printf("quota counts: %d checks, %d failed\n", checks, failed);
    return failed != 0;
}
