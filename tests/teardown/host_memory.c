/*
 * host_memory.c - pinned host memory and registrations go with the context
 * that made them: after cuCtxDestroy and cuDevicePrimaryCtxReset they are
 * reclaimed, not live at exit.
 *
 *   host_teardown
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include "../integration/testlib.h"

static CUdevice dev0;
static CUcontext ctx0;

static void setup(void)
{
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev0, 0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx0, dev0));
    CHECK(cuCtxSetCurrent(ctx0));
}

/* Pinned host memory and registrations go with the context that made them
 * (a real driver's cuMemFreeHost or cuMemHostUnregister of them fails
 * afterwards: docs/gpu-validation.md): reclaimed, not live at exit. */
NOINLINE static void host_in_ctx(void **a, void **b)
{
    CHECK(cuMemAllocHost_v2(a, 1 << 20));
    CHECK(cuMemHostAlloc(b, 2 << 20, CU_MEMHOSTALLOC_PORTABLE));
}

NOINLINE static void host_in_primary(void **c) { CHECK(cuMemAllocHost_v2(c, 512 << 10)); }
NOINLINE static void host_register(void *p, size_t n) { CHECK(cuMemHostRegister_v2(p, n, 0)); }

static void host_teardown(void)
{
    CUcontext c;
    void *a, *b, *p;
    static char reg[64 << 10] __attribute__((aligned(4096)));
    CHECK(cuCtxCreate(&c, 0, dev0));
    host_in_ctx(&a, &b);
    host_register(reg, sizeof reg);
    CHECK(cuCtxDestroy(c));
    CHECK(cuCtxSetCurrent(ctx0));
    CUresult fa = cuMemFreeHost(a), fb = cuMemFreeHost(b), ur = cuMemHostUnregister(reg);
    host_in_primary(&p);
    CHECK(cuDevicePrimaryCtxReset(dev0));
    CUresult fp = cuMemFreeHost(p);
    printf("host_teardown: frees after destroy %d %d, unregister %d, free after reset %d\n", (int)fa, (int)fb, (int)ur,
           (int)fp);
}

int main(void)
{
    setup();
    host_teardown();
    fflush(stdout);
    return 0;
}
