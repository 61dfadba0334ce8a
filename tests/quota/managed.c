/*
 * managed.c - GPUMEM_COUNT_MANAGED: 8 MiB of managed memory, then 4 MiB and
 * 1 byte of linear memory (GPUMEM_LIMIT=4M). Counted by default; with 0,
 * tracked and reported, never counted. With "pools": 8 MiB from each of
 * CUDA 13's managed memory pools instead (the default one at the host, the
 * current one at device 0, one made at device 0), as cuMemAllocManaged's.
 *
 *   managed [pools]
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include "../integration/testlib.h"

NOINLINE static void managed_site(void)
{
    CUdeviceptr m, a, b;
    CUresult rm = cuMemAllocManaged(&m, 8 << 20, CU_MEM_ATTACH_GLOBAL);
    CUresult ra = cuMemAlloc_v2(&a, 4 << 20), rb = cuMemAlloc_v2(&b, 1);
    printf("managed: managed 8MiB %d, 4MiB %d, +1 %d; guard %llu sim %llu\n", (int)rm, (int)ra, (int)rb,
           tl_guard_live(0), tl_sim_live(0));
}

NOINLINE static void managed_pool_site(void)
{
    CUmemLocation host = { .type = CU_MEM_LOCATION_TYPE_HOST, .id = 0 }, dev = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0 };
    CUmemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = CU_MEM_ALLOCATION_TYPE_MANAGED;
    props.location = dev;
    CUmemoryPool p[3];
    TL_CHECK(cuMemGetDefaultMemPool(&p[0], &host, CU_MEM_ALLOCATION_TYPE_MANAGED));
    TL_CHECK(cuMemGetMemPool(&p[1], &dev, CU_MEM_ALLOCATION_TYPE_MANAGED));
    TL_CHECK(cuMemPoolCreate(&p[2], &props));
    CUdeviceptr m[3], a, b;
    CUresult rm[3];
    for (int i = 0; i < 3; i++)
        rm[i] = cuMemAllocFromPoolAsync(&m[i], 8 << 20, p[i], NULL);
    CUresult ra = cuMemAlloc_v2(&a, 4 << 20), rb = cuMemAlloc_v2(&b, 1);
    printf("managed pools: 8MiB %d %d %d, 4MiB %d, +1 %d; guard %llu\n", (int)rm[0], (int)rm[1], (int)rm[2], (int)ra,
           (int)rb, tl_guard_live(0));
}

int main(int argc, char **argv)
{
    tl_setup(0);
    if (argc > 1 && !strcmp(argv[1], "pools"))
        managed_pool_site();
    else
        managed_site();
    fflush(stdout);
    return 0;
}
