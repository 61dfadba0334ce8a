/* unwmix.c - libunwmix.so, built without frame pointers (-fomit-frame-pointer):
 * rbp is an ordinary register here, and the frames are found only through
 * the call frame information. */
#include "unwlib.h"

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
