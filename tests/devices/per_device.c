/*
 * per_device.c - two devices (GPUSIM_DEVICES=2): records, limits and
 * contexts kept per device.
 *
 *   per_device legacy2dev   equal legacy 32-bit pointers on two devices are
 *                           two records, each freed on its own device
 *   per_device perdev       per-device limits (GPUMEM_LIMIT=0:4M,1:8M), each
 *                           reached exactly
 *   per_device ctxreuse     a destroyed context's handle handed out again for
 *                           another device (GPUSIM_REUSE_CTX=1)
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include "../integration/testlib.h"

static void legacy2dev(void)
{
    CUdevice d1;
    CUcontext c1;
    CHECK(cuDeviceGet(&d1, 1));
    CHECK(cuDevicePrimaryCtxRetain(&c1, d1));
    CUdeviceptr_v1 p0, p1;
    CHECK(cuMemAlloc(&p0, 1 << 20));
    CHECK(cuCtxSetCurrent(c1));
    CHECK(cuMemAlloc(&p1, 2 << 20));
    printf("legacy pointers %s; dev0 %llu dev1 %llu\n", p0 == p1 ? "equal" : "differ", tl_guard_live(0), tl_guard_live(1));
    CHECK(cuMemFree(p1));
    printf("after freeing dev1's: dev0 %llu dev1 %llu\n", tl_guard_live(0), tl_guard_live(1));
    CHECK(cuCtxSetCurrent(tl_ctx));
    CHECK(cuMemFree(p0));
    printf("after freeing dev0's: dev0 %llu dev1 %llu\n", tl_guard_live(0), tl_guard_live(1));
}

static void perdev(void)
{
    CUdevice d1;
    CUcontext c1;
    CUdeviceptr a, b;
    CUresult r0 = cuMemAlloc_v2(&a, 4 << 20), r0b = cuMemAlloc_v2(&b, 1);
    CHECK(cuDeviceGet(&d1, 1));
    CHECK(cuDevicePrimaryCtxRetain(&c1, d1));
    CHECK(cuCtxSetCurrent(c1));
    CUresult r1 = cuMemAlloc_v2(&a, 8 << 20), r1b = cuMemAlloc_v2(&b, 1);
    printf("perdev: dev0 4MiB %d +1 %d; dev1 8MiB %d +1 %d; dev0 %llu dev1 %llu\n", (int)r0, (int)r0b, (int)r1,
           (int)r1b, tl_guard_live(0), tl_guard_live(1));
}

static void ctxreuse(void)
{
    CUdevice d0, d1;
    CUcontext a, b;
    CUdeviceptr p, q;
    CHECK(cuDeviceGet(&d0, 0));
    CHECK(cuDeviceGet(&d1, 1));
    CHECK(cuCtxCreate_v2(&a, 0, d1));
    CHECK(cuCtxSetCurrent(a));
    CHECK(cuMemAlloc_v2(&p, 1 << 20));
    CHECK(cuCtxDestroy_v2(a));
    CHECK(cuCtxCreate_v2(&b, 0, d0));
    CHECK(cuCtxSetCurrent(b));
    CHECK(cuMemAlloc_v2(&q, 2 << 20));
    printf("ctxreuse: handle %s; dev0 %llu dev1 %llu; sim dev0 %llu dev1 %llu\n", a == b ? "reused" : "new",
           tl_guard_live(0), tl_guard_live(1), (unsigned long long)tl_sim(0).live, (unsigned long long)tl_sim(1).live);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: per_device legacy2dev|perdev|ctxreuse\n");
        return 2;
    }
    const char *m = argv[1];
    tl_setup(0);
    if (!strcmp(m, "legacy2dev")) legacy2dev();
    else if (!strcmp(m, "perdev")) perdev();
    else if (!strcmp(m, "ctxreuse")) ctxreuse();
    else {
        fprintf(stderr, "unknown mode %s\n", m);
        return 2;
    }
    fflush(stdout);
    return 0;
}
