/*
 * sim_procaddr.c - cuGetProcAddress and cuGetProcAddress_v2 of the simulated
 * driver. Like the real one, a lookup is answered by (name, requested
 * version, per-thread flag): the highest ABI whose version threshold is not
 * above the requested version, the _ptsz variant when
 * CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM is set and one exists, and
 * symbolStatus telling "not found" from "version not sufficient".
 *
 * Names the simulator does not implement but the CUDA 13.0 runtime asks for
 * (tests/data/cudart-13.0-getprocaddress.txt) answer with distinct stubs that
 * return CUDA_ERROR_NOT_SUPPORTED; they are generated into sim_stubs.c.
 */
#include "sim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define P(name, ver, ptsz, fn) { #name, ver, ptsz, (void *)fn },

const struct sim_proc sim_proc_table[] = {
    P(cuInit, 2000, 0, cuInit)
    P(cuDriverGetVersion, 2020, 0, cuDriverGetVersion)
    P(cuDeviceGet, 2000, 0, cuDeviceGet)
    P(cuDeviceGetCount, 2000, 0, cuDeviceGetCount)
    P(cuDeviceGetName, 2000, 0, cuDeviceGetName)
    P(cuDeviceTotalMem, 2000, 0, cuDeviceTotalMem)
    P(cuDeviceTotalMem, 3020, 0, cuDeviceTotalMem_v2)
    P(cuDeviceGetAttribute, 2000, 0, cuDeviceGetAttribute)
    P(cuDevicePrimaryCtxRetain, 7000, 0, cuDevicePrimaryCtxRetain)
    P(cuDevicePrimaryCtxRelease, 7000, 0, cuDevicePrimaryCtxRelease)
    P(cuDevicePrimaryCtxRelease, 11000, 0, cuDevicePrimaryCtxRelease_v2)
    P(cuDevicePrimaryCtxReset, 7000, 0, cuDevicePrimaryCtxReset)
    P(cuDevicePrimaryCtxReset, 11000, 0, cuDevicePrimaryCtxReset_v2)
    P(cuDevicePrimaryCtxGetState, 7000, 0, cuDevicePrimaryCtxGetState)
    P(cuDevicePrimaryCtxSetFlags, 7000, 0, cuDevicePrimaryCtxSetFlags)
    P(cuDevicePrimaryCtxSetFlags, 11000, 0, cuDevicePrimaryCtxSetFlags_v2)
    P(cuCtxCreate, 2000, 0, cuCtxCreate)
    P(cuCtxCreate, 3020, 0, cuCtxCreate_v2)
    P(cuCtxCreate, 11040, 0, cuCtxCreate_v3)
    P(cuCtxCreate, 12050, 0, cuCtxCreate_v4)
    P(cuCtxDestroy, 2000, 0, cuCtxDestroy)
    P(cuCtxDestroy, 4000, 0, cuCtxDestroy_v2)
    P(cuCtxSetCurrent, 4000, 0, cuCtxSetCurrent)
    P(cuCtxGetCurrent, 4000, 0, cuCtxGetCurrent)
    P(cuCtxPushCurrent, 2000, 0, cuCtxPushCurrent)
    P(cuCtxPushCurrent, 4000, 0, cuCtxPushCurrent_v2)
    P(cuCtxPopCurrent, 2000, 0, cuCtxPopCurrent)
    P(cuCtxPopCurrent, 4000, 0, cuCtxPopCurrent_v2)
    P(cuCtxGetDevice, 2000, 0, cuCtxGetDevice)
    P(cuCtxSynchronize, 2000, 0, cuCtxSynchronize)
    P(cuMemGetInfo, 2000, 0, cuMemGetInfo)
    P(cuMemGetInfo, 3020, 0, cuMemGetInfo_v2)
    P(cuMemAlloc, 2000, 0, cuMemAlloc)
    P(cuMemAlloc, 3020, 0, cuMemAlloc_v2)
    P(cuMemAllocPitch, 2000, 0, cuMemAllocPitch)
    P(cuMemAllocPitch, 3020, 0, cuMemAllocPitch_v2)
    P(cuMemFree, 2000, 0, cuMemFree)
    P(cuMemFree, 3020, 0, cuMemFree_v2)
    P(cuMemGetAddressRange, 3020, 0, cuMemGetAddressRange_v2)
    P(cuMemAllocManaged, 6000, 0, cuMemAllocManaged)
    P(cuMemAllocHost, 2000, 0, cuMemAllocHost)
    P(cuMemAllocHost, 3020, 0, cuMemAllocHost_v2)
    P(cuMemHostAlloc, 2020, 0, cuMemHostAlloc)
    P(cuMemFreeHost, 2000, 0, cuMemFreeHost)
    P(cuMemHostRegister, 4000, 0, cuMemHostRegister)
    P(cuMemHostRegister, 6050, 0, cuMemHostRegister_v2)
    P(cuMemHostUnregister, 4000, 0, cuMemHostUnregister)
    P(cuDeviceGetDefaultMemPool, 11020, 0, cuDeviceGetDefaultMemPool)
    P(cuMemPoolCreate, 11020, 0, cuMemPoolCreate)
    P(cuMemPoolDestroy, 11020, 0, cuMemPoolDestroy)
    P(cuMemPoolExportPointer, 11020, 0, cuMemPoolExportPointer)
    P(cuMemPoolImportPointer, 11020, 0, cuMemPoolImportPointer)
    P(cuMemAllocAsync, 11020, 0, cuMemAllocAsync)
    P(cuMemAllocAsync, 11020, 1, cuMemAllocAsync_ptsz)
    P(cuMemAllocFromPoolAsync, 11020, 0, cuMemAllocFromPoolAsync)
    P(cuMemAllocFromPoolAsync, 11020, 1, cuMemAllocFromPoolAsync_ptsz)
    P(cuMemFreeAsync, 11020, 0, cuMemFreeAsync)
    P(cuMemFreeAsync, 11020, 1, cuMemFreeAsync_ptsz)
    P(cuMemGetAllocationGranularity, 10020, 0, cuMemGetAllocationGranularity)
    P(cuMemCreate, 10020, 0, cuMemCreate)
    P(cuMemRelease, 10020, 0, cuMemRelease)
    P(cuMemAddressReserve, 10020, 0, cuMemAddressReserve)
    P(cuMemAddressFree, 10020, 0, cuMemAddressFree)
    P(cuMemMap, 10020, 0, cuMemMap)
    P(cuMemRetainAllocationHandle, 11000, 0, cuMemRetainAllocationHandle)
    P(cuMemExportToShareableHandle, 10020, 0, cuMemExportToShareableHandle)
    P(cuMemImportFromShareableHandle, 10020, 0, cuMemImportFromShareableHandle)
    P(cuMemUnmap, 10020, 0, cuMemUnmap)
    P(cuMemSetAccess, 10020, 0, cuMemSetAccess)
    P(cuArrayCreate, 2000, 0, cuArrayCreate)
    P(cuArrayCreate, 3020, 0, cuArrayCreate_v2)
    P(cuArray3DCreate, 2000, 0, cuArray3DCreate)
    P(cuArray3DCreate, 3020, 0, cuArray3DCreate_v2)
    P(cuArrayDestroy, 2000, 0, cuArrayDestroy)
    P(cuMipmappedArrayCreate, 5000, 0, cuMipmappedArrayCreate)
    P(cuMipmappedArrayDestroy, 5000, 0, cuMipmappedArrayDestroy)
    P(cuIpcGetMemHandle, 4010, 0, cuIpcGetMemHandle)
    P(cuIpcOpenMemHandle, 4010, 0, cuIpcOpenMemHandle)
    P(cuIpcOpenMemHandle, 11000, 0, cuIpcOpenMemHandle_v2)
    P(cuIpcCloseMemHandle, 4010, 0, cuIpcCloseMemHandle)
    P(cuGraphCreate, 10000, 0, cuGraphCreate)
    P(cuStreamBeginCapture, 10000, 0, cuStreamBeginCapture)
    P(cuStreamBeginCapture, 10000, 1, cuStreamBeginCapture_ptsz)
    P(cuStreamBeginCapture, 10010, 0, cuStreamBeginCapture_v2)
    P(cuStreamBeginCapture, 10010, 1, cuStreamBeginCapture_v2_ptsz)
    P(cuStreamBeginCaptureToGraph, 12030, 0, cuStreamBeginCaptureToGraph)
    P(cuStreamBeginCaptureToGraph, 12030, 1, cuStreamBeginCaptureToGraph_ptsz)
    P(cuStreamEndCapture, 10000, 0, cuStreamEndCapture)
    P(cuStreamEndCapture, 10000, 1, cuStreamEndCapture_ptsz)
    P(cuGraphDestroy, 10000, 0, cuGraphDestroy)
    P(cuGraphAddMemAllocNode, 11040, 0, cuGraphAddMemAllocNode)
    P(cuGraphAddMemFreeNode, 11040, 0, cuGraphAddMemFreeNode)
    P(cuGraphAddNode, 12020, 0, cuGraphAddNode)
    P(cuGraphAddNode, 12030, 0, cuGraphAddNode_v2)
    P(cuStreamCreate, 2000, 0, cuStreamCreate)
    P(cuStreamDestroy, 2000, 0, cuStreamDestroy)
    P(cuStreamDestroy, 4000, 0, cuStreamDestroy_v2)
    P(cuStreamSynchronize, 2000, 0, cuStreamSynchronize)
    P(cuGetErrorString, 6000, 0, cuGetErrorString)
    /* devices */
    P(cuDeviceComputeCapability, 2000, 0, cuDeviceComputeCapability)
    P(cuDeviceGetProperties, 2000, 0, cuDeviceGetProperties)
    P(cuDeviceGetUuid, 9020, 0, cuDeviceGetUuid)
    P(cuDeviceGetUuid, 11040, 0, cuDeviceGetUuid_v2)
    P(cuDeviceGetPCIBusId, 4010, 0, cuDeviceGetPCIBusId)
    P(cuDeviceGetByPCIBusId, 4010, 0, cuDeviceGetByPCIBusId)
    P(cuDeviceCanAccessPeer, 4000, 0, cuDeviceCanAccessPeer)
    P(cuDeviceGetP2PAttribute, 8000, 0, cuDeviceGetP2PAttribute)
    P(cuDeviceGetMemPool, 11020, 0, cuDeviceGetMemPool)
    P(cuDeviceSetMemPool, 11020, 0, cuDeviceSetMemPool)
    P(cuMemGetDefaultMemPool, 13000, 0, cuMemGetDefaultMemPool)
    P(cuMemGetMemPool, 13000, 0, cuMemGetMemPool)
    /* contexts */
    P(cuCtxGetDevice, 13000, 0, cuCtxGetDevice_v2)
    P(cuCtxSynchronize, 13000, 0, cuCtxSynchronize_v2)
    P(cuCtxGetFlags, 7000, 0, cuCtxGetFlags)
    P(cuCtxSetFlags, 12010, 0, cuCtxSetFlags)
    P(cuCtxGetApiVersion, 3020, 0, cuCtxGetApiVersion)
    P(cuCtxGetId, 12000, 0, cuCtxGetId)
    P(cuCtxGetLimit, 3010, 0, cuCtxGetLimit)
    P(cuCtxSetLimit, 3010, 0, cuCtxSetLimit)
    P(cuCtxGetStreamPriorityRange, 5050, 0, cuCtxGetStreamPriorityRange)
    P(cuCtxGetCacheConfig, 3020, 0, cuCtxGetCacheConfig)
    P(cuCtxSetCacheConfig, 3020, 0, cuCtxSetCacheConfig)
    P(cuCtxEnablePeerAccess, 4000, 0, cuCtxEnablePeerAccess)
    P(cuCtxDisablePeerAccess, 4000, 0, cuCtxDisablePeerAccess)
    /* streams and events */
    P(cuStreamCreateWithPriority, 5050, 0, cuStreamCreateWithPriority)
    P(cuStreamSynchronize, 7000, 1, cuStreamSynchronize_ptsz)
    P(cuStreamQuery, 2000, 0, cuStreamQuery)
    P(cuStreamQuery, 7000, 1, cuStreamQuery_ptsz)
    P(cuStreamWaitEvent, 3020, 0, cuStreamWaitEvent)
    P(cuStreamWaitEvent, 7000, 1, cuStreamWaitEvent_ptsz)
    P(cuStreamGetPriority, 5050, 0, cuStreamGetPriority)
    P(cuStreamGetPriority, 7000, 1, cuStreamGetPriority_ptsz)
    P(cuStreamGetFlags, 5050, 0, cuStreamGetFlags)
    P(cuStreamGetFlags, 7000, 1, cuStreamGetFlags_ptsz)
    P(cuStreamGetId, 12000, 0, cuStreamGetId)
    P(cuStreamGetId, 12000, 1, cuStreamGetId_ptsz)
    P(cuStreamGetCtx, 9020, 0, cuStreamGetCtx)
    P(cuStreamGetCtx, 9020, 1, cuStreamGetCtx_ptsz)
    P(cuStreamGetCtx, 12050, 0, cuStreamGetCtx_v2)
    P(cuStreamGetCtx, 12050, 1, cuStreamGetCtx_v2_ptsz)
    P(cuStreamGetDevice, 12080, 0, cuStreamGetDevice)
    P(cuStreamGetDevice, 12080, 1, cuStreamGetDevice_ptsz)
    P(cuStreamAddCallback, 5000, 0, cuStreamAddCallback)
    P(cuStreamAddCallback, 7000, 1, cuStreamAddCallback_ptsz)
    P(cuLaunchHostFunc, 10000, 0, cuLaunchHostFunc)
    P(cuLaunchHostFunc, 10000, 1, cuLaunchHostFunc_ptsz)
    P(cuStreamIsCapturing, 10000, 0, cuStreamIsCapturing)
    P(cuStreamIsCapturing, 10000, 1, cuStreamIsCapturing_ptsz)
    P(cuStreamGetCaptureInfo, 10010, 0, cuStreamGetCaptureInfo)
    P(cuStreamGetCaptureInfo, 10010, 1, cuStreamGetCaptureInfo_ptsz)
    P(cuStreamGetCaptureInfo, 11030, 0, cuStreamGetCaptureInfo_v2)
    P(cuStreamGetCaptureInfo, 11030, 1, cuStreamGetCaptureInfo_v2_ptsz)
    P(cuStreamGetCaptureInfo, 12030, 0, cuStreamGetCaptureInfo_v3)
    P(cuStreamGetCaptureInfo, 12030, 1, cuStreamGetCaptureInfo_v3_ptsz)
    P(cuEventCreate, 2000, 0, cuEventCreate)
    P(cuEventRecord, 2000, 0, cuEventRecord)
    P(cuEventRecord, 7000, 1, cuEventRecord_ptsz)
    P(cuEventRecordWithFlags, 11010, 0, cuEventRecordWithFlags)
    P(cuEventRecordWithFlags, 11010, 1, cuEventRecordWithFlags_ptsz)
    P(cuEventQuery, 2000, 0, cuEventQuery)
    P(cuEventSynchronize, 2000, 0, cuEventSynchronize)
    P(cuEventDestroy, 2000, 0, cuEventDestroy)
    P(cuEventDestroy, 4000, 0, cuEventDestroy_v2)
    P(cuEventElapsedTime, 2000, 0, cuEventElapsedTime)
    P(cuEventElapsedTime, 12080, 0, cuEventElapsedTime_v2)
    /* copies and sets */
    P(cuMemcpy, 4000, 0, cuMemcpy)
    P(cuMemcpy, 7000, 1, cuMemcpy_ptds)
    P(cuMemcpyHtoD, 2000, 0, cuMemcpyHtoD)
    P(cuMemcpyHtoD, 3020, 0, cuMemcpyHtoD_v2)
    P(cuMemcpyHtoD, 7000, 1, cuMemcpyHtoD_v2_ptds)
    P(cuMemcpyDtoH, 2000, 0, cuMemcpyDtoH)
    P(cuMemcpyDtoH, 3020, 0, cuMemcpyDtoH_v2)
    P(cuMemcpyDtoH, 7000, 1, cuMemcpyDtoH_v2_ptds)
    P(cuMemcpyDtoD, 2000, 0, cuMemcpyDtoD)
    P(cuMemcpyDtoD, 3020, 0, cuMemcpyDtoD_v2)
    P(cuMemcpyDtoD, 7000, 1, cuMemcpyDtoD_v2_ptds)
    P(cuMemcpyPeer, 4000, 0, cuMemcpyPeer)
    P(cuMemcpyPeer, 7000, 1, cuMemcpyPeer_ptds)
    P(cuMemcpyAsync, 4000, 0, cuMemcpyAsync)
    P(cuMemcpyAsync, 7000, 1, cuMemcpyAsync_ptsz)
    P(cuMemcpyHtoDAsync, 3020, 0, cuMemcpyHtoDAsync_v2)
    P(cuMemcpyHtoDAsync, 7000, 1, cuMemcpyHtoDAsync_v2_ptsz)
    P(cuMemcpyDtoHAsync, 3020, 0, cuMemcpyDtoHAsync_v2)
    P(cuMemcpyDtoHAsync, 7000, 1, cuMemcpyDtoHAsync_v2_ptsz)
    P(cuMemcpyDtoDAsync, 3020, 0, cuMemcpyDtoDAsync_v2)
    P(cuMemcpyDtoDAsync, 7000, 1, cuMemcpyDtoDAsync_v2_ptsz)
    P(cuMemcpyPeerAsync, 4000, 0, cuMemcpyPeerAsync)
    P(cuMemcpyPeerAsync, 7000, 1, cuMemcpyPeerAsync_ptsz)
    P(cuMemsetD8, 3020, 0, cuMemsetD8_v2)
    P(cuMemsetD8, 7000, 1, cuMemsetD8_v2_ptds)
    P(cuMemsetD16, 3020, 0, cuMemsetD16_v2)
    P(cuMemsetD16, 7000, 1, cuMemsetD16_v2_ptds)
    P(cuMemsetD32, 3020, 0, cuMemsetD32_v2)
    P(cuMemsetD32, 7000, 1, cuMemsetD32_v2_ptds)
    P(cuMemsetD2D8, 3020, 0, cuMemsetD2D8_v2)
    P(cuMemsetD2D16, 3020, 0, cuMemsetD2D16_v2)
    P(cuMemsetD2D32, 3020, 0, cuMemsetD2D32_v2)
    P(cuMemsetD8Async, 3020, 0, cuMemsetD8Async)
    P(cuMemsetD8Async, 7000, 1, cuMemsetD8Async_ptsz)
    P(cuMemsetD16Async, 3020, 0, cuMemsetD16Async)
    P(cuMemsetD16Async, 7000, 1, cuMemsetD16Async_ptsz)
    P(cuMemsetD32Async, 3020, 0, cuMemsetD32Async)
    P(cuMemsetD32Async, 7000, 1, cuMemsetD32Async_ptsz)
    P(cuMemsetD2D8Async, 3020, 0, cuMemsetD2D8Async)
    P(cuMemsetD2D16Async, 3020, 0, cuMemsetD2D16Async)
    P(cuMemsetD2D32Async, 3020, 0, cuMemsetD2D32Async)
    /* pointers, pinned memory, pools */
    P(cuMemHostGetDevicePointer, 3020, 0, cuMemHostGetDevicePointer_v2)
    P(cuMemHostGetFlags, 2030, 0, cuMemHostGetFlags)
    P(cuPointerGetAttribute, 4000, 0, cuPointerGetAttribute)
    P(cuPointerGetAttributes, 7000, 0, cuPointerGetAttributes)
    P(cuMemPoolGetAttribute, 11020, 0, cuMemPoolGetAttribute)
    P(cuMemPoolSetAttribute, 11020, 0, cuMemPoolSetAttribute)
    P(cuMemPoolTrimTo, 11020, 0, cuMemPoolTrimTo)
    P(cuMemPoolSetAccess, 11020, 0, cuMemPoolSetAccess)
    P(cuMemPoolGetAccess, 11020, 0, cuMemPoolGetAccess)
    P(cuGetErrorName, 6000, 0, cuGetErrorName)
    P(cuGetExportTable, 3000, 0, cuGetExportTable)
    P(cuGetProcAddress, 11030, 0, cuGetProcAddress)
    P(cuGetProcAddress, 12000, 0, cuGetProcAddress_v2)
};
const unsigned sim_proc_count = sizeof sim_proc_table / sizeof sim_proc_table[0];

static void consider(const struct sim_proc *t, unsigned n, const char *sym, int ver, int ptsz,
                     int *named, int *has_ptsz, const struct sim_proc **best)
{
    for (unsigned i = 0; i < n; i++) {
        if (strcmp(t[i].name, sym) != 0)
            continue;
        *named = 1;
        if (t[i].ptsz)
            *has_ptsz = 1;
        if (t[i].ptsz != ptsz || t[i].version > ver)
            continue;
        if (!*best || t[i].version > (*best)->version)
            *best = &t[i];
    }
}

/* GPUSIM_PROC_DISTINCT: the real driver's lookup table need not point at
 * its exported symbols. These trampolines (exported as simtr_NAME so that a
 * test can name them) stand for such entries: the guard must pick the ABI
 * by (name, version, flags) alone. */
#define TR(ret, name, params, args) SIM_EXPORT ret simtr_##name params { return name args; }
TR(CUresult, cuMemAlloc, (CUdeviceptr_v1 *d, unsigned int b), (d, b))
TR(CUresult, cuMemAlloc_v2, (CUdeviceptr *d, size_t b), (d, b))
TR(CUresult, cuMemFree, (CUdeviceptr_v1 p), (p))
TR(CUresult, cuMemFree_v2, (CUdeviceptr p), (p))
TR(CUresult, cuMemAllocPitch_v2, (CUdeviceptr *d, size_t *p, size_t w, size_t h, unsigned int e), (d, p, w, h, e))
TR(CUresult, cuMemAllocAsync, (CUdeviceptr *d, size_t b, CUstream s), (d, b, s))
TR(CUresult, cuMemAllocAsync_ptsz, (CUdeviceptr *d, size_t b, CUstream s), (d, b, s))
TR(CUresult, cuMemFreeAsync, (CUdeviceptr p, CUstream s), (p, s))
TR(CUresult, cuMemFreeAsync_ptsz, (CUdeviceptr p, CUstream s), (p, s))
TR(CUresult, cuMemGetInfo_v2, (size_t *f, size_t *t), (f, t))
TR(CUresult, cuDevicePrimaryCtxRelease_v2, (CUdevice d), (d))

static const struct { const char *name; int version; int ptsz; void *fn; } distinct[] = {
    { "cuMemAlloc", 2000, 0, (void *)simtr_cuMemAlloc },
    { "cuMemAlloc", 3020, 0, (void *)simtr_cuMemAlloc_v2 },
    { "cuMemFree", 2000, 0, (void *)simtr_cuMemFree },
    { "cuMemFree", 3020, 0, (void *)simtr_cuMemFree_v2 },
    { "cuMemAllocPitch", 3020, 0, (void *)simtr_cuMemAllocPitch_v2 },
    { "cuMemAllocAsync", 11020, 0, (void *)simtr_cuMemAllocAsync },
    { "cuMemAllocAsync", 11020, 1, (void *)simtr_cuMemAllocAsync_ptsz },
    { "cuMemFreeAsync", 11020, 0, (void *)simtr_cuMemFreeAsync },
    { "cuMemFreeAsync", 11020, 1, (void *)simtr_cuMemFreeAsync_ptsz },
    { "cuMemGetInfo", 3020, 0, (void *)simtr_cuMemGetInfo_v2 },
    { "cuDevicePrimaryCtxRelease", 11000, 0, (void *)simtr_cuDevicePrimaryCtxRelease_v2 },
};

static void *distinct_of(const struct sim_proc *p)
{
    static int mode = -1;
    if (mode < 0)
        mode = getenv("GPUSIM_PROC_DISTINCT") != NULL;
    for (unsigned i = 0; mode && i < sizeof distinct / sizeof distinct[0]; i++)
        if (distinct[i].version == p->version && distinct[i].ptsz == p->ptsz && strcmp(distinct[i].name, p->name) == 0)
            return distinct[i].fn;
    return p->fn;
}

/* GPUSIM_TRACE_LOOKUPS: each lookup the simulator cannot serve with a real
 * implementation (a NOT_SUPPORTED stub, or nothing) is named on stderr, to
 * find what a new client needs. */
static void trace_lookup(const char *sym, int ver, cuuint64_t flags, const struct sim_proc *best)
{
    static int mode = -1;
    if (mode < 0)
        mode = getenv("GPUSIM_TRACE_LOOKUPS") != NULL;
    if (!mode || (best && !(best >= sim_stub_table && best < sim_stub_table + sim_stub_count)))
        return;
    fprintf(stderr, "gpusim: lookup %s version %d flags %llu: %s\n", sym, ver, (unsigned long long)flags,
            best ? "stub (CUDA_ERROR_NOT_SUPPORTED)" : "not found");
}

/* A name the driver lacks, or has only in a later version: as an H100's
 * driver 580 answers (docs/gpu-validation.md), cuGetProcAddress_v2 succeeds
 * with a NULL pointer and says why in symbolStatus; the legacy
 * cuGetProcAddress (status NULL here) fails with CUDA_ERROR_NOT_FOUND and
 * leaves the pointer as it was. */
static CUresult lookup(const char *sym, void **pfn, int ver, cuuint64_t flags,
                       CUdriverProcAddressQueryResult *status)
{
    if (!sym || !pfn)
        return CUDA_ERROR_INVALID_VALUE;
    int want = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) ? 1 : 0;
    int named = 0, has_ptsz = 0;
    const struct sim_proc *best = NULL;
    consider(sim_proc_table, sim_proc_count, sym, ver, want, &named, &has_ptsz, &best);
    consider(sim_stub_table, sim_stub_count, sym, ver, want, &named, &has_ptsz, &best);
    if (!best && want) { /* no per-thread variant: the legacy one serves */
        consider(sim_proc_table, sim_proc_count, sym, ver, 0, &named, &has_ptsz, &best);
        consider(sim_stub_table, sim_stub_count, sym, ver, 0, &named, &has_ptsz, &best);
    }
    trace_lookup(sym, ver, flags, best);
    if (!best) {
        if (!status)
            return CUDA_ERROR_NOT_FOUND;
        *pfn = NULL;
        *status = named ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
        return CUDA_SUCCESS;
    }
    *pfn = distinct_of(best);
    if (status)
        *status = CU_GET_PROC_ADDRESS_SUCCESS;
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuGetProcAddress_v2(const char *sym, void **pfn, int ver, cuuint64_t flags,
                                        CUdriverProcAddressQueryResult *status)
{
    CUdriverProcAddressQueryResult dummy;
    return lookup(sym, pfn, ver, flags, status ? status : &dummy);
}

SIM_EXPORT CUresult cuGetProcAddress(const char *sym, void **pfn, int ver, cuuint64_t flags)
{
    return lookup(sym, pfn, ver, flags, NULL);
}

/* The simulator's own answer, under a name no interposer wraps: tests compare
 * what a caller gets through the guard with what the driver gave. */
SIM_EXPORT CUresult simGetProcAddress(const char *sym, void **pfn, int ver, cuuint64_t flags,
                                      CUdriverProcAddressQueryResult *status)
{
    return lookup(sym, pfn, ver, flags, status);
}
