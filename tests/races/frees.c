/*
 * frees.c - frees that race: two threads free one pointer at once, with or
 * without a third thread taking the freed address again at once. The guard
 * must never keep a phantom record nor count fewer bytes than the driver
 * holds. Linked to the simulated driver (the guard's exported wrappers see
 * every call); tests/races/frees.sh runs it, scripts/stress.sh runs
 * double_free for longer (tests/stress/stress.c).
 *
 *   racing_frees double_free N   two threads free one pointer at once, N rounds
 *   racing_frees free_reuse N    the same, while a third thread reuses the address
 *   racing_frees array_destroy N two threads destroy one array at once, N rounds:
 *                                one succeeds each round, nothing stays counted
 *   racing_frees aba             one exact race (GPUSIM_FREE_DELAYS=200000,100000): the
 *                                second free of p reaches the driver after p was given
 *                                out again, and frees that newer allocation
 *   racing_frees aba_late        the same (GPUSIM_AFTER_FREE_US=100000 too: each free
 *                                returns 100 ms after the driver did it), and a third
 *                                allocation at that address after the second free was
 *                                done, before it settles: that one is live, counted
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include "../integration/testlib.h"

#include <pthread.h>
#include <unistd.h>

static CUdeviceptr shared_ptr;
static pthread_barrier_t bar;

static void *freer(void *arg)
{
    int rounds = *(int *)arg;
    CHECK(cuCtxSetCurrent(tl_ctx));
    for (int i = 0; i < rounds; i++) {
        pthread_barrier_wait(&bar);
        cuMemFree_v2(shared_ptr);
        pthread_barrier_wait(&bar);
    }
    return NULL;
}

static CUarray shared_array;
static int destroyed_ok;

static void *destroyer(void *arg)
{
    int rounds = *(int *)arg;
    CHECK(cuCtxSetCurrent(tl_ctx));
    for (int i = 0; i < rounds; i++) {
        pthread_barrier_wait(&bar);
        if (cuArrayDestroy(shared_array) == CUDA_SUCCESS)
            __atomic_fetch_add(&destroyed_ok, 1, __ATOMIC_RELAXED);
        pthread_barrier_wait(&bar);
    }
    return NULL;
}

static void array_destroy(int rounds)
{
    pthread_t t[2];
    pthread_barrier_init(&bar, NULL, 3);
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, destroyer, &rounds);
    int wrong = 0;
    CUDA_ARRAY_DESCRIPTOR d = { 256, 256, CU_AD_FORMAT_FLOAT, 1 }; /* 256 KiB */
    for (int i = 0; i < rounds; i++) {
        CHECK(cuArrayCreate_v2(&shared_array, &d));
        __atomic_store_n(&destroyed_ok, 0, __ATOMIC_RELAXED);
        pthread_barrier_wait(&bar);
        pthread_barrier_wait(&bar);
        wrong += __atomic_load_n(&destroyed_ok, __ATOMIC_RELAXED) != 1 || tl_guard_live(0) != 0;
    }
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("array destroy: %d rounds, %d wrong, guard %llu, sim %llu\n", rounds, wrong, tl_guard_live(0),
           (unsigned long long)tl_sim(0).live);
}

static void double_free(int rounds)
{
    pthread_t t[2];
    pthread_barrier_init(&bar, NULL, 3);
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, freer, &rounds);
    int phantoms = 0;
    for (int i = 0; i < rounds; i++) {
        CHECK(cuMemAlloc_v2(&shared_ptr, 4096));
        pthread_barrier_wait(&bar);
        pthread_barrier_wait(&bar);
        if (tl_guard_live(0) != 0) {
            phantoms++;
            /* the phantom would also hold quota: report once, then clean the slate */
            if (phantoms == 1)
                printf("phantom after round %d: guard %llu, sim %llu\n", i, tl_guard_live(0),
                       (unsigned long long)tl_sim(0).live);
            cuMemFree_v2(shared_ptr);
        }
    }
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("double free: %d rounds, %d phantoms, guard %llu, sim %llu\n", rounds, phantoms, tl_guard_live(0),
           (unsigned long long)tl_sim(0).live);
}

/* Two threads free p while a third takes the address again: the third's
 * allocation must stay counted. */
static CUdeviceptr reused;

static void *reuser(void *arg)
{
    int rounds = *(int *)arg;
    CHECK(cuCtxSetCurrent(tl_ctx));
    for (int i = 0; i < rounds; i++) {
        pthread_barrier_wait(&bar);
        usleep(500);
        CHECK(cuMemAlloc_v2(&reused, 4096));
        pthread_barrier_wait(&bar);
    }
    return NULL;
}

static void free_reuse(int rounds)
{
    pthread_t t[3];
    pthread_barrier_init(&bar, NULL, 4);
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, freer, &rounds);
    pthread_create(&t[2], NULL, reuser, &rounds);
    int wrong = 0;
    for (int i = 0; i < rounds; i++) {
        CHECK(cuMemAlloc_v2(&shared_ptr, 4096));
        pthread_barrier_wait(&bar);
        pthread_barrier_wait(&bar);
        /* Under-counting is the bug (the quota would let the program past
         * its limit). The other way round cannot be helped: when the second
         * free of p lands after the third thread got p back, the program
         * freed that thread's memory, and no interposer can tell whose
         * allocation a double free reached. */
        if (tl_guard_live(0) < tl_sim(0).live)
            wrong++;
        cuMemFree_v2(reused);
        if (tl_guard_live(0) != tl_sim(0).live) { /* start the next round even */
            CUdeviceptr d;
            while (cuMemAlloc_v2(&d, 4096) == CUDA_SUCCESS && tl_guard_live(0) < tl_sim(0).live)
                ;
        }
    }
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    printf("free and reuse: %d rounds, %d with the guard below the driver\n", rounds, wrong);
}

/* A frees p (600 ms in the driver); B frees p from 300 ms (600 ms in the
 * driver: it reaches p at 900 ms, after A's free); once A's free is done in
 * the driver (its count drops to 0, at 600 ms), main allocates and gets p's
 * address again: B's free then frees that allocation. The guard must see it
 * gone: nothing left counted, the whole limit free. Late: once B's free is
 * done in the driver (900 ms; it returns 300 ms later, GPUSIM_AFTER_FREE_US),
 * main allocates a third time at the address: live, and counted. The order
 * is set by the driver's count, not by sleeps, and 300 ms apart each way. */
static CUdeviceptr aba_p;
static void *aba_freer(void *arg)
{
    usleep((useconds_t)(uintptr_t)arg);
    CHECK(cuCtxSetCurrent(tl_ctx));
    CUresult r = cuMemFree_v2(aba_p);
    printf("free at +%lu ms: %d\n", (unsigned long)(uintptr_t)arg / 1000, (int)r);
    return NULL;
}

/* Until the driver holds nothing (a free done there), at most 5 s. */
static void driver_empty(void)
{
    for (int i = 0; i < 5000 && tl_sim(0).live; i++)
        usleep(1000);
}

static void aba(int late)
{
    CHECK(cuMemAlloc_v2(&aba_p, 1 << 20));
    pthread_t a, b;
    pthread_create(&a, NULL, aba_freer, (void *)(uintptr_t)0);
    pthread_create(&b, NULL, aba_freer, (void *)(uintptr_t)300000);
    driver_empty();
    CUdeviceptr q, r = 0;
    CHECK(cuMemAlloc_v2(&q, 1 << 20));
    if (late) {
        driver_empty();
        CHECK(cuMemAlloc_v2(&r, 1 << 20));
    }
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    printf("aba: %s address%s, guard %llu, sim %llu\n", q == aba_p ? "same" : "another",
           !late ? "" : r == aba_p ? " twice" : ", then another", tl_guard_live(0), (unsigned long long)tl_sim(0).live);
    if (late)
        return;
    CUdeviceptr big;
    printf("aba: then the whole limit: %d\n", (int)cuMemAlloc_v2(&big, 64u << 20));
}

static int frees_mode(int argc, char **argv)
{
    int n = argc > 2 ? atoi(argv[2]) : 0;
    if (!strcmp(argv[1], "double_free")) double_free(n);
    else if (!strcmp(argv[1], "array_destroy")) array_destroy(n);
    else if (!strcmp(argv[1], "free_reuse")) free_reuse(n);
    else if (!strcmp(argv[1], "aba")) aba(0);
    else if (!strcmp(argv[1], "aba_late")) aba(1);
    else return 0;
    return 1;
}

#ifndef TL_NO_MAIN
int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: racing_frees double_free|free_reuse N\n");
        return 2;
    }
    tl_setup(0);
    if (!frees_mode(argc, argv)) {
        fprintf(stderr, "unknown mode %s\n", argv[1]);
        return 2;
    }
    fflush(stdout);
    return 0;
}
#endif
