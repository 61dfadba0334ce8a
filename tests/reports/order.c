/*
 * order.c - the order of a report's groups: biggest first, whatever order
 * they were made in or their counts; equal groups in a fixed order.
 *
 *   group_order order   call sites of 3 x 1 MiB, 2 x 512 KiB and 1 x 6 MiB,
 *                       made in that order
 *   group_order ties    one call site, 1 MiB on device 1, then 1 MiB on device 0
 *                       (GPUSIM_DEVICES=2)
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include "../integration/testlib.h"

/* volatile: the loops stay loops (an unrolled loop is several call sites) */
static volatile int tries_a = 3, tries_b = 2;

/* by bytes: big, mid, small; by count: mid, small, big; made: mid, small, big */
NOINLINE static void site_mid(void) { CUdeviceptr p; for (int i = 0; i < tries_a; i++) CHECK(cuMemAlloc_v2(&p, 1 << 20)); }
NOINLINE static void site_small(void) { CUdeviceptr p; for (int i = 0; i < tries_b; i++) CHECK(cuMemAlloc_v2(&p, 512 << 10)); }
NOINLINE static void site_big(void) { CUdeviceptr p; CHECK(cuMemAlloc_v2(&p, 6 << 20)); }

static void order(void)
{
    site_mid();
    site_small();
    site_big();
    printf("order: guard %llu sim %llu\n", tl_guard_live(0), tl_sim_live(0));
}

NOINLINE static void tie_site(void) { CUdeviceptr p; CHECK(cuMemAlloc_v2(&p, 1 << 20)); }

static void ties(void)
{
    for (int d = 1; d >= 0; d--) { /* device 1 first: the report's order is not the order made */
        CUdevice dev;
        CUcontext c;
        CHECK(cuDeviceGet(&dev, d));
        CHECK(cuDevicePrimaryCtxRetain(&c, dev));
        CHECK(cuCtxSetCurrent(c));
        tie_site();
    }
    printf("ties: guard %llu %llu\n", tl_guard_live(0), tl_guard_live(1));
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: group_order order|ties\n");
        return 2;
    }
    const char *m = argv[1];
    tl_setup(0);
    if (!strcmp(m, "order")) order();
    else if (!strcmp(m, "ties")) ties();
    else {
        fprintf(stderr, "unknown mode %s\n", m);
        return 2;
    }
    fflush(stdout);
    return 0;
}
