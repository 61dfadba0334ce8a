/*
 * manylib.c - one of the many libraries of manylibs.c: built N times, each
 * with its own -DSIZE, each leaking SIZE bytes from its own copy of
 * many_leak.
 */
#include <cuda.h>

__attribute__((noinline)) void many_leak(void)
{
    CUdeviceptr p;
    cuMemAlloc_v2(&p, SIZE);
    __asm__ volatile("" ::: "memory"); /* a call, not a tail call: this frame stays */
}
