/*
 * regress.c - cases that kill mutations of src/ which survived the suite
 * (issue 15, docs/testing.md), each a mode, against the simulated driver
 * (linked directly: the guard's exported wrappers see every call). Each mode
 * prints what tests/regress.sh checks, with the driver's own numbers beside
 * the guard's where both can be read.
 *
 *   regress frag       six allocations laid end to end, the 2nd and 5th freed:
 *                      two gaps, one pair of live neighbours touching
 *   regress release    the primary context released twice: the first release
 *                      keeps its memory, the last one reclaims it
 *   regress managed    8 MiB managed, then 4 MiB and 1 byte linear (GPUMEM_LIMIT=4M)
 *   regress order      three call sites of 3, 1 and 6 MiB, allocated in that order
 *   regress refuse     two call sites refused 3 and 2 times (GPUMEM_LIMIT=1M)
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))
#define CHECK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { \
    fprintf(stderr, "%s:%d: %s = %d\n", __FILE__, __LINE__, #x, (int)r_); exit(1); } } while (0)

struct sim_stats { uint64_t total, live, peak, live_allocs, allocs, frees, oom; };
int simGetStats(int dev, struct sim_stats *out);

static CUdevice dev0;
static CUcontext ctx0;
/* volatile: the loops stay loops (an unrolled loop is several call sites) */
static volatile int tries_a = 3, tries_b = 2;

static void setup(void)
{
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev0, 0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx0, dev0));
    CHECK(cuCtxSetCurrent(ctx0));
}

static unsigned long long guard_live(int dev)
{
    unsigned long long (*f)(int) = (unsigned long long (*)(int))dlsym(RTLD_DEFAULT, "gpumemguard_live_bytes");
    return f ? f(dev) : 0;
}

static unsigned long long sim_live(int dev)
{
    struct sim_stats s;
    memset(&s, 0, sizeof s);
    simGetStats(dev, &s);
    return (unsigned long long)s.live;
}

/* ----------------------------------------------------------------- frag */

/* a b c d e f, end to end; b and e freed: the gaps are b's 256 KiB and e's
 * 64 KiB, and c and d touch (no gap between them) */
static void frag(void)
{
    static const size_t size[6] = { 1 << 20, 256 << 10, 512 << 10, 128 << 10, 64 << 10, 2 << 20 };
    CUdeviceptr p[6];
    int end_to_end = 1;
    for (int i = 0; i < 6; i++) {
        CHECK(cuMemAlloc_v2(&p[i], size[i]));
        if (i && p[i] != p[i - 1] + size[i - 1])
            end_to_end = 0;
    }
    CHECK(cuMemFree_v2(p[1]));
    CHECK(cuMemFree_v2(p[4]));
    printf("frag: end to end %s; span 0x%llx-0x%llx\n", end_to_end ? "yes" : "no", (unsigned long long)p[0],
           (unsigned long long)(p[5] + size[5]));
}

/* -------------------------------------------------------------- release */

NOINLINE static void leak_before_release(void) { CUdeviceptr p; CHECK(cuMemAlloc_v2(&p, 1 << 20)); }
NOINLINE static void leak_after_release(void) { CUdeviceptr p; CHECK(cuMemAlloc_v2(&p, 256 << 10)); }

static void release(void)
{
    CUcontext again;
    CHECK(cuDevicePrimaryCtxRetain(&again, dev0)); /* two retains held */
    leak_before_release();
    CHECK(cuDevicePrimaryCtxRelease_v2(dev0));
    printf("release: after the first release guard %llu sim %llu", guard_live(0), sim_live(0));
    CHECK(cuDevicePrimaryCtxRelease_v2(dev0)); /* the last: the driver resets the context */
    printf("; after the last guard %llu sim %llu", guard_live(0), sim_live(0));
    CHECK(cuDevicePrimaryCtxRetain(&again, dev0));
    CHECK(cuCtxSetCurrent(again));
    leak_after_release();
    printf("; retained again guard %llu sim %llu\n", guard_live(0), sim_live(0));
}

/* -------------------------------------------------------------- managed */

NOINLINE static void managed_site(void)
{
    CUdeviceptr m, a, b;
    CUresult rm = cuMemAllocManaged(&m, 8 << 20, CU_MEM_ATTACH_GLOBAL);
    CUresult ra = cuMemAlloc_v2(&a, 4 << 20), rb = cuMemAlloc_v2(&b, 1);
    printf("managed: managed 8MiB %d, 4MiB %d, +1 %d; guard %llu sim %llu\n", (int)rm, (int)ra, (int)rb,
           guard_live(0), sim_live(0));
}

/* ---------------------------------------------------------------- order */

NOINLINE static void site_mid(void) { CUdeviceptr p; CHECK(cuMemAlloc_v2(&p, 3 << 20)); }
NOINLINE static void site_small(void) { CUdeviceptr p; CHECK(cuMemAlloc_v2(&p, 1 << 20)); }
NOINLINE static void site_big(void) { CUdeviceptr p; for (int i = 0; i < tries_a; i++) CHECK(cuMemAlloc_v2(&p, 2 << 20)); }

static void order(void)
{
    site_mid();
    site_small();
    site_big();
    printf("order: guard %llu sim %llu\n", guard_live(0), sim_live(0));
}

/* --------------------------------------------------------------- refuse */

NOINLINE static int refused_site_a(void)
{
    CUdeviceptr p;
    int n = 0;
    for (int i = 0; i < tries_a; i++)
        n += cuMemAlloc_v2(&p, 2 << 20) == CUDA_ERROR_OUT_OF_MEMORY;
    return n;
}

NOINLINE static int refused_site_b(void)
{
    CUdeviceptr p;
    int n = 0;
    for (int i = 0; i < tries_b; i++)
        n += cuMemAlloc_v2(&p, 4 << 20) == CUDA_ERROR_OUT_OF_MEMORY;
    return n;
}

NOINLINE static void kept(void) { CUdeviceptr p; CHECK(cuMemAlloc_v2(&p, 512 << 10)); }

static void refuse(void)
{
    kept();
    int a = refused_site_a(), b = refused_site_b();
    printf("refuse: %d + %d refused; guard %llu sim %llu\n", a, b, guard_live(0), sim_live(0));
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: regress MODE\n");
        return 2;
    }
    const char *m = argv[1];
    setup();
    if (!strcmp(m, "frag")) frag();
    else if (!strcmp(m, "release")) release();
    else if (!strcmp(m, "managed")) managed_site();
    else if (!strcmp(m, "order")) order();
    else if (!strcmp(m, "refuse")) refuse();
    else { fprintf(stderr, "unknown mode %s\n", m); return 2; }
    return 0;
}
