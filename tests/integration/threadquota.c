/*
 * threadquota.c - threads sharing GPUMEM_LIMIT through the real library,
 * with frees on other threads than the allocations' (the quota's credits,
 * core/quota.c). THREADS threads each allocate and free within a share of
 * the limit (LIMIT / THREADS), and hand every third allocation to the next
 * thread to free. Checked, with the threads still alive (their credits held)
 * and again after they exit:
 *   - no allocation within the shares is refused;
 *   - the bytes the guard says are live (gpumemguard_live_bytes) are the
 *     bytes left live, LEFT per thread; cuMemGetInfo under the limit says
 *     limit less those;
 *   - the same, after the threads exited.
 * Also: a pointer freed twice, or never allocated, is CUDA_ERROR_INVALID_VALUE. Run under the default simulated driver and under
 * GPUSIM_THREAD_RANGES=1 (tests/sim/sim.c). Prints "threadquota: ok" or
 * FAIL lines; exits 1 on a failure.
 */
#define _GNU_SOURCE
#include "testlib.h"

#include <pthread.h>
#include <stdint.h>

#define THREADS 4
#define LIMIT (16ull << 20)
#define SHARE (LIMIT / THREADS)
#define LEFT 3            /* allocations of 8 KiB each thread leaves live */
#define ROUNDS 20000

static CUcontext ctx;
static int failures;

#define FAIL(...) do { printf("FAIL " __VA_ARGS__); printf("\n"); __atomic_fetch_add(&failures, 1, __ATOMIC_RELAXED); } while (0)

/* Each thread's mailbox of pointers another thread allocated: it frees them. */
struct mailbox {
    pthread_mutex_t mu;
    CUdeviceptr p[64];
    uint64_t size[64];
    int n;
};
static struct mailbox box[THREADS];
/* Bytes a thread holds, its own and those posted to it: posted bytes count
 * against the sender's share until freed (a sender waits while its posts are
 * many, so shares hold). */
static uint64_t owes[THREADS];
static pthread_barrier_t parked, released;

static void drain_box(int me)
{
    struct mailbox *b = &box[me];
    pthread_mutex_lock(&b->mu);
    while (b->n) {
        b->n--;
        if (cuMemFree_v2(b->p[b->n]) != CUDA_SUCCESS)
            FAIL("thread %d: a free of a pointer another thread allocated", me);
        /* the sender's share: it counted these bytes */
        int from = (me + THREADS - 1) % THREADS;
        __atomic_fetch_sub(&owes[from], b->size[b->n], __ATOMIC_ACQ_REL);
    }
    pthread_mutex_unlock(&b->mu);
}

static void *worker(void *arg)
{
    int me = (int)(intptr_t)arg, next = (me + 1) % THREADS;
    unsigned seed = (unsigned)me * 7919u + 1;
    CUdeviceptr held[16];
    uint64_t hsize[16];
    int n = 0;
    cuCtxSetCurrent(ctx);
    for (int i = 0; i < ROUNDS; i++) {
        drain_box(me);
        if (n < 16 && (n == 0 || rand_r(&seed) % 2)) {
            uint64_t size = 4096ull << (rand_r(&seed) % 6); /* 4 to 128 KiB */
            if (__atomic_load_n(&owes[me], __ATOMIC_ACQUIRE) + size > SHARE)
                continue;
            CUdeviceptr p;
            CUresult r = cuMemAlloc_v2(&p, size);
            if (r != CUDA_SUCCESS) {
                FAIL("thread %d: %llu bytes refused (%d) within its share", me, (unsigned long long)size, (int)r);
                continue;
            }
            __atomic_fetch_add(&owes[me], size, __ATOMIC_ACQ_REL);
            held[n] = p;
            hsize[n++] = size;
        } else if (n) {
            n--;
            struct mailbox *b = &box[next];
            pthread_mutex_lock(&b->mu);
            int post = rand_r(&seed) % 3 == 0 && b->n < 64;
            if (post) {
                b->p[b->n] = held[n];
                b->size[b->n++] = hsize[n];
            }
            pthread_mutex_unlock(&b->mu);
            if (!post) {
                if (cuMemFree_v2(held[n]) != CUDA_SUCCESS)
                    FAIL("thread %d: a free", me);
                __atomic_fetch_sub(&owes[me], hsize[n], __ATOMIC_ACQ_REL);
            }
        }
    }
    while (n) {
        n--;
        if (cuMemFree_v2(held[n]) != CUDA_SUCCESS)
            FAIL("thread %d: a free at the end", me);
        __atomic_fetch_sub(&owes[me], hsize[n], __ATOMIC_ACQ_REL);
    }
    pthread_barrier_wait(&parked); /* every post made */
    drain_box(me);
    CUdeviceptr p;
    for (int i = 0; i < LEFT; i++)
        if (cuMemAlloc_v2(&p, 8192) != CUDA_SUCCESS)
            FAIL("thread %d: its last allocations", me);
    if (cuMemFree_v2(p) != CUDA_SUCCESS)
        FAIL("thread %d: a free", me);
    if (cuMemAlloc_v2(&p, 8192) != CUDA_SUCCESS) /* LEFT live again */
        FAIL("thread %d: its last allocation", me);
    pthread_barrier_wait(&parked);  /* main checks while this thread holds its credit */
    pthread_barrier_wait(&released);
    return NULL;
}

static void check_live(const char *when)
{
    unsigned long long want = (unsigned long long)THREADS * LEFT * 8192;
    unsigned long long live = tl_guard_live(0);
    if (live != want)
        FAIL("%s: the guard says %llu bytes live, %llu are", when, live, want);
    size_t free_b = 0, total = 0;
    TL_CHECK(cuMemGetInfo_v2(&free_b, &total));
    if (total != LIMIT || free_b != LIMIT - want)
        FAIL("%s: cuMemGetInfo says %zu free of %zu, want %llu of %llu", when, free_b, total,
             (unsigned long long)(LIMIT - want), (unsigned long long)LIMIT);
}

int main(void)
{
    ctx = tl_setup(0);
    for (int i = 0; i < THREADS; i++)
        pthread_mutex_init(&box[i].mu, NULL);
    pthread_barrier_init(&parked, NULL, THREADS + 1);
    pthread_barrier_init(&released, NULL, THREADS + 1);
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i);
    pthread_barrier_wait(&parked);
    pthread_barrier_wait(&parked);
    check_live("threads alive");
    if (cuMemFree_v2((CUdeviceptr)0x123400) != CUDA_ERROR_INVALID_VALUE)
        FAIL("a pointer never allocated: not CUDA_ERROR_INVALID_VALUE");
    /* while the others wait (no allocation can take the address again) */
    CUdeviceptr p;
    TL_CHECK(cuMemAlloc_v2(&p, 8192));
    if (cuMemFree_v2(p) != CUDA_SUCCESS || cuMemFree_v2(p) != CUDA_ERROR_INVALID_VALUE)
        FAIL("a pointer freed twice is not CUDA_ERROR_INVALID_VALUE the second time");
    check_live("threads alive, after a pair of this thread's");
    pthread_barrier_wait(&released);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    check_live("threads exited");
    if (!failures)
        printf("threadquota: ok\n");
    return failures != 0;
}
