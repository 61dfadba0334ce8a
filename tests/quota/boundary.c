/*
 * boundary.c - GPUMEM_LIMIT to the byte, family by family, on the pool's or
 * handle's device: another device's pool, cuMemCreate (released while
 * mapped), a graph node over the limit (never counted), arrays and mipmaps.
 *
 *   boundary   (GPUSIM_DEVICES=2 GPUMEM_LIMIT=0:8M,1:8M)
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include "../integration/testlib.h"

#define MiB (1024ull * 1024)

/* GPUMEM_LIMIT=0:8M,1:8M. Each family fills device 1 to the byte, and one
 * byte more is refused; device 0 never moves. Then everything is freed: 0. */
static void boundary(void)
{
    CUmemoryPool p1;
    CUdeviceptr a, b;
    CUresult r[16];
    int k = 0;
    TL_CHECK(cuDeviceGetDefaultMemPool(&p1, 1));
    /* pool of device 1, device 0 current */
    r[k++] = cuMemAllocFromPoolAsync(&a, 8 * MiB, p1, NULL);
    r[k++] = cuMemAllocFromPoolAsync(&b, 1, p1, NULL);
    TL_CHECK(cuMemFreeAsync(a, NULL));
    /* cuMemCreate on device 1 */
    CUmemAllocationProp prop = tl_vmm_prop(1);
    CUmemGenericAllocationHandle h, h2;
    r[k++] = cuMemCreate(&h, 8 * MiB, &prop, 0);
    r[k++] = cuMemCreate(&h2, 2 * MiB, &prop, 0);
    /* released while mapped: still counted until the unmap */
    CUdeviceptr va;
    TL_CHECK(cuMemAddressReserve(&va, 8 * MiB, 0, 0, 0));
    TL_CHECK(cuMemMap(va, 8 * MiB, 0, h, 0));
    TL_CHECK(cuMemRelease(h));
    r[k++] = cuMemCreate(&h2, 2 * MiB, &prop, 0);
    TL_CHECK(cuMemUnmap(va, 8 * MiB));
    r[k++] = cuMemCreate(&h2, 8 * MiB, &prop, 0);
    TL_CHECK(cuMemRelease(h2));
    TL_CHECK(cuMemAddressFree(va, 8 * MiB));
    /* a graph's allocation on device 1: never refused, never counted */
    CUgraph g;
    CUgraphNode n;
    TL_CHECK(cuGraphCreate(&g, 0));
    CUDA_MEM_ALLOC_NODE_PARAMS gp = tl_graph_params(64 * MiB, 1);
    r[k++] = cuGraphAddMemAllocNode(&n, g, NULL, 0, &gp);
    r[k++] = cuMemAllocFromPoolAsync(&a, 8 * MiB, p1, NULL);
    TL_CHECK(cuMemFreeAsync(a, NULL));
    TL_CHECK(cuGraphAddMemFreeNode(&n, g, NULL, 0, gp.dptr));
    TL_CHECK(cuGraphDestroy(g));
    /* device 0: arrays and mipmaps to the byte */
    CUDA_ARRAY_DESCRIPTOR d = { 1024, 512, CU_AD_FORMAT_FLOAT, 4 }; /* 8 MiB */
    CUDA_ARRAY_DESCRIPTOR d1 = { 1, 1, CU_AD_FORMAT_UNSIGNED_INT8, 1 };
    CUarray ar, ar1;
    r[k++] = cuArrayCreate_v2(&ar, &d);
    r[k++] = cuArrayCreate_v2(&ar1, &d1);
    TL_CHECK(cuArrayDestroy(ar));
    CUDA_ARRAY3D_DESCRIPTOR m3 = { 1024, 1024, 0, CU_AD_FORMAT_UNSIGNED_INT8, 4, 0 }; /* 4 MiB + 1 MiB + ... */
    CUmipmappedArray m;
    r[k++] = cuMipmappedArrayCreate(&m, &m3, 11); /* 4*(1M+256K+64K+16K+4K+1K+256+64+16+4+1) = 5592404 */
    CUdeviceptr rest;
    r[k++] = cuMemAlloc_v2(&rest, 8 * MiB - 5592404);
    r[k++] = cuMemAlloc_v2(&b, 1);
    TL_CHECK(cuMipmappedArrayDestroy(m));
    TL_CHECK(cuMemFree_v2(rest));
    printf("boundary:");
    for (int i = 0; i < k; i++)
        printf(" %d", (int)r[i]);
    printf("; device 0 guard %llu sim %llu; device 1 guard %llu sim %llu\n", tl_guard_live(0), tl_sim_live(0), tl_guard_live(1),
           tl_sim_live(1));
}

int main(void)
{
    tl_setup(0);
    boundary();
    fflush(stdout);
    return 0;
}
