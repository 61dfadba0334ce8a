/* unwab.c - libunwA.so and libunwB.so: the same code with frames of another
 * size (FRAME), no frame pointers: where one is unloaded and the other
 * mapped at the same address, the same return addresses need other rules. */
#include "unwlib.h"

__attribute__((noinline)) long lib_alloc(int n, int keep)
{
    volatile char big[FRAME];
    big[0] = (char)n;
    big[FRAME - 1] = (char)n;
    if (n <= 0)
        leaf_alloc(keep);
    else
        lib_alloc(n - 1, keep);
    return big[0] + big[FRAME - 1];
}
