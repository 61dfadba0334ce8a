/*
 * over_limit.c - NULL outputs of 13 allocating calls with sizes far over any
 * limit the test sets: the driver's own error, not the guard's refusal.
 *
 *   nulls_big
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include "../integration/testlib.h"

/* NULL outputs with sizes far over any limit the test sets: the driver's
 * own error, not the guard's refusal */
static void nulls_big(void)
{
    size_t pitch;
    unsigned int pitch32;
    CUDA_ARRAY_DESCRIPTOR d2 = { 1024, 1024, CU_AD_FORMAT_FLOAT, 4 };
    CUDA_ARRAY_DESCRIPTOR_v1 d1 = { 1024, 1024, CU_AD_FORMAT_FLOAT, 4 };
    CUDA_ARRAY3D_DESCRIPTOR d3 = { 256, 256, 16, CU_AD_FORMAT_FLOAT, 4, 0 };
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    CUdeviceptr p;
    CUdeviceptr_v1 p32;
    printf("%d %d %d %d %d %d %d %d %d %d %d %d %d\n", (int)cuMemAlloc_v2(NULL, 16 << 20), (int)cuMemAlloc(NULL, 16 << 20),
           (int)cuMemAllocPitch_v2(NULL, &pitch, 4096, 4096, 4), (int)cuMemAllocPitch_v2(&p, NULL, 4096, 4096, 4),
           (int)cuMemAllocPitch(NULL, &pitch32, 4096, 4096, 4), (int)cuMemAllocPitch(&p32, NULL, 4096, 4096, 4),
           (int)cuMemAllocManaged(NULL, 16 << 20, CU_MEM_ATTACH_GLOBAL), (int)cuMemAllocAsync(NULL, 16 << 20, NULL),
           (int)cuMemCreate(NULL, 16 << 20, &prop, 0), (int)cuArrayCreate_v2(NULL, &d2), (int)cuArrayCreate(NULL, &d1),
           (int)cuArray3DCreate_v2(NULL, &d3), (int)cuMipmappedArrayCreate(NULL, &d3, 2));
}

int main(void)
{
    tl_setup(0);
    nulls_big();
    fflush(stdout);
    return 0;
}
