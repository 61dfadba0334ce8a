/* unrolled.c [MB] - built at -O2: a 4-iteration loop the compiler unrolls
 * into four calls of leak_scratch from four addresses on one source line
 * (tests/sites/sites.sh). Each leaks MB MiB (default 10); under a limit
 * the later ones are refused. Prints "refused N". */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>

static CUdeviceptr ptrs[4];
static int refused;

#ifdef __clang__
#define NOCLONE __attribute__((noinline))
#else
#define NOCLONE __attribute__((noinline, noipa))
#endif

NOCLONE static void leak_scratch(CUdeviceptr *p, size_t bytes)
{
    if (cuMemAlloc(p, bytes) != CUDA_SUCCESS)
        refused++;
}

int main(int argc, char **argv)
{
    size_t bytes = (size_t)(argc > 1 ? atoi(argv[1]) : 10) << 20;
    CUdevice dev;
    CUcontext ctx;
    cuInit(0);
    cuDeviceGet(&dev, 0);
    cuDevicePrimaryCtxRetain(&ctx, dev);
    cuCtxSetCurrent(ctx);
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++)
        leak_scratch(&ptrs[i], bytes); /* UNROLLED_LINE */
    printf("refused %d\n", refused);
    return 0;
}
