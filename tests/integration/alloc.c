/*
 * alloc.c - one allocation of BYTES on device DEVICE (its primary context
 * current), and what the driver answered. The tests of names, sizes and
 * settings run it as a program that allocates once.
 *
 *   alloc DEVICE BYTES
 */
#define _GNU_SOURCE
#include "testlib.h"

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: alloc DEVICE BYTES\n");
        return 2;
    }
    CUdeviceptr p;
    tl_setup(atoi(argv[1]));
    printf("alloc: %d\n", (int)cuMemAlloc(&p, strtoull(argv[2], NULL, 0)));
    return 0;
}
