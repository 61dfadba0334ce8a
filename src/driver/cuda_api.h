/*
 * cuda_api.h - the driver API as the guard sees it: every ABI of every entry
 * point declared under its own symbol (cuMemAlloc is the legacy 32-bit one,
 * cuMemAlloc_v2 the current one), as the driver itself is built.
 */
#ifndef GMG_DRIVER_CUDA_API_H
#define GMG_DRIVER_CUDA_API_H

#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <cudaTypedefs.h>

#endif
