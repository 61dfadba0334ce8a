/*
 * entry_points.c - the legacy (pre-_v2) entry points count what the driver
 * holds: 2D and 3D arrays by their descriptors, pitch by the pitch; IPC gets
 * its flag through.
 *
 *   legacy_entry_points
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include "../integration/testlib.h"

NOINLINE static void legacy(void)
{
    CUDA_ARRAY_DESCRIPTOR_v1 d2 = { 256, 256, CU_AD_FORMAT_FLOAT, 1 };          /* 262144 bytes */
    CUDA_ARRAY3D_DESCRIPTOR_v1 d3 = { 32, 32, 8, CU_AD_FORMAT_FLOAT, 2, 0 };     /* 65536 bytes  */
    CUarray a2, a3;
    CUdeviceptr_v1 p;
    unsigned int pitch = 0;
    CUresult r2 = cuArrayCreate(&a2, &d2);
    printf("legacy: array %d guard %llu sim %llu", (int)r2, tl_guard_live(0), tl_sim_live(0));
    CUresult r3 = cuArray3DCreate(&a3, &d3);
    printf("; 3d %d guard %llu sim %llu", (int)r3, tl_guard_live(0), tl_sim_live(0));
    CUresult rp = cuMemAllocPitch(&p, &pitch, 1000, 100, 4);
    printf("; pitch %d (%u) guard %llu sim %llu", (int)rp, pitch, tl_guard_live(0), tl_sim_live(0));
    CHECK(cuArrayDestroy(a2));
    CHECK(cuArrayDestroy(a3));
    CHECK(cuMemFree(p));
    printf("; freed guard %llu sim %llu", tl_guard_live(0), tl_sim_live(0));
    /* IPC: the driver asks for its one flag */
    CUdeviceptr src, mapped = 0;
    CUipcMemHandle h;
    CHECK(cuMemAlloc_v2(&src, 1 << 20));
    CHECK(cuIpcGetMemHandle(&h, src));
    CUresult ri = cuIpcOpenMemHandle(&mapped, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
    if (ri == CUDA_SUCCESS)
        CHECK(cuIpcCloseMemHandle(mapped));
    printf("; ipc %d\n", (int)ri);
}

int main(void)
{
    tl_setup(0);
    legacy();
    fflush(stdout);
    return 0;
}
