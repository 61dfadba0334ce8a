/*
 * create.c - cuMemCreate handles that hold no device quota: one the driver
 * fails (location -1) keeps none, one in host memory is counted on no
 * device.
 *
 *   vmm_create vmm_badloc   40 cuMemCreate at location -1, then the whole
 *                           limit (GPUMEM_LIMIT=8M) in one allocation
 *   vmm_create vmm_host     a handle in host memory, device 1's context current
 *                           (GPUSIM_DEVICES=2, GPUMEM_LIMIT=1M)
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include "../integration/testlib.h"

static void vmm_badloc(void)
{
    CUmemAllocationProp p = tl_vmm_prop(-1);
    CUmemGenericAllocationHandle h;
    int failed = 0;
    for (int i = 0; i < 40; i++)
        failed += cuMemCreate(&h, 2 << 20, &p, 0) != CUDA_SUCCESS;
    CUdeviceptr d;
    CUresult r = cuMemAlloc_v2(&d, 8 << 20);
    printf("failed creates %d; then alloc of the whole limit: %d; guard %llu\n", failed, (int)r, tl_guard_live(0));
}

NOINLINE static void vmm_host(void)
{
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_HOST;
    CUmemGenericAllocationHandle h;
    CUdevice d1;
    CUcontext c1;
    CHECK(cuDeviceGet(&d1, 1));
    CHECK(cuDevicePrimaryCtxRetain(&c1, d1));
    CHECK(cuCtxSetCurrent(c1));
    CUresult r = cuMemCreate(&h, 2 << 20, &prop, 0);
    printf("vmm_host: %d; guard %llu %llu sim %llu %llu\n", (int)r, tl_guard_live(0), tl_guard_live(1), tl_sim_live(0), tl_sim_live(1));
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: vmm_create vmm_badloc|vmm_host\n");
        return 2;
    }
    const char *m = argv[1];
    tl_setup(0);
    if (!strcmp(m, "vmm_badloc")) vmm_badloc();
    else if (!strcmp(m, "vmm_host")) vmm_host();
    else {
        fprintf(stderr, "unknown mode %s\n", m);
        return 2;
    }
    fflush(stdout);
    return 0;
}
