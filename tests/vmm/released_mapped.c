/*
 * released_mapped.c - VMM handles released while mapped (as CUDA's samples
 * do): their memory stays with the driver until unmapped, and stays counted
 * until then.
 *
 *   released_mapped vmm_bypass   four 32 MiB handles mapped and released, then
 *                                60 MiB (GPUMEM_LIMIT=64M), before and after the unmaps
 *   released_mapped unmap_range  one cuMemUnmap over two mappings of released
 *                                handles, beside a linear allocation and another
 *                                mapping that stay
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include "../integration/testlib.h"

NOINLINE static void vmm_bypass(void)
{
    const size_t MiB = 1 << 20, H = 32 * MiB;
    CUdeviceptr va;
    CHECK(cuMemAddressReserve(&va, 4 * H, 0, 0, 0));
    CUmemAllocationProp p = tl_vmm_prop(0);
    int made = 0;
    for (int i = 0; i < 4; i++) {
        CUmemGenericAllocationHandle h;
        CUresult r = cuMemCreate(&h, H, &p, 0);
        printf("create %d: %d\n", i, (int)r);
        if (r != CUDA_SUCCESS)
            continue;
        CHECK(cuMemMap(va + (size_t)i * H, H, 0, h, 0));
        CHECK(cuMemRelease(h)); /* as CUDA's samples do: memory lives until unmapped */
        made++;
    }
    CUdeviceptr d;
    CUresult r = cuMemAlloc_v2(&d, 60 * MiB);
    printf("while mapped: alloc 60MiB %d, guard %llu, sim %llu\n", (int)r, tl_guard_live(0),
           (unsigned long long)tl_sim(0).live);
    for (int i = 0; i < made; i++)
        CHECK(cuMemUnmap(va + (size_t)i * H, H));
    r = cuMemAlloc_v2(&d, 60 * MiB);
    printf("after unmap: alloc 60MiB %d, guard %llu, sim %llu, sim peak %llu\n", (int)r, tl_guard_live(0),
           (unsigned long long)tl_sim(0).live, (unsigned long long)tl_sim(0).peak);
}

NOINLINE static void linear_stays(void) { CUdeviceptr p; CHECK(cuMemAlloc_v2(&p, 1 << 20)); }

NOINLINE static void unmap_range(void)
{
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    CUmemGenericAllocationHandle h1, h2, h3;
    CUdeviceptr va, other;
    linear_stays();
    CHECK(cuMemAddressReserve(&va, 8 << 20, 0, 0, 0));
    CHECK(cuMemAddressReserve(&other, 2 << 20, 0, 0, 0));
    CHECK(cuMemCreate(&h1, 2 << 20, &prop, 0));
    CHECK(cuMemCreate(&h2, 2 << 20, &prop, 0));
    CHECK(cuMemCreate(&h3, 2 << 20, &prop, 0));
    CHECK(cuMemMap(va, 2 << 20, 0, h1, 0));
    CHECK(cuMemMap(va + (2 << 20), 2 << 20, 0, h2, 0));
    CHECK(cuMemMap(other, 2 << 20, 0, h3, 0));
    CHECK(cuMemRelease(h1)); /* mapped: their memory stays until unmapped */
    CHECK(cuMemRelease(h2));
    printf("unmap_range: mapped guard %llu sim %llu", tl_guard_live(0), tl_sim_live(0));
    CHECK(cuMemUnmap(va, 4 << 20)); /* both mappings at once */
    printf("; unmapped guard %llu sim %llu\n", tl_guard_live(0), tl_sim_live(0));
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: released_mapped vmm_bypass|unmap_range\n");
        return 2;
    }
    const char *m = argv[1];
    tl_setup(0);
    if (!strcmp(m, "vmm_bypass")) vmm_bypass();
    else if (!strcmp(m, "unmap_range")) unmap_range();
    else {
        fprintf(stderr, "unknown mode %s\n", m);
        return 2;
    }
    fflush(stdout);
    return 0;
}
