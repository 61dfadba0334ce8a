/*
 * failed_peak.c - an allocation the driver fails (more than the device
 * has), then 1 MiB: a peak is memory that was in use, so the failed one
 * never raises it.
 *
 *   failed_peak BYTES
 */
#define _GNU_SOURCE
#include "../integration/testlib.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: failed_peak BYTES\n");
        return 2;
    }
    CUdeviceptr p;
    tl_setup(0);
    CUresult r1 = cuMemAlloc(&p, strtoull(argv[1], NULL, 0));
    CUresult r2 = cuMemAlloc(&p, 1 << 20);
    printf("oom: %d, then 1 MiB: %d\n", (int)r1, (int)r2);
    return 0;
}
