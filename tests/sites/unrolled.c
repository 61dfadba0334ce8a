/* unrolled.c [MB [dump]] - built at -O2: a 4-iteration loop the compiler
 * unrolls into four calls of leak_scratch from four addresses on one source
 * line (tests/sites/sites.sh). Each leaks MB MiB (default 10); under a
 * limit the later ones are refused. Prints "refused N". "dump": after the
 * first call, a dump asked (SIGUSR1), and a wait until the file
 * UNROLLED_WAIT exists (the report thread at it: tests/refusals/slowwrite.c
 * makes it), 10 s at most. */
#include <cuda.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static CUdeviceptr ptrs[4];
static int refused, dump;

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

NOCLONE static void between(int i)
{
    if (dump && i == 0) {
        raise(SIGUSR1);
        const char *wait = getenv("UNROLLED_WAIT");
        for (int n = 0; n < 1000 && wait && access(wait, F_OK) != 0; n++)
            usleep(10000);
    }
}

int main(int argc, char **argv)
{
    size_t bytes = (size_t)(argc > 1 ? atoi(argv[1]) : 10) << 20;
    dump = argc > 2 && argv[2][0] == 'd';
    CUdevice dev;
    CUcontext ctx;
    cuInit(0);
    cuDeviceGet(&dev, 0);
    cuDevicePrimaryCtxRetain(&ctx, dev);
    cuCtxSetCurrent(ctx);
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++)
        leak_scratch(&ptrs[i], bytes), between(i); /* UNROLLED_LINE */
    printf("refused %d\n", refused);
    return 0;
}
