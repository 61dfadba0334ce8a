/*
 * formats.c - every array format of cuda.h, sized by its bytes per element:
 * at GPUMEM_LIMIT=1M exactly it is the driver's call, one row more the guard
 * refuses; with 1 channel, then with 4.
 *
 *   array_formats
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include "../integration/testlib.h"

/* Bytes per element of one channel, from the CUarray_format documentation
 * (block-compressed formats: under one byte per pixel, counted as one;
 * formats that name their channels, per pixel, rounded up to a power of
 * two). Every format of CUDA 13.0's cuda.h: a missing one counted nothing. */
static const struct { CUarray_format f; const char *name; unsigned bytes; } fmts[] = {
#define F(x, b) { CU_AD_FORMAT_##x, #x, b }
    F(UNSIGNED_INT8, 1), F(SIGNED_INT8, 1), F(UNORM_INT8X1, 1), F(SNORM_INT8X1, 1), F(BC1_UNORM, 1),
    F(BC1_UNORM_SRGB, 1), F(BC4_UNORM, 1), F(BC4_SNORM, 1), F(BC2_UNORM, 1), F(BC2_UNORM_SRGB, 1),
    F(BC3_UNORM, 1), F(BC3_UNORM_SRGB, 1), F(BC5_UNORM, 1), F(BC5_SNORM, 1), F(BC6H_UF16, 1), F(BC6H_SF16, 1),
    F(BC7_UNORM, 1), F(BC7_UNORM_SRGB, 1),
    F(UNSIGNED_INT16, 2), F(SIGNED_INT16, 2), F(HALF, 2), F(UNORM_INT8X2, 2), F(SNORM_INT8X2, 2),
    F(UNORM_INT16X1, 2), F(SNORM_INT16X1, 2), F(NV12, 2), F(NV16, 2), F(YUY2, 2),
    F(UNSIGNED_INT32, 4), F(SIGNED_INT32, 4), F(FLOAT, 4), F(UNORM_INT8X4, 4), F(SNORM_INT8X4, 4),
    F(UNORM_INT16X2, 4), F(SNORM_INT16X2, 4), F(P010, 4), F(P016, 4), F(P210, 4), F(P216, 4),
    F(Y210, 4), F(Y216, 4), F(AYUV, 4), F(Y410, 4), F(Y444_PLANAR8, 4), F(YUV444_8bit_SemiPlanar, 4),
    F(UNORM_INT_101010_2, 4),
    F(UNORM_INT16X4, 8), F(SNORM_INT16X4, 8), F(Y416, 8), F(Y444_PLANAR10, 8), F(YUV444_16bit_SemiPlanar, 8),
#undef F
};

/* The classic formats, whose bytes are one channel's (NumChannels of them
 * make an element); every other format's are a whole element's, however
 * many channels it is given. */
static int per_channel(CUarray_format f)
{
    return f == CU_AD_FORMAT_UNSIGNED_INT8 || f == CU_AD_FORMAT_SIGNED_INT8 || f == CU_AD_FORMAT_UNSIGNED_INT16 ||
           f == CU_AD_FORMAT_SIGNED_INT16 || f == CU_AD_FORMAT_HALF || f == CU_AD_FORMAT_UNSIGNED_INT32 ||
           f == CU_AD_FORMAT_SIGNED_INT32 || f == CU_AD_FORMAT_FLOAT;
}

/* Under GPUMEM_LIMIT=1M: an array of exactly 1 MiB by the format's size is
 * the driver's to answer (created, or refused by it for a format it does
 * not know); one row more is the guard's to refuse. With 1 channel, then
 * with 4 (as cudart passes UNORM_INT8X4 and the BC1/2/3/7 formats): a
 * classic format's element is then 4 times as wide, any other's is not. */
static void formats(void)
{
    int wrong = 0;
    for (unsigned ch = 1; ch <= 4; ch += 3) {
        for (size_t i = 0; i < sizeof fmts / sizeof fmts[0]; i++) {
            size_t w = 1024 / fmts[i].bytes / (per_channel(fmts[i].f) ? ch : 1);
            CUDA_ARRAY_DESCRIPTOR at = { w, 1024, fmts[i].f, ch }, over = { w, 1025, fmts[i].f, ch };
            CUarray a = NULL, b = NULL;
            CUresult ra = cuArrayCreate_v2(&a, &at), rb = cuArrayCreate_v2(&b, &over);
            if (ra == CUDA_ERROR_OUT_OF_MEMORY || rb != CUDA_ERROR_OUT_OF_MEMORY) {
                printf("format %s (%u bytes), %u channels: at the limit %d, one row over %d\n", fmts[i].name,
                       fmts[i].bytes, ch, (int)ra, (int)rb);
                wrong++;
            }
            if (ra == CUDA_SUCCESS)
                CHECK(cuArrayDestroy(a));
            if (rb == CUDA_SUCCESS)
                CHECK(cuArrayDestroy(b));
        }
    }
    printf("formats: %zu, %d wrong; guard %llu sim %llu\n", sizeof fmts / sizeof fmts[0], wrong, tl_guard_live(0), tl_sim_live(0));
}

int main(void)
{
    tl_setup(0);
    formats();
    fflush(stdout);
    return 0;
}
