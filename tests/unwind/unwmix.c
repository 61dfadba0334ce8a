/* unwmix.c - libunwmix.so, built without frame pointers (-fomit-frame-pointer):
 * rbp is an ordinary register here, and the frames are found only through
 * the call frame information. */
#include "unwlib.h"

#include <cuda.h>

__attribute__((noinline)) long nofp_level(int n, int keep)
{
    volatile long pad[3] = { n, n, n };
    long r;
    /* rbp used and changed in the body: whatever it holds is no frame */
    __asm__ volatile("" ::: "rbp", "rbx", "r12", "r13");
    if (n <= 0) {
        leaf_alloc(keep);
        r = pad[0];
    } else {
        r = fp_level(n - 1, keep) + pad[1];
    }
    return r + pad[2];
}

/* Two call sites of other frame sizes that leave rbp as their caller set
 * it: called from one frame, they reach the allocation at two stack
 * pointers with one frame pointer (unwindtest twins). */
__attribute__((noinline)) long nofp_site_small(int keep)
{
    volatile long pad[2] = { keep, 1 };
    CUdeviceptr p;
    if (cuMemAlloc_v2(&p, 4096) != CUDA_SUCCESS)
        return -1;
    if (!keep)
        cuMemFree_v2(p);
    return pad[0] + pad[1];
}

__attribute__((noinline)) long nofp_site_big(int keep)
{
    volatile long pad[64] = { keep, 1 };
    CUdeviceptr p;
    if (cuMemAlloc_v2(&p, 4096) != CUDA_SUCCESS)
        return -1;
    if (!keep)
        cuMemFree_v2(p);
    return pad[0] + pad[63];
}
