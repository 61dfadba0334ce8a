/*
 * interposer.c - another CUDA interposer preloaded before the guard (as
 * HAMi-core's libvgpu.so is in vGPU clusters): its cuMemAlloc_v2 comes
 * first in the process's scope and forwards with RTLD_NEXT, to the guard.
 * tests/library/scope.sh: the guard must still guard.
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <dlfcn.h>

CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n)
{
    static CUresult (*next)(CUdeviceptr *, size_t);
    if (!next)
        next = (CUresult(*)(CUdeviceptr *, size_t))dlsym(RTLD_NEXT, "cuMemAlloc_v2");
    return next(p, n);
}
