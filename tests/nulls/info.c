/*
 * info.c - NULL outputs of cuMemGetInfo and cuDeviceTotalMem (both ABIs),
 * and frees of 0 (no-ops, not unknown frees). Other tests run it as a
 * program that touches CUDA and does little else.
 *
 *   nulls
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include "../integration/testlib.h"

static void nulls(void)
{
    size_t f;
    unsigned f32;
    cuMemFree(0);
    cuMemFree_v2(0); /* no-ops: not unknown frees */
    printf("nulls: %d %d %d %d %d %d\n", (int)cuMemGetInfo_v2(NULL, NULL), (int)cuMemGetInfo_v2(&f, NULL),
           (int)cuMemGetInfo(NULL, NULL), (int)cuMemGetInfo(&f32, NULL), (int)cuDeviceTotalMem_v2(NULL, 0),
           (int)cuDeviceTotalMem(NULL, 0));
}

int main(void)
{
    tl_setup(0);
    nulls();
    fflush(stdout);
    return 0;
}
