/*
 * untracked.c - the guard out of memory for its records (aligned_alloc
 * failing: tests/oom/nomem.c, preloaded before it; or the guard's realloc:
 * tests/integration/oomshim.c): what it could not track stays counted, its
 * reports say so, GPUMEM_EXITCODE still sees a leak. tests/oom/untracked.sh
 * runs it; scripts/stress.sh sweeps nomem and nomem_refuse
 * (tests/stress/stress.c).
 *
 *   untracked nomem N         N allocations held, then freed, while the guard's
 *                             table cannot grow
 *   untracked nomem_leak N    N allocations, all but the last freed, the same way
 *   untracked nomem_refuse    three allocations of 1 MiB held and a fourth refused
 *                             (GPUMEM_LIMIT=3M), the same way
 *   untracked nomem_vmm       a handle created, mapped, released and unmapped,
 *                             the same way: the guard never counts less than
 *                             the driver holds
 *   untracked reclaimed_leak  one allocation never freed, reclaimed by
 *                             cuDevicePrimaryCtxReset (a leak all the same)
 *   untracked nomem_ranges L  the same way: 50 allocations, all freed but the
 *                             last when L is 1; a handle mapped in a reserved
 *                             range, all undone; a second range reserved and
 *                             kept (no allocation, so no leak)
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include "../integration/testlib.h"

#include <unistd.h>

static void nomem(int n)
{
    CUdeviceptr *p = calloc((size_t)n, sizeof *p);
    int ok = 0, freed = 0;
    for (int i = 0; p && i < n; i++)
        ok += cuMemAlloc_v2(&p[i], 512) == CUDA_SUCCESS;
    unsigned long long held = tl_guard_live(0);
    for (int i = 0; p && i < ok; i++)
        freed += cuMemFree_v2(p[i]) == CUDA_SUCCESS;
    /* an address range: never counted against the quota, so, untracked, it
     * adds nothing to what the report says stays counted */
    CUdeviceptr va;
    CHECK(cuMemAddressReserve(&va, 1ull << 30, 0, 0, 0));
    CHECK(cuMemAddressFree(va, 1ull << 30));
    unsigned long long after = tl_guard_live(0);
    printf("nomem: %d allocs, %d frees; guard %llu while held; after the frees sim %llu, guard %s\n", ok, freed, held,
           (unsigned long long)tl_sim(0).live,
           after == 0 ? "0" : after % 512 == 0 && after <= held ? "the untracked bytes" : "wrong");
    printf("nomem: untracked %llu bytes\n", after); /* the exit report must say as many */
    free(p);
}

/* n allocations, all but the last freed: with the guard's table out of
 * memory, none is tracked, and the exit report must still find one leak */
static void nomem_leak(int n)
{
    CUdeviceptr p;
    for (int i = 0; i < n; i++) {
        CHECK(cuMemAlloc_v2(&p, 4096));
        if (i + 1 < n)
            CHECK(cuMemFree_v2(p));
    }
    printf("nomem_leak: %d allocations, %d freed\n", n, n - 1);
}

/* three allocations of 1 MiB held, the fourth refused (GPUMEM_LIMIT=3M),
 * the same way: the refusal message cannot list what holds the bytes, and
 * must not say they were freed */
static void nomem_refuse(void)
{
    CUdeviceptr p[4];
    for (int i = 0; i < 3; i++)
        CHECK(cuMemAlloc_v2(&p[i], 1 << 20));
    CUresult r = cuMemAlloc_v2(&p[3], 1 << 20);
    printf("nomem_refuse: the fourth %s\n", r == CUDA_ERROR_OUT_OF_MEMORY ? "refused" : "not refused");
    usleep(300000); /* the reporter thread explains it meanwhile */
    for (int i = 0; i < 3; i++)
        CHECK(cuMemFree_v2(p[i]));
}

static void nomem_vmm(void)
{
    CUdeviceptr va;
    CUmemGenericAllocationHandle h;
    CUmemAllocationProp p = tl_vmm_prop(0);
    CHECK(cuMemCreate(&h, 2 << 20, &p, 0));
    CHECK(cuMemAddressReserve(&va, 2 << 20, 0, 0, 0));
    CHECK(cuMemMap(va, 2 << 20, 0, h, 0));
    CHECK(cuMemRelease(h)); /* memory lives until unmapped */
    int under = tl_guard_live(0) < tl_sim(0).live;
    CHECK(cuMemUnmap(va, 2 << 20));
    CHECK(cuMemAddressFree(va, 2 << 20));
    under |= tl_guard_live(0) < tl_sim(0).live;
    printf("nomem_vmm: guard %s the driver; sim %llu at the end\n", under ? "below" : "never below",
           (unsigned long long)tl_sim(0).live);
}

/* A leak that only a context teardown reclaimed: for tests/oom/untracked.sh,
 * with the guard out of memory for its list of such (liboomshim.so). */
static void reclaimed_leak(void)
{
    CUdeviceptr p;
    CHECK(cuMemAlloc_v2(&p, 4096));
    CHECK(cuDevicePrimaryCtxReset(0));
    printf("reclaimed_leak: 4096 bytes left to the reset\n");
}

/* With the guard's table out of memory, nothing is tracked: reserved ranges
 * and mappings must count as leaks no more than when they are tracked, and
 * a range freed must not stand for an allocation's free. `leak`: the last
 * of the 50 allocations is never freed. */
static void nomem_ranges(int leak)
{
    CUdeviceptr p, va, kept;
    for (int i = 0; i < 50; i++) {
        CHECK(cuMemAlloc_v2(&p, 4096));
        if (i < 49 || !leak)
            CHECK(cuMemFree_v2(p));
    }
    CUmemGenericAllocationHandle h;
    CUmemAllocationProp pr = tl_vmm_prop(0);
    CHECK(cuMemCreate(&h, 2 << 20, &pr, 0));
    CHECK(cuMemAddressReserve(&va, 2 << 20, 0, 0, 0));
    CHECK(cuMemMap(va, 2 << 20, 0, h, 0));
    CHECK(cuMemUnmap(va, 2 << 20));
    CHECK(cuMemRelease(h));
    CHECK(cuMemAddressFree(va, 2 << 20));
    CHECK(cuMemAddressReserve(&kept, 1ull << 30, 0, 0, 0)); /* never freed: no leak */
    printf("nomem_ranges: %d allocations, %d freed; one range kept\n", 50, leak ? 49 : 50);
}

static int untracked_mode(int argc, char **argv)
{
    const char *m = argv[1];
    int n = argc > 2 ? atoi(argv[2]) : 0;
    if (!strcmp(m, "nomem")) nomem(n);
    else if (!strcmp(m, "nomem_leak")) nomem_leak(n);
    else if (!strcmp(m, "nomem_refuse")) nomem_refuse();
    else if (!strcmp(m, "nomem_vmm")) nomem_vmm();
    else if (!strcmp(m, "nomem_ranges")) nomem_ranges(n);
    else if (!strcmp(m, "reclaimed_leak")) reclaimed_leak();
    else return 0;
    return 1;
}

#ifndef TL_NO_MAIN
int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: untracked MODE [N]\n");
        return 2;
    }
    tl_setup(0);
    if (!untracked_mode(argc, argv)) {
        fprintf(stderr, "unknown mode %s\n", argv[1]);
        return 2;
    }
    fflush(stdout);
    return 0;
}
#endif
