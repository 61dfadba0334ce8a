/*
 * test_quota_peak.c - a peak the quota's credits must not miss (core/quota.c
 * built with -DGMG_QUOTA_TEST_HOOKS; a third review of the per-CPU credits).
 * Each thread says which CPU it is on (sched_getcpu is this file's), so the
 * slots are known:
 *   S (CPU 7): 40 MiB allocated and freed: 40 MiB of credit in slot 7.
 *   A (CPU 0): 30 MiB. Its slot is empty and the counter would pass the peak,
 *     so it spends slot 7's credit; the hook runs just before, and there
 *   B (CPU 1): 50 MiB, from no slot: the counter rises, its reading makes the
 *     peak 50 MiB.
 * Both allocations stay: the peak must be the 80 MiB in use, not B's 50.
 * Prints "quota_peak: N checks, M failed"; exits 1 on a failed check.
 */
#define _GNU_SOURCE
#include "base/config.h"
#include "core/quota.h"

#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <string.h>

#define MiB (1ull << 20)

extern void (*gmg_quota_test_hook)(void);
static __thread int my_cpu;
int sched_getcpu(void) { return my_cpu; }

static const char *get(const char *name) { (void)name; return NULL; }

static int alloc(uint64_t bytes)
{
    int got = gmg_quota_reserve(0, bytes, NULL);
    if (got == 1)
        gmg_quota_commit();
    return got;
}

static sem_t go_b, done_b;

static void *thread_b(void *arg)
{
    (void)arg;
    my_cpu = 1;
    sem_wait(&go_b);
    alloc(50 * MiB);
    sem_post(&done_b);
    return NULL;
}

static void between(void)
{
    gmg_quota_test_hook = NULL;
    sem_post(&go_b);
    sem_wait(&done_b);
}

static void *thread_s(void *arg)
{
    (void)arg;
    my_cpu = 7;
    alloc(40 * MiB);
    gmg_quota_release(0, 40 * MiB);
    return NULL;
}

static void *thread_a(void *arg)
{
    (void)arg;
    my_cpu = 0;
    gmg_quota_test_hook = between;
    alloc(30 * MiB);
    return NULL;
}

int main(void)
{
    char err[256];
    memset(&gmg_cfg, 0, sizeof gmg_cfg);
    if (gmg_config_parse(get, &gmg_cfg, err, sizeof err) != 0)
        return 1;
    gmg_quota_reset();
    sem_init(&go_b, 0, 0);
    sem_init(&done_b, 0, 0);
    pthread_t s, a, b;
    pthread_create(&s, NULL, thread_s, NULL);
    pthread_join(s, NULL);
    pthread_create(&b, NULL, thread_b, NULL);
    pthread_create(&a, NULL, thread_a, NULL);
    pthread_join(a, NULL);
    int ran = gmg_quota_test_hook == NULL;
    if (!ran) { /* one slot only (one CPU): A spent its own; nothing to order */
        gmg_quota_test_hook = NULL;
        sem_post(&go_b);
    }
    pthread_join(b, NULL);
    if (!ran) {
        printf("quota_peak: one credit slot, not checked\n");
        return 0;
    }
    int failed = 0;
    unsigned long long used = gmg_quota_used(0), peak = gmg_quota_peak(0);
    if (used != 80 * MiB || peak != 80 * MiB) {
        printf("FAIL: used %llu MiB, peak %llu MiB (want 80 and 80)\n", used >> 20, peak >> 20);
        failed = 1;
    }
    printf("quota_peak: 1 checks, %d failed\n", failed);
    return failed;
}
