/*
 * lookup.c - the cuGetProcAddress(_v2) wrappers: the driver answers, and
 * every answer goes through the route's choice of wrapper (driver/routes.h),
 * also when a caller asks for "cuGetProcAddress" itself.
 */
#include "driver/routes.h"
#include "hooks/intercept.h"

GMG_EXPORT CUresult CUDAAPI cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                                                CUdriverProcAddressQueryResult *symbolStatus)
{
    gmg_enter(H_cuGetProcAddress_v2);
    gmg_pfn_cuGetProcAddress_v2 real = REAL(cuGetProcAddress_v2);
    if (!real)
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult r = real(symbol, pfn, cudaVersion, flags, symbolStatus);
    if (r == CUDA_SUCCESS && pfn)
        *pfn = gmg_route_lookup(symbol, *pfn, cudaVersion, flags, "cuGetProcAddress_v2");
    return r;
}

GMG_EXPORT CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
    gmg_enter(H_cuGetProcAddress);
    gmg_pfn_cuGetProcAddress real = REAL(cuGetProcAddress);
    if (!real)
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult r = real(symbol, pfn, cudaVersion, flags);
    if (r == CUDA_SUCCESS && pfn)
        *pfn = gmg_route_lookup(symbol, *pfn, cudaVersion, flags, "cuGetProcAddress");
    return r;
}
