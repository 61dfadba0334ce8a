/* counts.c - one call site allocating on two devices, with known counts:
 * 5 allocations on device 0 (2 freed) and 3 on device 1 (1 freed), all
 * from site(); the metrics file written at exit must show two series for
 * the one site and the exact allocation and free counters per device. */
#include "../integration/testlib.h"

#define NOINLINE __attribute__((noinline))

NOINLINE static CUdeviceptr site(size_t bytes)
{
    CUdeviceptr p;
    TL_CHECK(cuMemAlloc(&p, bytes));
    __asm__ volatile("");
    return p;
}

static void on(int dev, int n, int frees, size_t bytes)
{
    tl_setup(dev);
    CUdeviceptr p[8];
    for (int i = 0; i < n; i++)
        p[i] = site(bytes);
    for (int i = 0; i < frees; i++)
        TL_CHECK(cuMemFree(p[i]));
}

int main(void)
{
    on(0, 5, 2, 1 << 20);
    on(1, 3, 1, 3 << 20);
    printf("counts: done\n");
    return 0;
}
