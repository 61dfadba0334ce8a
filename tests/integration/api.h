/*
 * api.h - the driver entry points the test programs use, fetched through a
 * chosen interception route, so that each test runs unchanged over every
 * route: direct (linked), dlopen (dlsym on the libcuda handle), default
 * (dlsym RTLD_DEFAULT), gpa (cuGetProcAddress, 4 arguments), gpa2
 * (cuGetProcAddress_v2), gpa2_ptsz (per-thread flag), gpa_self
 * (cuGetProcAddress_v2 fetched through itself).
 */
#ifndef TEST_API_H
#define TEST_API_H

#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <cudaTypedefs.h>

/* F(symbol, name for cuGetProcAddress, version, suffix) */
#define API_LIST(F) \
    F(cuInit, cuInit, 2000, ) \
    F(cuDeviceGet, cuDeviceGet, 2000, ) \
    F(cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain, 7000, ) \
    F(cuDevicePrimaryCtxRelease_v2, cuDevicePrimaryCtxRelease, 11000, ) \
    F(cuDevicePrimaryCtxReset_v2, cuDevicePrimaryCtxReset, 11000, ) \
    F(cuCtxSetCurrent, cuCtxSetCurrent, 4000, ) \
    F(cuCtxCreate_v2, cuCtxCreate, 3020, ) \
    F(cuCtxDestroy_v2, cuCtxDestroy, 4000, ) \
    F(cuMemAlloc_v2, cuMemAlloc, 3020, ) \
    F(cuMemAlloc, cuMemAlloc, 2000, ) \
    F(cuMemFree_v2, cuMemFree, 3020, ) \
    F(cuMemFree, cuMemFree, 2000, ) \
    F(cuMemAllocPitch_v2, cuMemAllocPitch, 3020, ) \
    F(cuMemAllocManaged, cuMemAllocManaged, 6000, ) \
    F(cuMemAllocAsync, cuMemAllocAsync, 11020, ) \
    F(cuMemAllocFromPoolAsync, cuMemAllocFromPoolAsync, 11020, ) \
    F(cuMemFreeAsync, cuMemFreeAsync, 11020, ) \
    F(cuDeviceGetDefaultMemPool, cuDeviceGetDefaultMemPool, 11020, ) \
    F(cuDeviceGetMemPool, cuDeviceGetMemPool, 11020, ) \
    F(cuMemGetDefaultMemPool, cuMemGetDefaultMemPool, 13000, ) \
    F(cuMemGetMemPool, cuMemGetMemPool, 13000, ) \
    F(cuMemPoolCreate, cuMemPoolCreate, 11020, ) \
    F(cuMemPoolDestroy, cuMemPoolDestroy, 11020, ) \
    F(cuMemPoolExportPointer, cuMemPoolExportPointer, 11020, ) \
    F(cuMemPoolImportPointer, cuMemPoolImportPointer, 11020, ) \
    F(cuMemCreate, cuMemCreate, 10020, ) \
    F(cuMemRelease, cuMemRelease, 10020, ) \
    F(cuMemAddressReserve, cuMemAddressReserve, 10020, ) \
    F(cuMemAddressFree, cuMemAddressFree, 10020, ) \
    F(cuMemMap, cuMemMap, 10020, ) \
    F(cuMemUnmap, cuMemUnmap, 10020, ) \
    F(cuMemRetainAllocationHandle, cuMemRetainAllocationHandle, 11000, ) \
    F(cuMemExportToShareableHandle, cuMemExportToShareableHandle, 10020, ) \
    F(cuMemImportFromShareableHandle, cuMemImportFromShareableHandle, 10020, ) \
    F(cuArrayCreate_v2, cuArrayCreate, 3020, ) \
    F(cuArray3DCreate_v2, cuArray3DCreate, 3020, ) \
    F(cuArrayDestroy, cuArrayDestroy, 2000, ) \
    F(cuMipmappedArrayCreate, cuMipmappedArrayCreate, 5000, ) \
    F(cuMipmappedArrayDestroy, cuMipmappedArrayDestroy, 5000, ) \
    F(cuMemAllocHost_v2, cuMemAllocHost, 3020, ) \
    F(cuMemHostAlloc, cuMemHostAlloc, 2020, ) \
    F(cuMemFreeHost, cuMemFreeHost, 2000, ) \
    F(cuMemHostRegister_v2, cuMemHostRegister, 6050, ) \
    F(cuMemHostUnregister, cuMemHostUnregister, 4000, ) \
    F(cuIpcGetMemHandle, cuIpcGetMemHandle, 4010, ) \
    F(cuIpcOpenMemHandle_v2, cuIpcOpenMemHandle, 11000, ) \
    F(cuIpcCloseMemHandle, cuIpcCloseMemHandle, 4010, ) \
    F(cuGraphCreate, cuGraphCreate, 10000, ) \
    F(cuStreamCreate, cuStreamCreate, 2000, ) \
    F(cuStreamDestroy_v2, cuStreamDestroy, 4000, ) \
    F(cuStreamBeginCapture_v2, cuStreamBeginCapture, 10010, ) \
    F(cuStreamEndCapture, cuStreamEndCapture, 10000, ) \
    F(cuGraphDestroy, cuGraphDestroy, 10000, ) \
    F(cuGraphAddMemAllocNode, cuGraphAddMemAllocNode, 11040, ) \
    F(cuGraphAddMemFreeNode, cuGraphAddMemFreeNode, 11040, ) \
    F(cuGraphAddNode, cuGraphAddNode, 12020, ) \
    F(cuGraphAddNode_v2, cuGraphAddNode, 12030, ) \
    F(cuMemGetInfo_v2, cuMemGetInfo, 3020, ) \
    F(cuDeviceTotalMem_v2, cuDeviceTotalMem, 3020, )

/* the per-thread variants, used by the gpa2_ptsz route */
#define API_PTSZ_LIST(F) \
    F(cuMemAllocAsync_ptsz, cuMemAllocAsync, 11020, _ptsz) \
    F(cuMemAllocFromPoolAsync_ptsz, cuMemAllocFromPoolAsync, 11020, _ptsz) \
    F(cuMemFreeAsync_ptsz, cuMemFreeAsync, 11020, _ptsz) \
    F(cuStreamBeginCapture_v2_ptsz, cuStreamBeginCapture, 10010, _ptsz) \
    F(cuStreamEndCapture_ptsz, cuStreamEndCapture, 10000, _ptsz)

struct api {
#define F(sym, name, ver, sfx) PFN_##name##_v##ver##sfx sym;
    API_LIST(F)
    API_PTSZ_LIST(F)
#undef F
};

extern struct api A;

/* Fill A through a route; exits with a message on failure. */
void api_load(const char *route);

#define CHECK(call) do { CUresult r_ = (call); if (r_ != CUDA_SUCCESS) { \
    fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #call, (int)r_); exit(1); } } while (0)

#endif
