/*
 * threads.c - stream capture on 8 threads at once (streams of their own,
 * their per-thread default streams): 8 MiB in each capture under a 4 MiB
 * limit always goes through, uncounted; outside the captures the same
 * streams' allocations count.
 *
 *   capture_threads capture_threads N   N rounds, half the threads on their
 *                                       per-thread default stream
 *   capture_threads capture_ptds N      N rounds, all of them
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include "../integration/testlib.h"

#include <pthread.h>

#define MiB (1024ull * 1024)

static CUresult capture_limit_alloc(CUstream s, CUdeviceptr *p) { return cuMemAllocAsync(p, 8 * MiB, s); }

struct cjob {
    int rounds, ptds;
    int refused_captured, bad_counted;
};

/* Each thread captures on a stream of its own (or its own per-thread
 * default stream), allocates 8 MiB in the capture (a graph's: never refused
 * under a 4 MiB limit), frees it in the capture, ends it; then allocates
 * 1 MiB on the same stream, outside any capture: counted. */
static void *capture_worker(void *p)
{
    struct cjob *j = p;
    TL_CHECK(cuCtxSetCurrent(tl_ctx));
    CUstream s = NULL;
    if (!j->ptds)
        TL_CHECK(cuStreamCreate(&s, 0));
    for (int i = 0; i < j->rounds; i++) {
        CUdeviceptr x, y;
        CUgraph g;
        if (j->ptds)
            TL_CHECK(cuStreamBeginCapture_v2_ptsz(NULL, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
        else
            TL_CHECK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_RELAXED));
        CUresult r = j->ptds ? cuMemAllocAsync_ptsz(&x, 8 * MiB, NULL) : capture_limit_alloc(s, &x);
        if (r != CUDA_SUCCESS)
            j->refused_captured++;
        else
            TL_CHECK(j->ptds ? cuMemFreeAsync_ptsz(x, NULL) : cuMemFreeAsync(x, s));
        TL_CHECK(j->ptds ? cuStreamEndCapture_ptsz(NULL, &g) : cuStreamEndCapture(s, &g));
        TL_CHECK(cuGraphDestroy(g));
        r = j->ptds ? cuMemAllocAsync_ptsz(&y, 256 * 1024, NULL) : cuMemAllocAsync(&y, 256 * 1024, s);
        if (r == CUDA_SUCCESS)
            TL_CHECK(j->ptds ? cuMemFreeAsync_ptsz(y, NULL) : cuMemFreeAsync(y, s));
        else if (r != CUDA_ERROR_OUT_OF_MEMORY)
            j->bad_counted++;
    }
    if (s)
        TL_CHECK(cuStreamDestroy_v2(s));
    return NULL;
}

static void capture_threads(int rounds, int ptds)
{
    enum { N = 8 };
    pthread_t t[N];
    struct cjob j[N];
    for (int i = 0; i < N; i++) {
        j[i] = (struct cjob){ .rounds = rounds, .ptds = ptds || (i % 2) };
        pthread_create(&t[i], NULL, capture_worker, &j[i]);
    }
    int refused = 0, bad = 0;
    for (int i = 0; i < N; i++) {
        pthread_join(t[i], NULL);
        refused += j[i].refused_captured;
        bad += j[i].bad_counted;
    }
    /* every capture ended: the next 8 MiB is memory, refused under 4 MiB */
    CUstream s;
    CUdeviceptr p;
    TL_CHECK(cuStreamCreate(&s, 0));
    CUresult after = cuMemAllocAsync(&p, 8 * MiB, s);
    TL_CHECK(cuStreamDestroy_v2(s));
    printf("capture threads: %d x %d rounds, captured refused %d, bad %d; after all ended 8 MiB %d; guard %llu sim %llu\n",
           N, rounds, refused, bad, (int)after, tl_guard_live(0), tl_sim_live(0));
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: capture_threads capture_threads|capture_ptds N\n");
        return 2;
    }
    const char *m = argv[1];
    int n = argc > 2 ? atoi(argv[2]) : 100;
    tl_setup(0);
    if (!strcmp(m, "capture_threads")) capture_threads(n, 0);
    else if (!strcmp(m, "capture_ptds")) capture_threads(n, 1);
    else {
        fprintf(stderr, "unknown mode %s\n", m);
        return 2;
    }
    fflush(stdout);
    return 0;
}
