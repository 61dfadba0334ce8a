/*
 * races.c - VMM handle references raced on two threads: a handle released
 * while another thread unmaps it, released twice at once, or a retain's
 * reference taken and dropped while the handle's own goes. The guard's count
 * must follow the driver's every round.
 *
 *   vmm_races N   N rounds
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include "../integration/testlib.h"

#include <pthread.h>
#include <stdint.h>

#define MiB (1024ull * 1024)

struct vmm_job {
    pthread_barrier_t *go;
    CUmemGenericAllocationHandle h;
    CUdeviceptr va;
    size_t size;
    int op; /* 0 release, 1 unmap, 2 retain+release */
    CUresult r;
};

static void *vmm_worker(void *p)
{
    struct vmm_job *j = p;
    TL_CHECK(cuCtxSetCurrent(tl_ctx));
    pthread_barrier_wait(j->go);
    if (j->op == 0) {
        j->r = cuMemRelease(j->h);
    } else if (j->op == 1) {
        j->r = cuMemUnmap(j->va, j->size);
    } else {
        CUmemGenericAllocationHandle again;
        j->r = cuMemRetainAllocationHandle(&again, (void *)(uintptr_t)j->va);
        if (j->r == CUDA_SUCCESS)
            j->r = cuMemRelease(again);
    }
    return NULL;
}

static void race2(struct vmm_job *a, struct vmm_job *b)
{
    pthread_barrier_t go;
    pthread_t t[2];
    pthread_barrier_init(&go, NULL, 2);
    a->go = b->go = &go;
    pthread_create(&t[0], NULL, vmm_worker, a);
    pthread_create(&t[1], NULL, vmm_worker, b);
    pthread_join(t[0], NULL);
    pthread_join(t[1], NULL);
    pthread_barrier_destroy(&go);
}

/* A handle mapped once: released by one thread while another unmaps its
 * mapping, or released twice at once (the driver refuses one), or a retain's
 * reference taken and dropped while the handle's own goes; a handle never
 * mapped released twice at once. Every round ends
 * with the memory gone: the guard's count must follow the driver's. */
static void vmm_races(int rounds)
{
    CUmemAllocationProp prop = tl_vmm_prop(0);
    CUdeviceptr va;
    const size_t sz = 2 * MiB;
    int bad = 0;
    TL_CHECK(cuMemAddressReserve(&va, sz, 0, 0, 0));
    for (int i = 0; i < rounds; i++) {
        CUmemGenericAllocationHandle h;
        TL_CHECK(cuMemCreate(&h, sz, &prop, 0));
        if (i % 4 != 3)
            TL_CHECK(cuMemMap(va, sz, 0, h, 0));
        struct vmm_job a = { .h = h, .va = va, .size = sz }, b = a;
        switch (i % 4) {
        case 0: /* release || unmap */
            a.op = 0; b.op = 1;
            race2(&a, &b);
            break;
        case 1: /* release || release (one is refused), then unmap */
            a.op = 0; b.op = 0;
            race2(&a, &b);
            if ((a.r == CUDA_SUCCESS) + (b.r == CUDA_SUCCESS) != 1)
                bad++;
            TL_CHECK(cuMemUnmap(va, sz));
            break;
        case 2: /* retain+release || release, then unmap */
            a.op = 2; b.op = 0;
            race2(&a, &b);
            TL_CHECK(cuMemUnmap(va, sz));
            break;
        case 3: /* never mapped: release || release (one is refused) */
            a.op = 0; b.op = 0;
            race2(&a, &b);
            if ((a.r == CUDA_SUCCESS) + (b.r == CUDA_SUCCESS) != 1)
                bad++;
            break;
        }
        if (a.r != CUDA_SUCCESS && a.op != 0)
            bad++;
        if (tl_guard_live(0) != tl_sim_live(0)) {
            printf("vmm races: round %d (case %d): guard %llu sim %llu\n", i, i % 4, tl_guard_live(0), tl_sim_live(0));
            bad++;
        }
    }
    TL_CHECK(cuMemAddressFree(va, sz));
    printf("vmm races: %d rounds, %d wrong; guard %llu sim %llu\n", rounds, bad, tl_guard_live(0), tl_sim_live(0));
}

int main(int argc, char **argv)
{
    tl_setup(0);
    vmm_races(argc > 1 ? atoi(argv[1]) : 100);
    fflush(stdout);
    return 0;
}
