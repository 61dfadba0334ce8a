/*
 * mipmaps.c - mipmapped arrays counted as the driver makes them: layered and
 * cubemap ones have every layer at every level; level counts are clamped.
 *
 *   mipmaps mipmap_layered   (GPUMEM_LIMIT=46924, their every byte)
 *   mipmaps mipmap_levels    (GPUMEM_LIMIT=9557, their every byte)
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include "../integration/testlib.h"

/* Mipmapped arrays whose Depth is layers (CUDA_ARRAY3D_LAYERED) or cube
 * faces (CUDA_ARRAY3D_CUBEMAP): every level has all of them, only width and
 * height halve (cuda.h, cuArray3DCreate's flags). A cubemap 64x64 of 7
 * levels, 1 byte a texel: 6 x 5461 = 32766 bytes; 10 layers of 32x32, 6
 * levels: 10 x 1365 = 13650; a 1D layered array of 64, 4 layers, 7 levels:
 * 4 x 127 = 508. In all 46924, the limit's every byte (GPUMEM_LIMIT=46924):
 * one byte more is refused. */
static void mipmap_layered(void)
{
    CUDA_ARRAY3D_DESCRIPTOR cube = { 64, 64, 6, CU_AD_FORMAT_UNSIGNED_INT8, 1, CUDA_ARRAY3D_CUBEMAP };
    CUDA_ARRAY3D_DESCRIPTOR layers = { 32, 32, 10, CU_AD_FORMAT_UNSIGNED_INT8, 1, CUDA_ARRAY3D_LAYERED };
    CUDA_ARRAY3D_DESCRIPTOR line = { 64, 0, 4, CU_AD_FORMAT_UNSIGNED_INT8, 1, CUDA_ARRAY3D_LAYERED };
    CUmipmappedArray a, b, c;
    CUresult ra = cuMipmappedArrayCreate(&a, &cube, 7), rb = cuMipmappedArrayCreate(&b, &layers, 6),
             rc = cuMipmappedArrayCreate(&c, &line, 7);
    CUdeviceptr p;
    CUresult more = cuMemAlloc_v2(&p, 1);
    printf("mipmap layered: %d %d %d, 1 byte more %d; guard %llu sim %llu\n", (int)ra, (int)rb, (int)rc, (int)more,
           tl_guard_live(0), tl_sim_live(0));
    if (ra == CUDA_SUCCESS)
        TL_CHECK(cuMipmappedArrayDestroy(a));
    if (rb == CUDA_SUCCESS)
        TL_CHECK(cuMipmappedArrayDestroy(b));
    if (rc == CUDA_SUCCESS)
        TL_CHECK(cuMipmappedArrayDestroy(c));
    printf("mipmap layered: destroyed; guard %llu sim %llu\n", tl_guard_live(0), tl_sim_live(0));
}

/* The driver clamps a mipmapped array's level count to [1, 1 +
 * floor(log2(max(width, height, depth)))] (cuda.h): 0 levels of a 64x64
 * array of bytes is level 0, 4096 bytes; 100 levels are 7, 5461 bytes. In
 * all 9557, the limit's every byte (GPUMEM_LIMIT=9557): one more refused. */
static void mipmap_levels(void)
{
    CUDA_ARRAY3D_DESCRIPTOR d = { 64, 64, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1, 0 };
    CUmipmappedArray a, b;
    CUresult ra = cuMipmappedArrayCreate(&a, &d, 0), rb = cuMipmappedArrayCreate(&b, &d, 100);
    CUdeviceptr p;
    CUresult more = cuMemAlloc_v2(&p, 1);
    printf("mipmap levels: %d %d, 1 byte more %d; guard %llu sim %llu\n", (int)ra, (int)rb, (int)more,
           tl_guard_live(0), tl_sim_live(0));
    if (more == CUDA_SUCCESS)
        TL_CHECK(cuMemFree_v2(p));
    if (ra == CUDA_SUCCESS)
        TL_CHECK(cuMipmappedArrayDestroy(a));
    if (rb == CUDA_SUCCESS)
        TL_CHECK(cuMipmappedArrayDestroy(b));
    printf("mipmap levels: destroyed; guard %llu sim %llu\n", tl_guard_live(0), tl_sim_live(0));
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: mipmaps mipmap_layered|mipmap_levels\n");
        return 2;
    }
    const char *m = argv[1];
    tl_setup(0);
    if (!strcmp(m, "mipmap_layered")) mipmap_layered();
    else if (!strcmp(m, "mipmap_levels")) mipmap_levels();
    else {
        fprintf(stderr, "unknown mode %s\n", m);
        return 2;
    }
    fflush(stdout);
    return 0;
}
