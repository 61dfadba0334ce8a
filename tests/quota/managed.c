/*
 * managed.c - GPUMEM_COUNT_MANAGED: 8 MiB of managed memory, then 4 MiB and
 * 1 byte of linear memory (GPUMEM_LIMIT=4M). Counted by default; with 0,
 * tracked and reported, never counted.
 *
 *   managed
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

int main(void)
{
    tl_setup(0);
    managed_site();
    fflush(stdout);
    return 0;
}
