/*
 * fragmentation.c - allocations whose place the fragmentation section
 * describes.
 *
 *   fragmentation frag       six allocations laid end to end, the 2nd and 5th
 *                            freed: two gaps, one pair of live neighbours touching
 *   fragmentation rounding   3 MiB and 1 byte, and 1000 bytes, under a driver
 *                            that rounds large requests to 2 MiB (GPUSIM_ROUND_LARGE)
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include "../integration/testlib.h"

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

/* GPUSIM_ROUND_LARGE: the driver grants 2 MiB pages for large requests */
static void rounding(void)
{
    CUdeviceptr p, q;
    CHECK(cuMemAlloc_v2(&p, (3 << 20) + 1));
    CHECK(cuMemAlloc_v2(&q, 1000));
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: fragmentation frag|rounding\n");
        return 2;
    }
    const char *m = argv[1];
    tl_setup(0);
    if (!strcmp(m, "frag")) frag();
    else if (!strcmp(m, "rounding")) rounding();
    else {
        fprintf(stderr, "unknown mode %s\n", m);
        return 2;
    }
    fflush(stdout);
    return 0;
}
