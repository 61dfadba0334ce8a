/*
 * hooks_vmm.c - virtual memory management (SPEC §2): physical handles from
 * cuMemCreate count against the quota of the device they live on; mappings
 * and reserved address ranges are tracked and reported, not counted.
 */
#include "hooks/intercept.h"

GMG_EXPORT CUresult CUDAAPI cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
                                        const CUmemAllocationProp *prop, unsigned long long flags)
{
    gmg_enter(H_cuMemCreate);
    struct gmg_op op;
    if (!handle || !prop)
        return CALL_REAL(cuMemCreate, handle, size, prop, flags);
    int on_device = prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE;
    CUresult r = gmg_begin(&op, GMG_FAM_VMM, on_device ? prop->location.id : -1, size, on_device);
    if (r != CUDA_SUCCESS)
        return r;
    if (on_device)
        op.dev = prop->location.id;
    r = CALL_REAL(cuMemCreate, handle, size, prop, flags);
    gmg_end(&op, r, GMG_SPACE_VMM, r == CUDA_SUCCESS ? *handle : 0, size, size);
    return r;
}

GMG_EXPORT CUresult CUDAAPI cuMemRelease(CUmemGenericAllocationHandle handle)
{
    gmg_enter(H_cuMemRelease);
    struct gmg_alloc *a = gmg_free_take(GMG_SPACE_VMM, handle);
    CUresult r = CALL_REAL(cuMemRelease, handle);
    gmg_free_done(a, r, handle);
    return r;
}

GMG_EXPORT CUresult CUDAAPI cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                                     unsigned long long flags)
{
    gmg_enter(H_cuMemMap);
    struct gmg_alloc phys;
    int dev = gmg_track_lookup(GMG_SPACE_VMM, handle, &phys) ? phys.device : -1;
    struct gmg_op op;
    gmg_begin(&op, GMG_FAM_VMM_MAP, dev, size, 0);
    if (dev >= 0)
        op.dev = dev;
    CUresult r = CALL_REAL(cuMemMap, ptr, size, offset, handle, flags);
    gmg_end(&op, r, GMG_SPACE_MAP, ptr, size, size);
    return r;
}

GMG_EXPORT CUresult CUDAAPI cuMemUnmap(CUdeviceptr ptr, size_t size)
{
    gmg_enter(H_cuMemUnmap);
    CUresult r = CALL_REAL(cuMemUnmap, ptr, size);
    if (r == CUDA_SUCCESS) {
        struct gmg_alloc *a = gmg_track_remove(GMG_SPACE_MAP, ptr);
        if (a && a->size >= size)
            gmg_drop_record(a, NULL);
        else {
            /* one unmap over several mappings: drop all inside the range */
            if (a)
                gmg_drop_record(a, NULL);
            gmg_track_remove_range(GMG_SPACE_MAP, ptr, size, gmg_drop_record, NULL);
        }
    }
    return r;
}

GMG_EXPORT CUresult CUDAAPI cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr,
                                                unsigned long long flags)
{
    gmg_enter(H_cuMemAddressReserve);
    struct gmg_op op;
    if (!ptr)
        return CALL_REAL(cuMemAddressReserve, ptr, size, alignment, addr, flags);
    gmg_begin(&op, GMG_FAM_VA, -1, size, 0);
    CUresult r = CALL_REAL(cuMemAddressReserve, ptr, size, alignment, addr, flags);
    gmg_end(&op, r, GMG_SPACE_VA, r == CUDA_SUCCESS ? *ptr : 0, size, size);
    return r;
}

GMG_EXPORT CUresult CUDAAPI cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
    gmg_enter(H_cuMemAddressFree);
    struct gmg_alloc *a = gmg_free_take(GMG_SPACE_VA, ptr);
    CUresult r = CALL_REAL(cuMemAddressFree, ptr, size);
    gmg_free_done(a, r, ptr);
    return r;
}
