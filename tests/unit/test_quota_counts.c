/*
 * test_quota_counts.c - core/quota.c's allocation and free counts, kept in
 * the slot of the CPU a thread runs on, which threads share. Made to share
 * one slot while they run on different CPUs at once: the process is pinned
 * to one CPU before quota.c's constructor counts them (so it makes one
 * slot), then let run on all. 8 threads count 200,000 allocations and frees
 * each, on two devices, and exit: not one lost (a count not added
 * atomically loses some here), none gone with its thread, and a fork
 * child's reset starts them from zero. Prints "quota counts: N checks, M
 * failed"; exit status 1 on failure.
 */
#define _GNU_SOURCE
#include "base/config.h"
#include "core/quota.h"

#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int checks, failed;
#define CHECK(cond, ...) do { checks++; if (!(cond)) { failed++; printf("FAIL: " __VA_ARGS__); printf("\n"); } } while (0)

static cpu_set_t all;

/* before quota.c's slots_init (a constructor of default priority) */
__attribute__((constructor(101))) static void one_cpu(void)
{
    cpu_set_t one;
    sched_getaffinity(0, sizeof all, &all);
    CPU_ZERO(&one);
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &all)) {
            CPU_SET(c, &one);
            break;
        }
    sched_setaffinity(0, sizeof one, &one);
}

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

int main(void)
{
    memset(&gmg_cfg, 0, sizeof gmg_cfg);
    sched_setaffinity(0, sizeof all, &all); /* one slot, every CPU */
    pthread_t t[THREADS];
    pthread_barrier_init(&start, NULL, THREADS);
    for (int i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, counter_main, (void *)(intptr_t)(i & 1 ? 3 : 0));
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    uint64_t want = (uint64_t)THREADS / 2 * COUNTED;
    CHECK(gmg_quota_allocs(0) == want && gmg_quota_frees(0) == want && gmg_quota_allocs(3) == want &&
              gmg_quota_frees(3) == want && gmg_quota_allocs(-1) == 2 * want,
          "counts after %d threads in one slot on %d CPUs: device 0 %llu/%llu, device 3 %llu/%llu, all %llu "
          "(want %llu each)",
          THREADS, CPU_COUNT(&all), (unsigned long long)gmg_quota_allocs(0), (unsigned long long)gmg_quota_frees(0),
          (unsigned long long)gmg_quota_allocs(3), (unsigned long long)gmg_quota_frees(3),
          (unsigned long long)gmg_quota_allocs(-1), (unsigned long long)want);
    CHECK(gmg_quota_devices_seen() == 4, "devices seen: %d", gmg_quota_devices_seen());
    gmg_quota_reset(); /* a fork child's */
    CHECK(gmg_quota_allocs(-1) == 0 && gmg_quota_frees(0) == 0, "counts after a reset: %llu",
          (unsigned long long)gmg_quota_allocs(-1));
    printf("quota counts: %d checks, %d failed (%d CPUs)\n", checks, failed, CPU_COUNT(&all));
    return failed != 0;
}
