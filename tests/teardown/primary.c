/*
 * primary.c - the primary context's retains, releases, resets and destroys:
 * the driver frees its memory at the last release or a reset, and the guard
 * reclaims it then, never earlier; what the driver refuses changes nothing.
 *
 *   primary_context release          retained twice, released twice: the first
 *                                    release keeps its memory, the last reclaims it
 *   primary_context reset_refs       a reset between retains: only the last
 *                                    release reclaims
 *   primary_context destroy_primary  cuCtxDestroy of a primary context, which the
 *                                    driver refuses
 *   primary_context stale_ctx        an allocation in the current context after
 *                                    the driver reset it
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

NOINLINE static void leak_before_release(void) { CUdeviceptr p; CHECK(cuMemAlloc_v2(&p, 1 << 20)); }
NOINLINE static void leak_after_release(void) { CUdeviceptr p; CHECK(cuMemAlloc_v2(&p, 256 << 10)); }

static void release(void)
{
    CUcontext again;
    CHECK(cuDevicePrimaryCtxRetain(&again, dev0)); /* two retains held */
    leak_before_release();
    CHECK(cuDevicePrimaryCtxRelease_v2(dev0));
    printf("release: after the first release guard %llu sim %llu", tl_guard_live(0), tl_sim_live(0));
    CHECK(cuDevicePrimaryCtxRelease_v2(dev0)); /* the last: the driver resets the context */
    printf("; after the last guard %llu sim %llu", tl_guard_live(0), tl_sim_live(0));
    CHECK(cuDevicePrimaryCtxRetain(&again, dev0));
    CHECK(cuCtxSetCurrent(again));
    leak_after_release();
    printf("; retained again guard %llu sim %llu\n", tl_guard_live(0), tl_sim_live(0));
}

/* A reset keeps the retain count (an H100's driver needed as many releases
 * after it as retains were held): a release after a reset that is not the
 * last reclaims nothing, also where the guard counts retains itself. */
NOINLINE static void after_reset(void) { CUdeviceptr p; CHECK(cuMemAlloc_v2(&p, 1 << 20)); }

static void reset_refs(void)
{
    CUcontext again;
    CHECK(cuDevicePrimaryCtxRetain(&again, dev0)); /* two retains held */
    CHECK(cuDevicePrimaryCtxReset(dev0));
    CHECK(cuDevicePrimaryCtxRetain(&again, dev0)); /* three */
    CHECK(cuCtxSetCurrent(again));
    after_reset();
    CHECK(cuDevicePrimaryCtxRelease_v2(dev0)); /* two left */
    printf("reset_refs: after a release guard %llu sim %llu", tl_guard_live(0), tl_sim_live(0));
    CHECK(cuDevicePrimaryCtxRelease_v2(dev0));
    CHECK(cuDevicePrimaryCtxRelease_v2(dev0)); /* the last */
    printf("; after the last guard %llu sim %llu\n", tl_guard_live(0), tl_sim_live(0));
}

NOINLINE static void destroy_primary(void)
{
    CUdeviceptr p;
    CHECK(cuMemAlloc_v2(&p, 1 << 20));
    CUresult r2 = cuCtxDestroy_v2(ctx0), r1 = cuCtxDestroy(ctx0);
    printf("destroy primary: %s; guard %llu sim %llu\n", r2 != CUDA_SUCCESS && r1 != CUDA_SUCCESS ? "refused" : "done",
           tl_guard_live(0), tl_sim_live(0));
}

/* The last release resets the primary context, which stays current on this
 * thread: the driver refuses allocations there (its device is unknown) */
static void stale_ctx(void)
{
    CUdeviceptr p;
    CHECK(cuDevicePrimaryCtxRelease_v2(dev0));
    CUresult r = cuMemAlloc_v2(&p, 2 << 20);
    printf("stale context: alloc %d\n", (int)r);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: primary_context release|reset_refs|destroy_primary|stale_ctx\n");
        return 2;
    }
    const char *m = argv[1];
    setup();
    if (!strcmp(m, "release")) release();
    else if (!strcmp(m, "reset_refs")) reset_refs();
    else if (!strcmp(m, "destroy_primary")) destroy_primary();
    else if (!strcmp(m, "stale_ctx")) stale_ctx();
    else {
        fprintf(stderr, "unknown mode %s\n", m);
        return 2;
    }
    fflush(stdout);
    return 0;
}
