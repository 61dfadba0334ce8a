/*
 * injected.c - the simulated driver failing calls (GPUSIM_FAIL=NAME:N,...):
 * each failure passes through, the quota keeps nothing of a failed
 * allocation, and a failed free keeps its record counted.
 *
 *   injected families   every family allocated and freed 12 times: after
 *                       each call the guard counts what the driver holds
 *   injected handles    cuMemCreate, cuArrayCreate, cuMemAllocAsync, then
 *                       cuMemRelease and cuMemFreeAsync, each failed once
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include "../integration/testlib.h"

#define MiB (1024ull * 1024)

/* Every family allocated and freed while the simulator fails some calls
 * (GPUSIM_FAIL): after each call, the guard counts what the driver holds. */
static int off_driver;

static void check_even(void)
{
    if (tl_guard_live(0) != tl_sim(0).live)
        off_driver++;
}

static void families(void)
{
    CUmemAllocationProp p = tl_vmm_prop(0);
    int failures = 0;
    for (int i = 0; i < 12; i++) {
        CUdeviceptr d = 0, m = 0, a = 0, pd = 0;
        size_t pitch;
        CUarray arr = NULL;
        CUmemGenericAllocationHandle h = 0;
        CUDA_ARRAY_DESCRIPTOR ad = { 256, 256, CU_AD_FORMAT_FLOAT, 1 };
        failures += cuMemAlloc_v2(&d, 1 << 20) != CUDA_SUCCESS; check_even();
        failures += cuMemAllocManaged(&m, 1 << 19, CU_MEM_ATTACH_GLOBAL) != CUDA_SUCCESS; check_even();
        failures += cuMemAllocAsync(&a, 3 << 18, NULL) != CUDA_SUCCESS; check_even();
        failures += cuMemAllocPitch_v2(&pd, &pitch, 1000, 64, 4) != CUDA_SUCCESS; check_even();
        failures += cuArrayCreate_v2(&arr, &ad) != CUDA_SUCCESS; check_even();
        failures += cuMemCreate(&h, 2 << 20, &p, 0) != CUDA_SUCCESS; check_even();
        /* frees: a refused one leaves the memory with the driver; free it again */
        for (int k = 0; k < 2; k++) {
            if (d && cuMemFree_v2(d) == CUDA_SUCCESS) d = 0; else if (d) failures++;
            check_even();
            if (a && cuMemFreeAsync(a, NULL) == CUDA_SUCCESS) a = 0; else if (a) failures++;
            check_even();
            if (h && cuMemRelease(h) == CUDA_SUCCESS) h = 0; else if (h) failures++;
            check_even();
        }
        if (m) cuMemFree_v2(m);
        if (pd) cuMemFree_v2(pd);
        if (arr) cuArrayDestroy(arr);
        check_even();
    }
    printf("injected: %d failed calls, guard off the driver %d times, guard %llu sim %llu\n", failures, off_driver,
           tl_guard_live(0), (unsigned long long)tl_sim(0).live);
}

/* GPUSIM_FAIL=cuMemCreate:2,cuArrayCreate_v2:1,cuMemAllocAsync:2,cuMemRelease:1,cuMemFreeAsync:1:
 * each failure passes through, the quota keeps nothing of a failed
 * allocation, and a failed free keeps its record counted. */
static void handles(void)
{
    CUmemAllocationProp prop = tl_vmm_prop(0);
    CUmemGenericAllocationHandle h1, h2;
    CUdeviceptr a1, a2;
    CUarray ar;
    CUDA_ARRAY_DESCRIPTOR d = { 256, 256, CU_AD_FORMAT_FLOAT, 1 };
    CUresult c1 = cuMemCreate(&h1, 2 * MiB, &prop, 0), c2 = cuMemCreate(&h2, 2 * MiB, &prop, 0);
    CUresult ar1 = cuArrayCreate_v2(&ar, &d), ar2 = cuArrayCreate_v2(&ar, &d);
    CUresult as1 = cuMemAllocAsync(&a1, MiB, NULL), as2 = cuMemAllocAsync(&a2, MiB, NULL);
    unsigned long long g1 = tl_guard_live(0), s1 = tl_sim_live(0);
    CUresult rel1 = cuMemRelease(h1), rel2 = cuMemRelease(h1);
    CUresult fa1 = cuMemFreeAsync(a1, NULL), fa2 = cuMemFreeAsync(a1, NULL);
    TL_CHECK(cuArrayDestroy(ar));
    printf("injected: create %d %d array %d %d async %d %d (guard %llu sim %llu); release %d %d freeasync %d %d; "
           "guard %llu sim %llu\n", (int)c1, (int)c2, (int)ar1, (int)ar2, (int)as1, (int)as2, g1, s1, (int)rel1,
           (int)rel2, (int)fa1, (int)fa2, tl_guard_live(0), tl_sim_live(0));
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: injected families|handles\n");
        return 2;
    }
    const char *m = argv[1];
    tl_setup(0);
    if (!strcmp(m, "families")) families();
    else if (!strcmp(m, "handles")) handles();
    else {
        fprintf(stderr, "unknown mode %s\n", m);
        return 2;
    }
    fflush(stdout);
    return 0;
}
