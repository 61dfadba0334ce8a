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
    P(cuStreamCreate, 2000, 0, cuStreamCreate)
    P(cuStreamDestroy, 2000, 0, cuStreamDestroy)
    P(cuStreamDestroy, 4000, 0, cuStreamDestroy_v2)
    P(cuStreamSynchronize, 2000, 0, cuStreamSynchronize)
    P(cuGetErrorString, 6000, 0, cuGetErrorString)
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

static CUresult lookup(const char *sym, void **pfn, int ver, cuuint64_t flags,
                       CUdriverProcAddressQueryResult *status)
{
    if (!sym || !pfn)
        return CUDA_ERROR_INVALID_VALUE;
    *pfn = NULL;
    int want = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) ? 1 : 0;
    int named = 0, has_ptsz = 0;
    const struct sim_proc *best = NULL;
    consider(sim_proc_table, sim_proc_count, sym, ver, want, &named, &has_ptsz, &best);
    consider(sim_stub_table, sim_stub_count, sym, ver, want, &named, &has_ptsz, &best);
    if (!best && want) { /* no per-thread variant: the legacy one serves */
        consider(sim_proc_table, sim_proc_count, sym, ver, 0, &named, &has_ptsz, &best);
        consider(sim_stub_table, sim_stub_count, sym, ver, 0, &named, &has_ptsz, &best);
    }
    if (!best) {
        if (status)
            *status = named ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
        return CUDA_ERROR_NOT_FOUND;
    }
    *pfn = distinct_of(best);
    if (status)
        *status = CU_GET_PROC_ADDRESS_SUCCESS;
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuGetProcAddress_v2(const char *sym, void **pfn, int ver, cuuint64_t flags,
                                        CUdriverProcAddressQueryResult *status)
{
    return lookup(sym, pfn, ver, flags, status);
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
