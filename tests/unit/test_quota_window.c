/*
 * test_quota_window.c - the quota's peak window (core/quota.c), which the
 * public API's gpumemguard_peak_reset starts: its base and peak are the
 * bytes in use at the reset; a later high raises it even below the run's
 * peak (which it never lowers); a reservation rolled back (the driver
 * failed) raises neither, nor does a reset while it is in flight; credit
 * held by a free is not in use; threads
 * holding memory at once make the window's peak their sum, with and
 * without a limit. Prints "window: N checks, M failed"; exits 1 on a
 * failed check.
 */
#define _GNU_SOURCE
#include "base/config.h"
#include "core/quota.h"

#include <pthread.h>
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

static const char *env_limit;
static const char *get(const char *name)
{
    return strcmp(name, "GPUMEM_LIMIT") == 0 ? env_limit : NULL;
}

static void configure(const char *limit)
{
    char err[512];
    env_limit = limit;
    memset(&gmg_cfg, 0, sizeof gmg_cfg);
    if (gmg_config_parse(get, &gmg_cfg, err, sizeof err) != 0) {
        printf("config: %s\n", err);
        exit(1);
    }
    gmg_quota_reset();
}

static void alloc(int dev, uint64_t bytes)
{
    if (gmg_quota_reserve(dev, bytes, NULL) == 1)
        gmg_quota_commit();
}

/* -------------------------------------------- threads holding at once */

#define THREADS 8
static pthread_barrier_t held, go;
static int tdev;

static void *holder(void *arg)
{
    (void)arg;
    for (int round = 0; round < 50; round++) {
        alloc(tdev, 1 * MiB);            /* pairs first: credit moves around */
        gmg_quota_release(tdev, 1 * MiB);
    }
    alloc(tdev, 2 * MiB);
    pthread_barrier_wait(&held);         /* every thread holds 2 MiB now */
    pthread_barrier_wait(&go);
    gmg_quota_release(tdev, 2 * MiB);
    return NULL;
}

static void threads(int dev)
{
    pthread_t t[THREADS];
    tdev = dev;
    pthread_barrier_init(&held, NULL, THREADS + 1);
    pthread_barrier_init(&go, NULL, THREADS + 1);
    for (int i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, holder, NULL);
    pthread_barrier_wait(&held);
    CHECK(gmg_quota_window_peak(dev) >= THREADS * 2 * MiB, "dev %d: window %llu below %llu held at once", dev,
          (unsigned long long)gmg_quota_window_peak(dev), (unsigned long long)(THREADS * 2 * MiB));
    pthread_barrier_wait(&go);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    CHECK(gmg_quota_window_peak(dev) <= gmg_quota_peak(dev), "dev %d: window %llu above the peak %llu", dev,
          (unsigned long long)gmg_quota_window_peak(dev), (unsigned long long)gmg_quota_peak(dev));
    pthread_barrier_destroy(&held);
    pthread_barrier_destroy(&go);
}

int main(void)
{
    for (int limited = 0; limited < 2; limited++) {
        configure(limited ? "1G" : NULL);
        int d = 0;
        alloc(d, 10 * MiB);
        gmg_quota_release(d, 10 * MiB);
        CHECK(gmg_quota_window_peak(d) == 10 * MiB && gmg_quota_window_base(d) == 0,
              "no reset: the window is the run (%llu)", (unsigned long long)gmg_quota_window_peak(d));
        alloc(d, 3 * MiB);
        gmg_quota_window_reset(d);
        CHECK(gmg_quota_window_peak(d) == 3 * MiB && gmg_quota_window_base(d) == 3 * MiB,
              "reset: base and peak at the bytes in use (%llu, %llu)", (unsigned long long)gmg_quota_window_base(d),
              (unsigned long long)gmg_quota_window_peak(d));
        alloc(d, 2 * MiB);                   /* 5 MiB: below the run's 10 */
        gmg_quota_release(d, 2 * MiB);
        CHECK(gmg_quota_window_peak(d) == 5 * MiB && gmg_quota_peak(d) == 10 * MiB,
              "a high below the run's peak raises the window alone (%llu, %llu)",
              (unsigned long long)gmg_quota_window_peak(d), (unsigned long long)gmg_quota_peak(d));
        /* rolled back: the driver failed the call */
        CHECK(gmg_quota_reserve(d, 4 * MiB, NULL) == 1, "reserve");
        gmg_quota_release(d, 4 * MiB);   /* as gmg_end does: released, never committed */
        CHECK(gmg_quota_window_peak(d) == 5 * MiB, "a reservation rolled back raises no window (%llu)",
              (unsigned long long)gmg_quota_window_peak(d));
        /* the free's credit is not in use: the next window starts lower */
        gmg_quota_release(d, 3 * MiB);
        gmg_quota_window_reset(d);
        CHECK(gmg_quota_window_peak(d) == 0 && gmg_quota_window_base(d) == 0 && gmg_quota_used(d) == 0,
              "a window after every free starts at 0 (%llu)", (unsigned long long)gmg_quota_window_peak(d));
        alloc(d, 1 * MiB);
        CHECK(gmg_quota_window_peak(d) == 1 * MiB, "a high spent from credit raises the window (%llu)",
              (unsigned long long)gmg_quota_window_peak(d));
        gmg_quota_release(d, 1 * MiB);
        /* other devices keep their own */
        alloc(1, 6 * MiB);
        CHECK(gmg_quota_window_peak(1) == 6 * MiB && gmg_quota_window_peak(d) == 1 * MiB, "per device");
        gmg_quota_release(1, 6 * MiB);
        CHECK(gmg_quota_window_peak(-1) == 0 && gmg_quota_window_base(GMG_MAX_DEVICES) == 0, "bad devices: 0");
        /* a reset while a reservation above the peak is in flight, which
         * the driver then refuses: the window never goes above the peak,
         * or the run's next high below it would be missed */
        alloc(3, 10 * MiB);
        gmg_quota_release(3, 10 * MiB);
        CHECK(gmg_quota_reserve(3, 20 * MiB, NULL) == 1, "reserve");
        gmg_quota_window_reset(3);
        gmg_quota_release(3, 20 * MiB);
        alloc(3, 12 * MiB);
        CHECK(gmg_quota_peak(3) == 12 * MiB && gmg_quota_window_peak(3) == 12 * MiB,
              "a reset during a refused reservation: the run's next high still counts (peak %llu, window %llu)",
              (unsigned long long)gmg_quota_peak(3), (unsigned long long)gmg_quota_window_peak(3));
        gmg_quota_release(3, 12 * MiB);
        /* threads: a fresh window catches what they held at once */
        gmg_quota_window_reset(2);
        threads(2);
        gmg_quota_window_reset(2);
        CHECK(gmg_quota_window_peak(2) == 0, "after the threads: %llu", (unsigned long long)gmg_quota_window_peak(2));
    }
    printf("window: %d checks, %d failed\n", checks, failed);
    return failed != 0;
}
