/*
 * granted.c - pitched allocations count the pitch the driver grants, not the
 * guard's 512-byte guess (GPUSIM_PITCH sets the simulated driver's).
 *
 *   pitch pitch         1000 bytes x 100 rows, 4-byte elements
 *   pitch pitch_small   700 x 100 rows, through _v2 and the legacy ABI
 *   pitch sized W H     W bytes x H rows, once
 *   pitch near          under GPUMEM_LIMIT=64M: a small pitched allocation
 *                       (its grant shows the driver's pitch), 60 MiB, then
 *                       4100 bytes x 1000 rows: 4608 x 1000 does not fit
 *                       the 4 MiB left, 4100 x 1000 would; prints its answer
 *                       and the most the driver ever held
 *   pitch aligned       1024 bytes x 1 row (a width any alignment keeps), freed,
 *                       then 700 x 100
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include "../integration/testlib.h"

static void pitch_case(void)
{
    CUdeviceptr d;
    size_t pitch = 0;
    CUresult r = cuMemAllocPitch_v2(&d, &pitch, 1000, 100, 4);
    printf("pitch: %d, pitch %zu, guard %llu sim %llu\n", (int)r, pitch, tl_guard_live(0), (unsigned long long)tl_sim(0).live);
}

static void pitch_small(void)
{
    CUdeviceptr p;
    CUdeviceptr_v1 p32;
    size_t pitch = 0;
    unsigned int pitch32 = 0;
    CUresult r = cuMemAllocPitch_v2(&p, &pitch, 700, 100, 4);
    printf("pitch_small: %d pitch %zu guard %llu sim %llu", (int)r, pitch, tl_guard_live(0), tl_sim_live(0));
    r = cuMemAllocPitch(&p32, &pitch32, 700, 100, 4);
    printf("; legacy %d pitch %u guard %llu sim %llu\n", (int)r, pitch32, tl_guard_live(0), tl_sim_live(0));
}

/* one pitched allocation of w bytes by h rows */
static void sized(size_t w, size_t h)
{
    CUdeviceptr p;
    size_t pitch = 0;
    CUresult r = cuMemAllocPitch_v2(&p, &pitch, w, h, 4);
    printf("pitch: %d, pitch %zu, guard %llu\n", (int)r, pitch, tl_guard_live(0));
}

static void aligned(void)
{
    CUdeviceptr a, b;
    size_t pitch = 0;
    TL_CHECK(cuMemAllocPitch_v2(&a, &pitch, 1024, 1, 4));
    TL_CHECK(cuMemFree_v2(a));
    CUresult r = cuMemAllocPitch_v2(&b, &pitch, 700, 100, 4);
    printf("aligned: %d, pitch %zu, guard %llu\n", (int)r, pitch, tl_guard_live(0));
}

static void near(void)
{
    CUdeviceptr small, big, p;
    size_t pitch = 0;
    TL_CHECK(cuMemAllocPitch_v2(&small, &pitch, 100, 10, 4));
    TL_CHECK(cuMemFree_v2(small));
    TL_CHECK(cuMemAlloc_v2(&big, 60u << 20));
    CUresult r = cuMemAllocPitch_v2(&p, &pitch, 4100, 1000, 4);
    printf("near: %d, driver's most %llu\n", (int)r, (unsigned long long)tl_sim(0).peak);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: pitch pitch|pitch_small|sized W H\n");
        return 2;
    }
    const char *m = argv[1];
    tl_setup(0);
    if (!strcmp(m, "pitch")) pitch_case();
    else if (!strcmp(m, "pitch_small")) pitch_small();
    else if (!strcmp(m, "near")) near();
    else if (!strcmp(m, "aligned")) aligned();
    else if (!strcmp(m, "sized") && argc > 3) sized(strtoull(argv[2], NULL, 0), strtoull(argv[3], NULL, 0));
    else {
        fprintf(stderr, "unknown mode %s\n", m);
        return 2;
    }
    fflush(stdout);
    return 0;
}
