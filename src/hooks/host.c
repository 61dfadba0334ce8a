/*
 * hooks_host.c - pinned host memory and IPC mappings: tracked and reported,
 * never counted against the device quota (SPEC §2).
 */
#include "hooks/intercept.h"

static CUresult host_alloc(void **pp, size_t bytes, int id, CUresult (*call)(void **, size_t, unsigned), unsigned flags)
{
    struct gmg_op op;
    gmg_enter((enum gmg_hook_id)id);
    if (!pp)
        return call(pp, bytes, flags);
    gmg_begin(&op, GMG_FAM_HOST, -1, bytes, 0);
    CUresult r = call(pp, bytes, flags);
    gmg_end(&op, r, GMG_SPACE_HOST, r == CUDA_SUCCESS ? (uintptr_t)*pp : 0, bytes, bytes);
    return r;
}

static CUresult call_host_v2(void **pp, size_t b, unsigned f) { (void)f; return CALL_REAL(cuMemAllocHost_v2, pp, b); }
static CUresult call_host_v1(void **pp, size_t b, unsigned f) { (void)f; return CALL_REAL(cuMemAllocHost, pp, (unsigned)b); }
static CUresult call_hostalloc(void **pp, size_t b, unsigned f) { return CALL_REAL(cuMemHostAlloc, pp, b, f); }

GMG_EXPORT CUresult CUDAAPI cuMemAllocHost_v2(void **pp, size_t bytesize)
{
    return host_alloc(pp, bytesize, H_cuMemAllocHost_v2, call_host_v2, 0);
}

GMG_EXPORT CUresult CUDAAPI cuMemAllocHost(void **pp, unsigned int bytesize)
{
    return host_alloc(pp, bytesize, H_cuMemAllocHost, call_host_v1, 0);
}

GMG_EXPORT CUresult CUDAAPI cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)
{
    return host_alloc(pp, bytesize, H_cuMemHostAlloc, call_hostalloc, Flags);
}

GMG_EXPORT CUresult CUDAAPI cuMemFreeHost(void *p)
{
    gmg_enter(H_cuMemFreeHost);
    struct gmg_free f;
    gmg_free_take(&f, GMG_SPACE_HOST, (uintptr_t)p);
    CUresult r = CALL_REAL(cuMemFreeHost, p);
    gmg_free_done(&f, r);
    return r;
}

static CUresult host_register(void *p, size_t bytes, unsigned flags, int v2)
{
    struct gmg_op op;
    gmg_begin(&op, GMG_FAM_HOST_REGISTER, -1, bytes, 0);
    CUresult r = v2 ? CALL_REAL(cuMemHostRegister_v2, p, bytes, flags)
                    : CALL_REAL(cuMemHostRegister, p, bytes, flags);
    gmg_end(&op, r, GMG_SPACE_HOST, (uintptr_t)p, bytes, bytes);
    return r;
}

GMG_EXPORT CUresult CUDAAPI cuMemHostRegister_v2(void *p, size_t bytesize, unsigned int Flags)
{
    gmg_enter(H_cuMemHostRegister_v2);
    return host_register(p, bytesize, Flags, 1);
}

GMG_EXPORT CUresult CUDAAPI cuMemHostRegister(void *p, size_t bytesize, unsigned int Flags)
{
    gmg_enter(H_cuMemHostRegister);
    return host_register(p, bytesize, Flags, 0);
}

GMG_EXPORT CUresult CUDAAPI cuMemHostUnregister(void *p)
{
    gmg_enter(H_cuMemHostUnregister);
    struct gmg_free f;
    gmg_free_take(&f, GMG_SPACE_HOST, (uintptr_t)p);
    CUresult r = CALL_REAL(cuMemHostUnregister, p);
    gmg_free_done(&f, r);
    return r;
}

/* ------------------------------------------------------------------- IPC */

/* Another process's memory mapped here: recorded, never counted (SPEC
 * §2), at the size the driver says the mapping has. */
static void imported_end(struct gmg_op *op, CUresult r, const CUdeviceptr *pdptr)
{
    size_t size = 0;
    if (r == CUDA_SUCCESS && REAL(cuMemGetAddressRange_v2))
        REAL(cuMemGetAddressRange_v2)(NULL, &size, *pdptr);
    gmg_end(op, r, GMG_SPACE_DEVPTR, r == CUDA_SUCCESS ? *pdptr : 0, size, size);
}

static CUresult ipc_open(CUdeviceptr *pdptr, CUipcMemHandle handle, unsigned flags, int v2)
{
    struct gmg_op op;
    if (!pdptr)
        return v2 ? CALL_REAL(cuIpcOpenMemHandle_v2, pdptr, handle, flags)
                  : CALL_REAL(cuIpcOpenMemHandle, pdptr, handle, flags);
    gmg_begin(&op, GMG_FAM_IPC, -1, 0, 0);
    CUresult r = v2 ? CALL_REAL(cuIpcOpenMemHandle_v2, pdptr, handle, flags)
                    : CALL_REAL(cuIpcOpenMemHandle, pdptr, handle, flags);
    imported_end(&op, r, pdptr);
    return r;
}

/* A pool allocation another process exported (cuMemPoolExportPointer),
 * from the pool imported here: imported memory, like an IPC handle's, named
 * for its own call; the program frees it with cuMemFree or cuMemFreeAsync,
 * which drop it. */
GMG_EXPORT CUresult CUDAAPI cuMemPoolImportPointer(CUdeviceptr *ptr_out, CUmemoryPool pool,
                                                   CUmemPoolPtrExportData *shareData)
{
    gmg_enter(H_cuMemPoolImportPointer);
    struct gmg_op op;
    if (!ptr_out)
        return CALL_REAL(cuMemPoolImportPointer, ptr_out, pool, shareData);
    gmg_begin(&op, GMG_FAM_POOL_IMPORT, -1, 0, 0);
    CUresult r = CALL_REAL(cuMemPoolImportPointer, ptr_out, pool, shareData);
    imported_end(&op, r, ptr_out);
    return r;
}

GMG_EXPORT CUresult CUDAAPI cuIpcOpenMemHandle_v2(CUdeviceptr *pdptr, CUipcMemHandle handle, unsigned int Flags)
{
    gmg_enter(H_cuIpcOpenMemHandle_v2);
    return ipc_open(pdptr, handle, Flags, 1);
}

GMG_EXPORT CUresult CUDAAPI cuIpcOpenMemHandle(CUdeviceptr *pdptr, CUipcMemHandle handle, unsigned int Flags)
{
    gmg_enter(H_cuIpcOpenMemHandle);
    return ipc_open(pdptr, handle, Flags, 0);
}

GMG_EXPORT CUresult CUDAAPI cuIpcCloseMemHandle(CUdeviceptr dptr)
{
    gmg_enter(H_cuIpcCloseMemHandle);
    struct gmg_free f;
    gmg_free_take(&f, GMG_SPACE_DEVPTR, dptr);
    CUresult r = CALL_REAL(cuIpcCloseMemHandle, dptr);
    gmg_free_done(&f, r);
    return r;
}
