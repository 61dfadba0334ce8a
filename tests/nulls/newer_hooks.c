/*
 * newer_hooks.c - NULL outputs and invalid handles of pools, VMM references,
 * mipmaps, captures and graph nodes, and failed lookups of entry points:
 * every return code is the driver's, and a failed lookup's pointer stays as
 * it was (compared with an unguarded run); nothing recorded.
 *
 *   nulls_hooks
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include "../integration/testlib.h"

#include <stdint.h>

#define MiB (1024ull * 1024)

/* NULL outputs and invalid handles of the newer hooks: every return code
 * is the driver's (compared with an unguarded run), nothing recorded. */
static void nulls2(void)
{
    CUmemoryPool pool, def;
    CUmemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = 0;
    CUmemLocation loc = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0 };
    CUdeviceptr p, va;
    CUmemGenericAllocationHandle h;
    CUgraph g;
    CUgraphNode n;
    TL_CHECK(cuDeviceGetDefaultMemPool(&def, 0));
    TL_CHECK(cuMemAddressReserve(&va, 2 * MiB, 0, 0, 0));
    TL_CHECK(cuGraphCreate(&g, 0));
    CUDA_ARRAY3D_DESCRIPTOR d3 = { 16, 16, 0, CU_AD_FORMAT_FLOAT, 1, 0 };
    CUmipmappedArray m = NULL; /* 0 levels are 1 (cuda.h clamps): that one is made */
    CUarray a;
    CUgraphNodeParams fp;
    memset(&fp, 0, sizeof fp);
    fp.type = CU_GRAPH_NODE_TYPE_MEM_FREE;
    fp.free.dptr = va;
    CUDA_MEM_ALLOC_NODE_PARAMS gp = tl_graph_params(4096, 0);
    gp.poolProps.location.id = 1000; /* no such device */
    CUresult r[] = {
        cuMemPoolCreate(NULL, &props), cuMemPoolCreate(&pool, NULL), cuMemPoolDestroy(NULL),
        cuDeviceGetDefaultMemPool(NULL, 0), cuDeviceGetDefaultMemPool(&pool, 1000), cuDeviceGetMemPool(NULL, 0),
        cuMemGetDefaultMemPool(NULL, &loc, CU_MEM_ALLOCATION_TYPE_PINNED),
        cuMemGetMemPool(NULL, &loc, CU_MEM_ALLOCATION_TYPE_PINNED),
        cuMemAllocFromPoolAsync(NULL, 16, def, NULL), cuMemAllocFromPoolAsync(&p, 16, NULL, NULL),
        cuMemAllocFromPoolAsync(&p, 16, def, (CUstream)(uintptr_t)0x1234),
        cuMemRetainAllocationHandle(NULL, (void *)(uintptr_t)va), cuMemRetainAllocationHandle(&h, (void *)(uintptr_t)va),
        cuMemImportFromShareableHandle(NULL, (void *)(uintptr_t)0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
        cuMemImportFromShareableHandle(&h, (void *)(uintptr_t)987, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
        cuMemMap(va, 2 * MiB, 0, 0, 0), cuMemUnmap(va, 2 * MiB), cuMemRelease(0),
        cuMipmappedArrayCreate(NULL, &d3, 2), cuMipmappedArrayCreate(&m, NULL, 2), cuMipmappedArrayCreate(&m, &d3, 0),
        cuArray3DCreate_v2(NULL, &d3), cuArray3DCreate_v2(&a, NULL),
        cuStreamBeginCapture_v2(NULL, CU_STREAM_CAPTURE_MODE_GLOBAL), cuStreamEndCapture(NULL, NULL),
        cuStreamEndCapture_ptsz(NULL, NULL), cuStreamBeginCapture_v2((CUstream)(uintptr_t)0x1234, 0),
        cuGraphAddNode(&n, g, NULL, 0, &fp), cuGraphAddMemAllocNode(&n, g, NULL, 0, &gp),
        cuMemAllocAsync(&p, 16, (CUstream)(uintptr_t)0x1234),
    };
    for (size_t i = 0; i < sizeof r / sizeof r[0]; i++)
        printf("%d ", (int)r[i]);
    printf("\n");
    /* lookups that fail leave the caller's pointer as it was: a NULL name
     * (cuGetProcAddress_v2), a name the driver lacks (the legacy call) */
    void *sent = (void *)(uintptr_t)0x5e17, *p1 = sent, *p2 = sent;
    CUdriverProcAddressQueryResult st;
    CUresult l1 = cuGetProcAddress_v2(NULL, &p1, 12000, 0, &st), l2 = cuGetProcAddress("cuNoSuchCall", &p2, 12000, 0);
    printf("%d %d %d %d\n", (int)l1, p1 == sent, (int)l2, p2 == sent);
    if (m)
        TL_CHECK(cuMipmappedArrayDestroy(m));
    TL_CHECK(cuGraphDestroy(g));
    TL_CHECK(cuMemAddressFree(va, 2 * MiB));
}

int main(void)
{
    tl_setup(0);
    nulls2();
    fflush(stdout);
    return 0;
}
