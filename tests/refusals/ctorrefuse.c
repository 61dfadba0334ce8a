/*
 * ctorrefuse.c - a library whose constructor makes an allocation the quota
 * refuses (refusal_timing ctor_refuse). Constructors run with the loader's
 * lock held, which the guard's reporter needs to name frames (dladdr): the
 * refused call must come back after the guard's bounded wait, with the
 * message's first line written, and the whole message follow once the
 * library is loaded.
 */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <stdio.h>

__attribute__((noinline)) static CUresult refused_in_ctor(void)
{
    CUdeviceptr d;
    return cuMemAlloc_v2(&d, 1ull << 40);
}

__attribute__((constructor)) static void ctor(void)
{
    CUresult r = refused_in_ctor();
    dprintf(2, "ctor: the refused call returned %d\n", (int)r);
}
