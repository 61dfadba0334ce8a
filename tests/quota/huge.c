/*
 * huge.c - requests no device can hold (SIZE_MAX and near it: linear,
 * pitched, array, managed), failed by the guard or the driver: the counters
 * stay exact, with no limit, under a limit and under GPUMEM_ON_LIMIT=warn.
 *
 *   huge
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include "../integration/testlib.h"

static void huge(void)
{
    CUdeviceptr d;
    size_t pitch;
    CUarray a;
    CUDA_ARRAY_DESCRIPTOR ad = { (size_t)1 << 40, (size_t)1 << 40, CU_AD_FORMAT_FLOAT, 4 };
    CUresult r0 = cuMemAlloc_v2(&d, SIZE_MAX); /* with nothing in use: no overflow, still no device has it */
    if (r0 == CUDA_SUCCESS)
        exit(5);
    CUdeviceptr before;
    CHECK(cuMemAlloc_v2(&before, 1 << 20)); /* something in use: the sum overflows */
    CUresult r1 = cuMemAlloc_v2(&d, SIZE_MAX - 4096);
    CUresult r2 = cuMemAllocPitch_v2(&d, &pitch, SIZE_MAX - 4096, 3, 4);
    CUresult r3 = cuArrayCreate_v2(&a, &ad);
    CUresult r4 = cuMemAllocManaged(&d, SIZE_MAX, CU_MEM_ATTACH_GLOBAL);
    size_t f = 0, t = 0;
    CHECK(cuMemGetInfo_v2(&f, &t));
    printf("huge: %d %d %d %d; guard %llu; free %zu of %zu\n", (int)r1, (int)r2, (int)r3, (int)r4, tl_guard_live(0),
           f, t);
    CHECK(cuMemAlloc_v2(&d, 1 << 20));
    printf("then 1MiB more: guard %llu\n", tl_guard_live(0));
}

int main(void)
{
    tl_setup(0);
    huge();
    fflush(stdout);
    return 0;
}
