/* plugalloc.c - a plug-in that allocates where it is: plug(bytes), for
 * tests/symbols/plugins.c. */
#include <cuda.h>
#include <stddef.h>

__attribute__((noinline)) void plug(size_t bytes)
{
    CUdeviceptr p;
    if (cuMemAlloc(&p, bytes) != CUDA_SUCCESS)
        __builtin_trap();
    __asm__ volatile("" ::: "memory");
}
