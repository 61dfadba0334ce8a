/*
 * per_site.c - a refusal message once per call site, however often the site
 * is refused; every refusal counted. Two call sites refused 3 and 2 times
 * (GPUMEM_LIMIT=1M), beside 512 KiB kept.
 *
 *   refusal_sites
 *   refusal_sites many K   K call sites (each a path through a binary
 *                          recursion) ask the device for 1 GiB once each
 *   refusal_sites twodev K the same on device 0, then on device 1
 *   refusal_sites burst K  K threads, each at a call site of its own, all
 *                          refused by the driver at once (more than the
 *                          report thread's queue holds), then each site
 *                          again, one at a time
 *   refusal_sites both N   one call site asks for 512 MiB (over a 256 MiB
 *                          GPUMEM_LIMIT: the quota refuses) and 128 MiB (of
 *                          a 64 MiB device: the driver refuses), in that
 *                          order (N = 0) or the other (N = 1)
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include "../integration/testlib.h"

#include <pthread.h>

/* volatile: the loops stay loops (an unrolled loop is several call sites) */
static volatile int tries_a = 3, tries_b = 2;

NOINLINE static int refused_site_a(void)
{
    CUdeviceptr p;
    int n = 0;
    for (int i = 0; i < tries_a; i++)
        n += cuMemAlloc_v2(&p, 2 << 20) == CUDA_ERROR_OUT_OF_MEMORY;
    return n;
}

NOINLINE static int refused_site_b(void)
{
    CUdeviceptr p;
    int n = 0;
    for (int i = 0; i < tries_b; i++)
        n += cuMemAlloc_v2(&p, 4 << 20) == CUDA_ERROR_OUT_OF_MEMORY;
    return n;
}

NOINLINE static void kept(void) { CUdeviceptr p; CHECK(cuMemAlloc_v2(&p, 512 << 10)); }

static void refuse(void)
{
    kept();
    int a = refused_site_a(), b = refused_site_b();
    printf("refuse: %d + %d refused; guard %llu sim %llu\n", a, b, tl_guard_live(0), tl_sim_live(0));
}

static volatile int sink;
static int refused_many;
NOINLINE static void down0(int depth, unsigned path);
NOINLINE static void down1(int depth, unsigned path);
/* the path's bits choose down0 or down1 at each level: 2^depth stacks (two
 * functions, so that each level's frame names its choice) */
#define DOWN(n)                                                                     \
    NOINLINE static void down##n(int depth, unsigned path)                          \
    {                                                                               \
        CUdeviceptr p;                                                              \
        if (depth == 0)                                                             \
            __atomic_fetch_add(&refused_many, cuMemAlloc_v2(&p, 1ull << 30) == CUDA_ERROR_OUT_OF_MEMORY, \
                               __ATOMIC_RELAXED);                                    \
        else if (path & 1)                                                          \
            down1(depth - 1, path >> 1);                                            \
        else                                                                        \
            down0(depth - 1, path >> 1);                                            \
        __atomic_fetch_add(&sink, n + 1, __ATOMIC_RELAXED); /* no tail call: each level stays a frame */ \
    }
DOWN(0)
DOWN(1)

static void many(int k)
{
    int depth = 0;
    while ((1 << depth) < k)
        depth++;
    for (int i = 0; i < k; i++)
        down0(depth, (unsigned)i);
    printf("many: %d of %d refused\n", refused_many, k);
}

static pthread_barrier_t burst_bar;
static int burst_depth;

static int burst_alone; /* the second round: one thread at a time, no barrier */

static void *burst_thread(void *arg)
{
    CHECK(cuCtxSetCurrent(tl_ctx));
    if (!burst_alone)
        pthread_barrier_wait(&burst_bar);
    down0(burst_depth, (unsigned)(uintptr_t)arg);
    return NULL;
}

static void burst(int k)
{
    while ((1 << burst_depth) < k)
        burst_depth++;
    pthread_t t[256];
    if (k > 256)
        k = 256;
    pthread_barrier_init(&burst_bar, NULL, (unsigned)k);
    for (int i = 0; i < k; i++)
        pthread_create(&t[i], NULL, burst_thread, (void *)(uintptr_t)i);
    for (int i = 0; i < k; i++)
        pthread_join(t[i], NULL);
    burst_alone = 1; /* each site again, from the same stack: a thread's */
    for (int i = 0; i < k; i++) {
        pthread_create(&t[i], NULL, burst_thread, (void *)(uintptr_t)i);
        pthread_join(t[i], NULL);
    }
    printf("burst: %d of %d refused\n", refused_many, 2 * k);
}

NOINLINE static CUresult both_site(size_t n)
{
    CUdeviceptr p;
    CUresult r = cuMemAlloc_v2(&p, n);
    if (r == CUDA_SUCCESS)
        cuMemFree_v2(p);
    return r;
}

static void both(int order)
{
    size_t first = order ? 128u << 20 : 512u << 20, then = order ? 512u << 20 : 128u << 20;
    CUresult a = both_site(first), b = both_site(then);
    printf("both: %d %d\n", (int)a, (int)b);
}

int main(int argc, char **argv)
{
    tl_setup(0);
    if (argc > 2 && !strcmp(argv[1], "many"))
        many(atoi(argv[2]));
    else if (argc > 2 && !strcmp(argv[1], "twodev")) {
        many(atoi(argv[2]));
        tl_setup(1);
        many(atoi(argv[2]));
    } else if (argc > 2 && !strcmp(argv[1], "burst"))
        burst(atoi(argv[2]));
    else if (argc > 2 && !strcmp(argv[1], "both"))
        both(atoi(argv[2]));
    else
        refuse();
    fflush(stdout);
    return 0;
}
