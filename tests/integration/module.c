/*
 * module.c - a library that leaks device memory and is then unloaded
 * (tests/symbols/unloaded.c). Built twice: libgmgmod1.so (module_leak) and, with
 * -DOTHER, libgmgmod2.so of the same layout and name length, so that the
 * second is likely mapped where the first was, with the same link_map.
 */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>

#ifndef OTHER
__attribute__((noinline)) static void module_leak_inner(void)
{
    CUdeviceptr d;
    cuMemAlloc_v2(&d, 777 * 1024);
}

void module_leak(void)
{
    module_leak_inner();
    __asm__ volatile("" ::: "memory"); /* not a tail call: keep this frame */
}
#else
__attribute__((noinline)) static void other_inner(void)
{
    CUdeviceptr d;
    cuMemAlloc_v2(&d, 555 * 1024);
}

void other_function(void)
{
    other_inner();
    __asm__ volatile("" ::: "memory");
}
#endif
