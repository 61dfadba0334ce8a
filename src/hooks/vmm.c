/*
 * hooks_vmm.c - virtual memory management (SPEC §2): physical handles from
 * cuMemCreate count against the quota of the device they live on; mappings
 * and reserved address ranges are tracked and reported, not counted. A
 * handle released while still mapped keeps counting until its last unmap,
 * as the driver keeps its memory.
 */
#include "base/limit_parse.h"
#include "base/log.h"
#include "core/heaps.h"
#include "hooks/intercept.h"

GMG_EXPORT CUresult CUDAAPI cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
                                        const CUmemAllocationProp *prop, unsigned long long flags)
{
    gmg_enter(H_cuMemCreate);
    struct gmg_op op;
    if (!handle || !prop)
        return CALL_REAL(cuMemCreate, handle, size, prop, flags);
    int on_device = prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE;
    int id = prop->location.id;
    if (on_device && (id < 0 || id >= GMG_MAX_DEVICES)) {
        /* not a device the guard can count against: the driver says */
        CUresult r = CALL_REAL(cuMemCreate, handle, size, prop, flags);
        if (r == CUDA_SUCCESS)
            gmg_debug("cuMemCreate on location %d succeeded: not counted", id);
        return r;
    }
    /* a handle in host memory is pinned host memory: a family of its own,
     * so that no refusal of a device lists it among what holds the quota */
    CUresult r = gmg_begin(&op, on_device ? GMG_FAM_VMM : GMG_FAM_VMM_HOST, on_device ? id : -1, size, on_device);
    if (r != CUDA_SUCCESS)
        return r;
    r = CALL_REAL(cuMemCreate, handle, size, prop, flags);
    gmg_end(&op, r, GMG_SPACE_VMM, r == CUDA_SUCCESS ? *handle : 0, size, size);
    return r;
}

GMG_EXPORT CUresult CUDAAPI cuMemRelease(CUmemGenericAllocationHandle handle)
{
    gmg_enter(H_cuMemRelease);
    if (gmg_track_vmm_is_mapped(handle)) {
        /* the memory lives on until its last mapping goes (SPEC §5) */
        CUresult r = CALL_REAL(cuMemRelease, handle);
        struct gmg_gone drop;
        if (r == CUDA_SUCCESS && gmg_track_vmm_released(handle, &drop))
            gmg_drop_record(&drop, NULL);
        return r;
    }
    struct gmg_free f;
    gmg_free_take(&f, GMG_SPACE_VMM, handle);
    CUresult r = CALL_REAL(cuMemRelease, handle);
    gmg_free_done(&f, r);
    return r;
}

GMG_EXPORT CUresult CUDAAPI cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                                     unsigned long long flags)
{
    gmg_enter(H_cuMemMap);
    struct gmg_alloc phys;
    int dev = gmg_track_lookup(GMG_SPACE_VMM, handle, &phys, NULL) ? phys.device : -1;
    struct gmg_op op;
    gmg_begin(&op, GMG_FAM_VMM_MAP, dev, size, 0);
    if (dev >= 0)
        op.dev = dev;
    CUresult r = CALL_REAL(cuMemMap, ptr, size, offset, handle, flags);
    /* a mapping's "requested" is its handle. The handle counts the mapping
     * even when its record could not be kept (out of memory): a release
     * while mapped must not give back the handle's bytes, which the driver
     * still holds; cuMemUnmap, finding no record, never takes it back, so
     * the handle then stays counted (too much, never too little) */
    gmg_end(&op, r, GMG_SPACE_MAP, ptr, size, handle);
    if (r == CUDA_SUCCESS)
        gmg_track_vmm_mapped(handle, offset + size);
    return r;
}

/* One more reference to a mapped address's handle, which the caller will
 * release: the handle stays live until it is (NCCL frees its buffers so:
 * retain, release, unmap, release). */
GMG_EXPORT CUresult CUDAAPI cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *handle, void *addr)
{
    gmg_enter(H_cuMemRetainAllocationHandle);
    CUresult r = CALL_REAL(cuMemRetainAllocationHandle, handle, addr);
    if (r == CUDA_SUCCESS && handle)
        gmg_track_vmm_mapped(*handle, 0);
    return r;
}

/* Another process's memory (NCCL's buffers between the GPUs of a node):
 * reported with the IPC mappings, never counted (SPEC §2), so that its
 * release is no unknown free. Sized by the mappings made of it. The driver
 * may give back a handle this process holds already (its own export, or a
 * second import of one: cuda.h promises no handle of its own): that is one
 * more reference to it, as a retain is, and its record (counted, if it is
 * a cuMemCreate's) must stay, not be replaced by an uncounted one. */
GMG_EXPORT CUresult CUDAAPI cuMemImportFromShareableHandle(CUmemGenericAllocationHandle *handle, void *osHandle,
                                                           CUmemAllocationHandleType shHandleType)
{
    gmg_enter(H_cuMemImportFromShareableHandle);
    if (!handle)
        return CALL_REAL(cuMemImportFromShareableHandle, handle, osHandle, shHandleType);
    struct gmg_op op;
    gmg_begin(&op, GMG_FAM_IPC, -1, 0, 0);
    CUresult r = CALL_REAL(cuMemImportFromShareableHandle, handle, osHandle, shHandleType);
    if (r == CUDA_SUCCESS && gmg_track_vmm_mapped(*handle, 0))
        return r; /* uncounted: nothing reserved to settle */
    gmg_end(&op, r, GMG_SPACE_VMM, r == CUDA_SUCCESS ? *handle : 0, 0, 0);
    return r;
}

/* A mapping is gone: its handle has one mapping fewer, and a handle the
 * program released goes with its last one. */
static void drop_mapping(const struct gmg_gone *map, void *unused)
{
    (void)unused;
    struct gmg_gone phys;
    gmg_drop_record(map, NULL);
    if (gmg_track_vmm_unmapped(map->aux, &phys)) /* a mapping's ninth word is its handle */
        gmg_drop_record(&phys, NULL);
}

GMG_EXPORT CUresult CUDAAPI cuMemUnmap(CUdeviceptr ptr, size_t size)
{
    gmg_enter(H_cuMemUnmap);
    CUresult r = CALL_REAL(cuMemUnmap, ptr, size);
    if (r == CUDA_SUCCESS) {
        struct gmg_gone a;
        int found = gmg_track_remove(GMG_SPACE_MAP, ptr, &a);
        int whole = found && a.size >= size;
        if (found)
            drop_mapping(&a, NULL);
        if (!whole) /* one unmap over several mappings: all inside the range */
            gmg_track_remove_range(GMG_SPACE_MAP, ptr, size, NULL, drop_mapping, NULL);
        if (gmg_heaps_live()) /* an NVTX heap over it: its segment is gone from there */
            gmg_heaps_unmapped(ptr, size);
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
    struct gmg_free f;
    gmg_free_take(&f, GMG_SPACE_VA, ptr);
    CUresult r = CALL_REAL(cuMemAddressFree, ptr, size);
    gmg_free_done(&f, r);
    return r;
}
