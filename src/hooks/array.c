/*
 * hooks_array.c - CUDA arrays and mipmapped arrays: they have no device
 * pointer, only a handle, and count against the quota by the size their
 * descriptor implies (width x height x depth x element size, summed over
 * mipmap levels; a classic format's element is NumChannels channels).
 */
#include "hooks/intercept.h"

/* Bytes per element of one channel; formats that name their channels
 * (..._INT8X4, the packed and planar YUV formats) per pixel, rounded up
 * to a power of two as the driver lays rows out (NV12's 1.5 bytes: 2;
 * P010's 3 and the 4:4:4 formats' 3: 4; their 16-bit forms' 6: 8);
 * block-compressed formats 1 (under a byte per pixel). Every format of
 * CUDA 13.0's cuda.h; 0 for one we do not know. */
static uint64_t format_bytes(CUarray_format f)
{
    switch (f) {
    case CU_AD_FORMAT_UNSIGNED_INT8: case CU_AD_FORMAT_SIGNED_INT8:
    case CU_AD_FORMAT_UNORM_INT8X1: case CU_AD_FORMAT_SNORM_INT8X1:
    case CU_AD_FORMAT_BC1_UNORM: case CU_AD_FORMAT_BC1_UNORM_SRGB: case CU_AD_FORMAT_BC4_UNORM:
    case CU_AD_FORMAT_BC4_SNORM: case CU_AD_FORMAT_BC2_UNORM: case CU_AD_FORMAT_BC2_UNORM_SRGB:
    case CU_AD_FORMAT_BC3_UNORM: case CU_AD_FORMAT_BC3_UNORM_SRGB: case CU_AD_FORMAT_BC5_UNORM:
    case CU_AD_FORMAT_BC5_SNORM: case CU_AD_FORMAT_BC6H_UF16: case CU_AD_FORMAT_BC6H_SF16:
    case CU_AD_FORMAT_BC7_UNORM: case CU_AD_FORMAT_BC7_UNORM_SRGB:
        return 1;
    case CU_AD_FORMAT_UNSIGNED_INT16: case CU_AD_FORMAT_SIGNED_INT16: case CU_AD_FORMAT_HALF:
    case CU_AD_FORMAT_UNORM_INT8X2: case CU_AD_FORMAT_SNORM_INT8X2: case CU_AD_FORMAT_UNORM_INT16X1:
    case CU_AD_FORMAT_SNORM_INT16X1: case CU_AD_FORMAT_NV12: case CU_AD_FORMAT_NV16:
    case CU_AD_FORMAT_YUY2:
        return 2;
    case CU_AD_FORMAT_UNSIGNED_INT32: case CU_AD_FORMAT_SIGNED_INT32: case CU_AD_FORMAT_FLOAT:
    case CU_AD_FORMAT_UNORM_INT8X4: case CU_AD_FORMAT_SNORM_INT8X4: case CU_AD_FORMAT_UNORM_INT16X2:
    case CU_AD_FORMAT_SNORM_INT16X2: case CU_AD_FORMAT_P010: case CU_AD_FORMAT_P016:
    case CU_AD_FORMAT_P210: case CU_AD_FORMAT_P216: case CU_AD_FORMAT_Y210: case CU_AD_FORMAT_Y216:
    case CU_AD_FORMAT_AYUV: case CU_AD_FORMAT_Y410: case CU_AD_FORMAT_Y444_PLANAR8:
    case CU_AD_FORMAT_YUV444_8bit_SemiPlanar: case CU_AD_FORMAT_UNORM_INT_101010_2:
        return 4;
    case CU_AD_FORMAT_UNORM_INT16X4: case CU_AD_FORMAT_SNORM_INT16X4: case CU_AD_FORMAT_Y416:
    case CU_AD_FORMAT_Y444_PLANAR10: case CU_AD_FORMAT_YUV444_16bit_SemiPlanar:
        return 8;
    default:
        return 0;
    }
}

static uint64_t dim(uint64_t v) { return v ? v : 1; }

/* The classic formats give one channel's bytes, an element has
 * NumChannels of them. Every other format names its channels
 * (UNORM_INT8X4), or packs its pixels (block-compressed, video): its bytes
 * are a whole element's. cudart passes NumChannels 4 with UNORM_INT8X4 (8
 * bits in each of 4 channels), 3 with NV12: still 4 bytes, 2 bytes. */
static int per_channel(CUarray_format f)
{
    switch (f) {
    case CU_AD_FORMAT_UNSIGNED_INT8: case CU_AD_FORMAT_SIGNED_INT8: case CU_AD_FORMAT_UNSIGNED_INT16:
    case CU_AD_FORMAT_SIGNED_INT16: case CU_AD_FORMAT_HALF: case CU_AD_FORMAT_UNSIGNED_INT32:
    case CU_AD_FORMAT_SIGNED_INT32: case CU_AD_FORMAT_FLOAT:
        return 1;
    default:
        return 0;
    }
}

/* The descriptor's bytes; UINT64_MAX when they overflow (a descriptor no
 * device can hold: over any limit, or uncounted for the driver to refuse). */
static uint64_t array_bytes(size_t w, size_t h, size_t d, CUarray_format f, unsigned channels)
{
    uint64_t v = format_bytes(f);
    if ((per_channel(f) && __builtin_mul_overflow(v, (uint64_t)channels, &v)) || __builtin_mul_overflow(v, dim(w), &v) ||
        __builtin_mul_overflow(v, dim(h), &v) || __builtin_mul_overflow(v, dim(d), &v))
        return UINT64_MAX;
    return v;
}

/* A sparse array, or one whose memory is mapped later (CUDA_ARRAY3D_SPARSE,
 * CUDA_ARRAY3D_DEFERRED_MAPPING), holds none of its own: its memory is
 * cuMemCreate handles mapped into it (cuMemMapArrayAsync), counted there.
 * It is tracked and reported, at 0 bytes, never counted. */
static int holds_memory(unsigned flags)
{
    return !(flags & (CUDA_ARRAY3D_SPARSE | CUDA_ARRAY3D_DEFERRED_MAPPING));
}

static CUresult array_create(CUarray *pHandle, uint64_t bytes, int counted, CUresult (*call)(CUarray *, const void *),
                             const void *desc)
{
    struct gmg_op op;
    if (!pHandle || !desc)
        return call(pHandle, desc);
    if (!counted)
        bytes = 0;
    CUresult r = gmg_begin(&op, GMG_FAM_ARRAY, -1, bytes, counted);
    if (r != CUDA_SUCCESS)
        return r;
    r = call(pHandle, desc);
    gmg_end(&op, r, GMG_SPACE_ARRAY, r == CUDA_SUCCESS ? (uintptr_t)*pHandle : 0, bytes, bytes);
    return r;
}

static CUresult call_create_v2(CUarray *h, const void *d) { return CALL_REAL(cuArrayCreate_v2, h, d); }
static CUresult call_create_v1(CUarray *h, const void *d) { return CALL_REAL(cuArrayCreate, h, d); }
static CUresult call_3d_v2(CUarray *h, const void *d) { return CALL_REAL(cuArray3DCreate_v2, h, d); }
static CUresult call_3d_v1(CUarray *h, const void *d) { return CALL_REAL(cuArray3DCreate, h, d); }

GMG_EXPORT CUresult CUDAAPI cuArrayCreate_v2(CUarray *pHandle, const CUDA_ARRAY_DESCRIPTOR *d)
{
    gmg_enter(H_cuArrayCreate_v2);
    return array_create(pHandle, d ? array_bytes(d->Width, d->Height, 1, d->Format, d->NumChannels) : 0, 1,
                        call_create_v2, d);
}

GMG_EXPORT CUresult CUDAAPI cuArrayCreate(CUarray *pHandle, const CUDA_ARRAY_DESCRIPTOR_v1 *d)
{
    gmg_enter(H_cuArrayCreate);
    return array_create(pHandle, d ? array_bytes(d->Width, d->Height, 1, d->Format, d->NumChannels) : 0, 1,
                        call_create_v1, d);
}

GMG_EXPORT CUresult CUDAAPI cuArray3DCreate_v2(CUarray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *d)
{
    gmg_enter(H_cuArray3DCreate_v2);
    return array_create(pHandle, d ? array_bytes(d->Width, d->Height, d->Depth, d->Format, d->NumChannels) : 0,
                        !d || holds_memory(d->Flags), call_3d_v2, d);
}

GMG_EXPORT CUresult CUDAAPI cuArray3DCreate(CUarray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR_v1 *d)
{
    gmg_enter(H_cuArray3DCreate);
    return array_create(pHandle, d ? array_bytes(d->Width, d->Height, d->Depth, d->Format, d->NumChannels) : 0,
                        !d || holds_memory(d->Flags), call_3d_v1, d);
}

GMG_EXPORT CUresult CUDAAPI cuArrayDestroy(CUarray hArray)
{
    gmg_enter(H_cuArrayDestroy);
    struct gmg_free f;
    gmg_free_take(&f, GMG_SPACE_ARRAY, (uintptr_t)hArray);
    CUresult r = CALL_REAL(cuArrayDestroy, hArray);
    gmg_free_done(&f, r);
    return r;
}

static uint64_t level(size_t v, unsigned l)
{
    if (v == 0)
        return 0; /* a missing dimension stays missing */
    return (v >> l) ? (v >> l) : 1;
}

/* The levels the driver makes: numMipmapLevels clamped to [1, 1 +
 * floor(log2(max(width, height, depth)))] (cuda.h); a layered or cubemap
 * array's Depth is its layers, which no level halves, so only width and
 * height bound it. 0 levels is 1, so a mipmapped array is never free. */
static unsigned mip_levels(const CUDA_ARRAY3D_DESCRIPTOR *d, unsigned asked, int layers)
{
    uint64_t m = d->Width > d->Height ? d->Width : d->Height;
    if (!layers && d->Depth > m)
        m = d->Depth;
    unsigned most = 1;
    while (m >>= 1)
        most++;
    return asked < 1 ? 1 : asked > most ? most : asked;
}

GMG_EXPORT CUresult CUDAAPI cuMipmappedArrayCreate(CUmipmappedArray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *d,
                                                   unsigned int numMipmapLevels)
{
    gmg_enter(H_cuMipmappedArrayCreate);
    struct gmg_op op;
    if (!pHandle || !d)
        return CALL_REAL(cuMipmappedArrayCreate, pHandle, d, numMipmapLevels);
    uint64_t bytes = 0;
    /* a layered or cubemap array's Depth is its layers (faces): every
     * level has them all, only a 3D array's depth halves (cuda.h) */
    int layers = (d->Flags & (CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_CUBEMAP)) != 0;
    unsigned levels = mip_levels(d, numMipmapLevels, layers);
    for (unsigned l = 0; l < levels; l++)
        if (__builtin_add_overflow(bytes, array_bytes(level(d->Width, l) ? level(d->Width, l) : 1, level(d->Height, l),
                                                      layers ? d->Depth : level(d->Depth, l), d->Format, d->NumChannels),
                                   &bytes))
            bytes = UINT64_MAX;
    int counted = holds_memory(d->Flags);
    if (!counted)
        bytes = 0;
    CUresult r = gmg_begin(&op, GMG_FAM_MIPMAP, -1, bytes, counted);
    if (r != CUDA_SUCCESS)
        return r;
    r = CALL_REAL(cuMipmappedArrayCreate, pHandle, d, numMipmapLevels);
    gmg_end(&op, r, GMG_SPACE_ARRAY, r == CUDA_SUCCESS ? (uintptr_t)*pHandle : 0, bytes, bytes);
    return r;
}

GMG_EXPORT CUresult CUDAAPI cuMipmappedArrayDestroy(CUmipmappedArray h)
{
    gmg_enter(H_cuMipmappedArrayDestroy);
    struct gmg_free f;
    gmg_free_take(&f, GMG_SPACE_ARRAY, (uintptr_t)h);
    CUresult r = CALL_REAL(cuMipmappedArrayDestroy, h);
    gmg_free_done(&f, r);
    return r;
}
