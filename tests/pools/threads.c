/*
 * threads.c - pools of two devices made, used and destroyed on 8 threads at
 * once, all under device 0's context: each allocation counts on its pool's
 * device.
 *
 *   pool_threads N   N rounds (GPUSIM_DEVICES=2 GPUMEM_LIMIT=0:64M,1:4M)
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include "../integration/testlib.h"

#include <pthread.h>

#define MiB (1024ull * 1024)

struct pjob {
    int rounds, dev;
    int bad;
};

static void *pool_worker(void *p)
{
    struct pjob *j = p;
    TL_CHECK(cuCtxSetCurrent(tl_ctx)); /* device 0's context, whichever pool */
    CUmemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = j->dev;
    for (int i = 0; i < j->rounds; i++) {
        CUmemoryPool pool;
        CUdeviceptr a;
        TL_CHECK(cuMemPoolCreate(&pool, &props));
        CUresult r = cuMemAllocFromPoolAsync(&a, 1 * MiB, pool, NULL);
        if (r == CUDA_SUCCESS)
            TL_CHECK(cuMemFreeAsync(a, NULL));
        else
            j->bad++;
        TL_CHECK(cuMemPoolDestroy(pool));
    }
    return NULL;
}

/* Threads make, use and destroy pools of device 0 and device 1 at once,
 * all with device 0's context current; device 1's limit is 4 MiB, device
 * 0's 64 MiB: each pool's allocation must count on its own device. */
static void pool_threads(int rounds)
{
    enum { N = 8 };
    pthread_t t[N];
    struct pjob j[N];
    for (int i = 0; i < N; i++) {
        j[i] = (struct pjob){ .rounds = rounds, .dev = i % 2 };
        pthread_create(&t[i], NULL, pool_worker, &j[i]);
    }
    int bad = 0;
    for (int i = 0; i < N; i++) {
        pthread_join(t[i], NULL);
        bad += j[i].bad;
    }
    printf("pool threads: %d x %d rounds, refused %d; device 0 guard %llu sim %llu; device 1 guard %llu sim %llu\n", N,
           rounds, bad, tl_guard_live(0), tl_sim_live(0), tl_guard_live(1), tl_sim_live(1));
}

int main(int argc, char **argv)
{
    tl_setup(0);
    pool_threads(argc > 1 ? atoi(argv[1]) : 100);
    fflush(stdout);
    return 0;
}
