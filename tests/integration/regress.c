/*
 * regress.c - cases that kill mutations of src/ which survived the suite
 * (docs/testing.md), each a mode, against the simulated driver
 * (linked directly: the guard's exported wrappers see every call). Each mode
 * prints what tests/regress.sh checks, with the driver's own numbers beside
 * the guard's where both can be read.
 *
 *   regress frag       six allocations laid end to end, the 2nd and 5th freed:
 *                      two gaps, one pair of live neighbours touching
 *   regress release    the primary context released twice: the first release
 *                      keeps its memory, the last one reclaims it
 *   regress managed    8 MiB managed, then 4 MiB and 1 byte linear (GPUMEM_LIMIT=4M)
 *   regress order      call sites of 3 x 1 MiB, 2 x 512 KiB and 1 x 6 MiB, made in that order
 *   regress refuse     two call sites refused 3 and 2 times (GPUMEM_LIMIT=1M)
 *   regress legacy     the legacy (pre-_v2) array, 3D array, pitch and IPC entry points
 *   regress formats    every array format the guard sizes, one allocation just at
 *                      and one just over GPUMEM_LIMIT=1M
 *   regress nulls_big  NULL outputs with sizes over the limit: the driver's codes
 *   regress destroy_primary  cuCtxDestroy of a primary context, which the driver refuses
 *   regress stale_ctx  an allocation in the current context after the driver reset it
 *   regress pitch_small a pitch below the guard's 512-byte guess (GPUSIM_PITCH=256)
 *   regress vmm_host   a cuMemCreate handle in host memory, device 1's context current
 *                      (GPUSIM_DEVICES=2, GPUMEM_LIMIT=1M)
 *   regress unmap_range one cuMemUnmap over two mappings of released handles,
 *                      beside a linear allocation and another mapping that stay
 *   regress refuse_dev1 a refusal on device 1 while device 0 holds more (GPUSIM_DEVICES=2,
 *                      GPUMEM_LIMIT=1M)
 *   regress refuse_then 600000 bytes held, 600000 more refused (GPUMEM_LIMIT=1M), the
 *                      600000 freed at once and 700000 allocated after the refusal
 *   regress refuse_abort one allocation refused (GPUMEM_LIMIT=1M), a line on stderr
 *                      as soon as the call returns, then abort() (as CUDA_CHECK does)
 *   regress ties       one call site, 1 MiB on device 0 and 1 MiB on device 1
 *                      (GPUSIM_DEVICES=2)
 *   regress forkfds    the pipes open in a forked child, against its parent's
 *   regress api        gpumemguard_limit and gpumemguard_live_bytes of devices that
 *                      are not (-1, 64) and of device 0
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>

#include <dirent.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define CHECK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { \
    fprintf(stderr, "%s:%d: %s = %d\n", __FILE__, __LINE__, #x, (int)r_); exit(1); } } while (0)

#include "testlib.h"

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

static unsigned long long sim_live(int dev) { return (unsigned long long)tl_sim(dev).live; }

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
    printf("release: after the first release guard %llu sim %llu", tl_guard_live(0), sim_live(0));
    CHECK(cuDevicePrimaryCtxRelease_v2(dev0)); /* the last: the driver resets the context */
    printf("; after the last guard %llu sim %llu", tl_guard_live(0), sim_live(0));
    CHECK(cuDevicePrimaryCtxRetain(&again, dev0));
    CHECK(cuCtxSetCurrent(again));
    leak_after_release();
    printf("; retained again guard %llu sim %llu\n", tl_guard_live(0), sim_live(0));
}

/* ------------------------------------------------------ host teardown */

/* Pinned host memory and registrations go with the context that made them
 * (a real driver's cuMemFreeHost or cuMemHostUnregister of them fails
 * afterwards: docs/gpu-validation.md): reclaimed, not live at exit. */
NOINLINE static void host_in_ctx(void **a, void **b)
{
    CHECK(cuMemAllocHost_v2(a, 1 << 20));
    CHECK(cuMemHostAlloc(b, 2 << 20, CU_MEMHOSTALLOC_PORTABLE));
}

NOINLINE static void host_in_primary(void **c) { CHECK(cuMemAllocHost_v2(c, 512 << 10)); }
NOINLINE static void host_register(void *p, size_t n) { CHECK(cuMemHostRegister_v2(p, n, 0)); }

static void host_teardown(void)
{
    CUcontext c;
    void *a, *b, *p;
    static char reg[64 << 10] __attribute__((aligned(4096)));
    CHECK(cuCtxCreate(&c, 0, dev0));
    host_in_ctx(&a, &b);
    host_register(reg, sizeof reg);
    CHECK(cuCtxDestroy(c));
    CHECK(cuCtxSetCurrent(ctx0));
    CUresult fa = cuMemFreeHost(a), fb = cuMemFreeHost(b), ur = cuMemHostUnregister(reg);
    host_in_primary(&p);
    CHECK(cuDevicePrimaryCtxReset(dev0));
    CUresult fp = cuMemFreeHost(p);
    printf("host_teardown: frees after destroy %d %d, unregister %d, free after reset %d\n", (int)fa, (int)fb, (int)ur,
           (int)fp);
}

/* A reset keeps the retain count (an H100's driver needed as many releases
 * after it as retains were held): a release after a reset that is not the
 * last reclaims nothing, also where the guard counts retains itself. */
NOINLINE static void after_reset(void) { CUdeviceptr p; CHECK(cuMemAlloc_v2(&p, 1 << 20)); }

static void reset_refs(void)
{
    CUcontext again;
    CHECK(cuDevicePrimaryCtxRetain(&again, dev0)); /* two retains held */
    CHECK(cuDevicePrimaryCtxReset(dev0));
    CHECK(cuDevicePrimaryCtxRetain(&again, dev0)); /* three */
    CHECK(cuCtxSetCurrent(again));
    after_reset();
    CHECK(cuDevicePrimaryCtxRelease_v2(dev0)); /* two left */
    printf("reset_refs: after a release guard %llu sim %llu", tl_guard_live(0), sim_live(0));
    CHECK(cuDevicePrimaryCtxRelease_v2(dev0));
    CHECK(cuDevicePrimaryCtxRelease_v2(dev0)); /* the last */
    printf("; after the last guard %llu sim %llu\n", tl_guard_live(0), sim_live(0));
}

/* -------------------------------------------------------------- managed */

NOINLINE static void managed_site(void)
{
    CUdeviceptr m, a, b;
    CUresult rm = cuMemAllocManaged(&m, 8 << 20, CU_MEM_ATTACH_GLOBAL);
    CUresult ra = cuMemAlloc_v2(&a, 4 << 20), rb = cuMemAlloc_v2(&b, 1);
    printf("managed: managed 8MiB %d, 4MiB %d, +1 %d; guard %llu sim %llu\n", (int)rm, (int)ra, (int)rb,
           tl_guard_live(0), sim_live(0));
}

/* ---------------------------------------------------------------- order */

/* by bytes: big, mid, small; by count: mid, small, big; made: mid, small, big */
NOINLINE static void site_mid(void) { CUdeviceptr p; for (int i = 0; i < tries_a; i++) CHECK(cuMemAlloc_v2(&p, 1 << 20)); }
NOINLINE static void site_small(void) { CUdeviceptr p; for (int i = 0; i < tries_b; i++) CHECK(cuMemAlloc_v2(&p, 512 << 10)); }
NOINLINE static void site_big(void) { CUdeviceptr p; CHECK(cuMemAlloc_v2(&p, 6 << 20)); }

static void order(void)
{
    site_mid();
    site_small();
    site_big();
    printf("order: guard %llu sim %llu\n", tl_guard_live(0), sim_live(0));
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
    printf("refuse: %d + %d refused; guard %llu sim %llu\n", a, b, tl_guard_live(0), sim_live(0));
}

/* --------------------------------------------------------------- legacy */

NOINLINE static void legacy(void)
{
    CUDA_ARRAY_DESCRIPTOR_v1 d2 = { 256, 256, CU_AD_FORMAT_FLOAT, 1 };          /* 262144 bytes */
    CUDA_ARRAY3D_DESCRIPTOR_v1 d3 = { 32, 32, 8, CU_AD_FORMAT_FLOAT, 2, 0 };     /* 65536 bytes  */
    CUarray a2, a3;
    CUdeviceptr_v1 p;
    unsigned int pitch = 0;
    CUresult r2 = cuArrayCreate(&a2, &d2);
    printf("legacy: array %d guard %llu sim %llu", (int)r2, tl_guard_live(0), sim_live(0));
    CUresult r3 = cuArray3DCreate(&a3, &d3);
    printf("; 3d %d guard %llu sim %llu", (int)r3, tl_guard_live(0), sim_live(0));
    CUresult rp = cuMemAllocPitch(&p, &pitch, 1000, 100, 4);
    printf("; pitch %d (%u) guard %llu sim %llu", (int)rp, pitch, tl_guard_live(0), sim_live(0));
    CHECK(cuArrayDestroy(a2));
    CHECK(cuArrayDestroy(a3));
    CHECK(cuMemFree(p));
    printf("; freed guard %llu sim %llu", tl_guard_live(0), sim_live(0));
    /* IPC: the driver asks for its one flag */
    CUdeviceptr src, mapped = 0;
    CUipcMemHandle h;
    CHECK(cuMemAlloc_v2(&src, 1 << 20));
    CHECK(cuIpcGetMemHandle(&h, src));
    CUresult ri = cuIpcOpenMemHandle(&mapped, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
    if (ri == CUDA_SUCCESS)
        CHECK(cuIpcCloseMemHandle(mapped));
    printf("; ipc %d\n", (int)ri);
}

/* -------------------------------------------------------------- formats */

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
    printf("formats: %zu, %d wrong; guard %llu sim %llu\n", sizeof fmts / sizeof fmts[0], wrong, tl_guard_live(0), sim_live(0));
}

/* Under GPUMEM_LIMIT=1M: sparse and deferred-mapping arrays hold no memory
 * of their own (handles are mapped into them later, counted as cuMemCreate):
 * 64 MiB of them goes through, counted nowhere, and an ordinary array of
 * 2 MiB is still refused. */
static void sparse(void)
{
    CUDA_ARRAY3D_DESCRIPTOR sp = { 2048, 2048, 4, CU_AD_FORMAT_UNSIGNED_INT8, 1, CUDA_ARRAY3D_SPARSE },
                            dm = { 2048, 2048, 4, CU_AD_FORMAT_UNSIGNED_INT8, 1, CUDA_ARRAY3D_DEFERRED_MAPPING },
                            plain = { 2048, 1024, 1, CU_AD_FORMAT_UNSIGNED_INT8, 1, 0 };
    CUarray a = NULL, b = NULL, c = NULL;
    CUmipmappedArray m = NULL;
    CUresult ra = cuArray3DCreate_v2(&a, &sp), rb = cuArray3DCreate_v2(&b, &dm), rm = cuMipmappedArrayCreate(&m, &sp, 3);
    printf("sparse %d deferred %d mipmapped sparse %d; guard %llu sim %llu\n", (int)ra, (int)rb, (int)rm, tl_guard_live(0),
           sim_live(0));
    CUresult rc = cuArray3DCreate_v2(&c, &plain);
    printf("an ordinary array over the limit: %d\n", (int)rc);
    if (ra == CUDA_SUCCESS)
        CHECK(cuArrayDestroy(a));
    if (rb == CUDA_SUCCESS)
        CHECK(cuArrayDestroy(b));
    if (rm == CUDA_SUCCESS)
        CHECK(cuMipmappedArrayDestroy(m));
}

/* ------------------------------------------------------------ nulls_big */

/* NULL outputs with sizes far over any limit the test sets: the driver's
 * own error, not the guard's refusal */
static void nulls_big(void)
{
    size_t pitch;
    unsigned int pitch32;
    CUDA_ARRAY_DESCRIPTOR d2 = { 1024, 1024, CU_AD_FORMAT_FLOAT, 4 };
    CUDA_ARRAY_DESCRIPTOR_v1 d1 = { 1024, 1024, CU_AD_FORMAT_FLOAT, 4 };
    CUDA_ARRAY3D_DESCRIPTOR d3 = { 256, 256, 16, CU_AD_FORMAT_FLOAT, 4, 0 };
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    CUdeviceptr p;
    CUdeviceptr_v1 p32;
    printf("%d %d %d %d %d %d %d %d %d %d %d %d %d\n", (int)cuMemAlloc_v2(NULL, 16 << 20), (int)cuMemAlloc(NULL, 16 << 20),
           (int)cuMemAllocPitch_v2(NULL, &pitch, 4096, 4096, 4), (int)cuMemAllocPitch_v2(&p, NULL, 4096, 4096, 4),
           (int)cuMemAllocPitch(NULL, &pitch32, 4096, 4096, 4), (int)cuMemAllocPitch(&p32, NULL, 4096, 4096, 4),
           (int)cuMemAllocManaged(NULL, 16 << 20, CU_MEM_ATTACH_GLOBAL), (int)cuMemAllocAsync(NULL, 16 << 20, NULL),
           (int)cuMemCreate(NULL, 16 << 20, &prop, 0), (int)cuArrayCreate_v2(NULL, &d2), (int)cuArrayCreate(NULL, &d1),
           (int)cuArray3DCreate_v2(NULL, &d3), (int)cuMipmappedArrayCreate(NULL, &d3, 2));
}

/* ------------------------------------------------------ destroy_primary */

NOINLINE static void destroy_primary(void)
{
    CUdeviceptr p;
    CHECK(cuMemAlloc_v2(&p, 1 << 20));
    CUresult r2 = cuCtxDestroy_v2(ctx0), r1 = cuCtxDestroy(ctx0);
    printf("destroy primary: %s; guard %llu sim %llu\n", r2 != CUDA_SUCCESS && r1 != CUDA_SUCCESS ? "refused" : "done",
           tl_guard_live(0), sim_live(0));
}

/* ------------------------------------------------------------ stale_ctx */

/* The last release resets the primary context, which stays current on this
 * thread: the driver refuses allocations there (its device is unknown) */
static void stale_ctx(void)
{
    CUdeviceptr p;
    CHECK(cuDevicePrimaryCtxRelease_v2(dev0));
    CUresult r = cuMemAlloc_v2(&p, 2 << 20);
    printf("stale context: alloc %d\n", (int)r);
}

/* ---------------------------------------------------------- pitch_small */

static void pitch_small(void)
{
    CUdeviceptr p;
    CUdeviceptr_v1 p32;
    size_t pitch = 0;
    unsigned int pitch32 = 0;
    CUresult r = cuMemAllocPitch_v2(&p, &pitch, 700, 100, 4);
    printf("pitch_small: %d pitch %zu guard %llu sim %llu", (int)r, pitch, tl_guard_live(0), sim_live(0));
    r = cuMemAllocPitch(&p32, &pitch32, 700, 100, 4);
    printf("; legacy %d pitch %u guard %llu sim %llu\n", (int)r, pitch32, tl_guard_live(0), sim_live(0));
}

/* ------------------------------------------------------------- vmm_host */

NOINLINE static void vmm_host(void)
{
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_HOST;
    CUmemGenericAllocationHandle h;
    CUdevice d1;
    CUcontext c1;
    CHECK(cuDeviceGet(&d1, 1));
    CHECK(cuDevicePrimaryCtxRetain(&c1, d1));
    CHECK(cuCtxSetCurrent(c1));
    CUresult r = cuMemCreate(&h, 2 << 20, &prop, 0);
    printf("vmm_host: %d; guard %llu %llu sim %llu %llu\n", (int)r, tl_guard_live(0), tl_guard_live(1), sim_live(0), sim_live(1));
}

/* ------------------------------------------------------------------ api */

static void api(void)
{
    unsigned long long (*limit)(int) = (unsigned long long (*)(int))dlsym(RTLD_DEFAULT, "gpumemguard_limit");
    CUdeviceptr p;
    CHECK(cuMemAlloc_v2(&p, 1 << 20));
    if (!limit) {
        printf("api: no guard\n");
        return;
    }
    printf("api: limit -1 %llu, 0 %llu, 64 %llu; live -1 %llu, 0 %llu, 64 %llu\n", limit(-1), limit(0), limit(64),
           tl_guard_live(-1), tl_guard_live(0), tl_guard_live(64));
}

/* ---------------------------------------------------------- unmap_range */

NOINLINE static void linear_stays(void) { CUdeviceptr p; CHECK(cuMemAlloc_v2(&p, 1 << 20)); }

NOINLINE static void unmap_range(void)
{
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    CUmemGenericAllocationHandle h1, h2, h3;
    CUdeviceptr va, other;
    linear_stays();
    CHECK(cuMemAddressReserve(&va, 8 << 20, 0, 0, 0));
    CHECK(cuMemAddressReserve(&other, 2 << 20, 0, 0, 0));
    CHECK(cuMemCreate(&h1, 2 << 20, &prop, 0));
    CHECK(cuMemCreate(&h2, 2 << 20, &prop, 0));
    CHECK(cuMemCreate(&h3, 2 << 20, &prop, 0));
    CHECK(cuMemMap(va, 2 << 20, 0, h1, 0));
    CHECK(cuMemMap(va + (2 << 20), 2 << 20, 0, h2, 0));
    CHECK(cuMemMap(other, 2 << 20, 0, h3, 0));
    CHECK(cuMemRelease(h1)); /* mapped: their memory stays until unmapped */
    CHECK(cuMemRelease(h2));
    printf("unmap_range: mapped guard %llu sim %llu", tl_guard_live(0), sim_live(0));
    CHECK(cuMemUnmap(va, 4 << 20)); /* both mappings at once */
    printf("; unmapped guard %llu sim %llu\n", tl_guard_live(0), sim_live(0));
}

/* ---------------------------------------------------------- refuse_dev1 */

NOINLINE static void dev0_site(void) { CUdeviceptr p; CHECK(cuMemAlloc_v2(&p, 512 << 10)); }
NOINLINE static void dev1_site(void) { CUdeviceptr p; CHECK(cuMemAlloc_v2(&p, 256 << 10)); }

static void refuse_dev1(void)
{
    CUdevice d1;
    CUcontext c1;
    CUdeviceptr p;
    dev0_site();
    CHECK(cuDeviceGet(&d1, 1));
    CHECK(cuDevicePrimaryCtxRetain(&c1, d1));
    CHECK(cuCtxSetCurrent(c1));
    dev1_site();
    CUresult r = cuMemAlloc_v2(&p, 2 << 20);
    printf("refuse_dev1: %d; guard %llu %llu\n", (int)r, tl_guard_live(0), tl_guard_live(1));
}

/* ---------------------------------------------------------- refuse_then */

NOINLINE static CUdeviceptr held_at_refusal(void) { CUdeviceptr p; CHECK(cuMemAlloc_v2(&p, 600000)); return p; }
NOINLINE static CUresult refused_then_freed(void) { CUdeviceptr p; return cuMemAlloc_v2(&p, 600000); }
NOINLINE static void made_after_refusal(void) { CUdeviceptr p; CHECK(cuMemAlloc_v2(&p, 700000)); }

static void refuse_then(void)
{
    CUdeviceptr held = held_at_refusal();
    CUresult r = refused_then_freed();
    CHECK(cuMemFree_v2(held)); /* at once, as a retry after out of memory does */
    made_after_refusal();
    usleep(300000);
    printf("refuse_then: %d; guard %llu\n", (int)r, tl_guard_live(0));
}

/* --------------------------------------------------------- refuse_abort */

NOINLINE static CUresult refused_then_abort(void) { CUdeviceptr p; return cuMemAlloc_v2(&p, 2 << 20); }

static void refuse_abort(void)
{
    CUresult r = refused_then_abort();
    dprintf(2, "refuse_abort: the refused call returned %d\n", (int)r);
    abort();
}

/* -------------------------------------------------------------- forkfds */

static int pipes_open(void)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    int n = 0;
    char link[300], target[256];
    while (d && (e = readdir(d)) != NULL) {
        snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
        ssize_t k = readlink(link, target, sizeof target - 1);
        if (k > 5 && !strncmp(target, "pipe:", 5))
            n++;
    }
    if (d)
        closedir(d);
    return n;
}

static void forkfds(void)
{
    CUdeviceptr p;
    CHECK(cuMemAlloc_v2(&p, 1 << 20));
    int parent = pipes_open();
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        printf("forkfds: parent %d child %d\n", parent, pipes_open());
        fflush(stdout);
        _exit(0);
    }
    int st;
    waitpid(pid, &st, 0);
}

/* ----------------------------------------------------------------- ties */

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
        fprintf(stderr, "usage: regress MODE\n");
        return 2;
    }
    const char *m = argv[1];
    setup();
    if (!strcmp(m, "frag")) frag();
    else if (!strcmp(m, "release")) release();
    else if (!strcmp(m, "host_teardown")) host_teardown();
    else if (!strcmp(m, "reset_refs")) reset_refs();
    else if (!strcmp(m, "managed")) managed_site();
    else if (!strcmp(m, "order")) order();
    else if (!strcmp(m, "refuse")) refuse();
    else if (!strcmp(m, "legacy")) legacy();
    else if (!strcmp(m, "formats")) formats();
    else if (!strcmp(m, "sparse")) sparse();
    else if (!strcmp(m, "nulls_big")) nulls_big();
    else if (!strcmp(m, "destroy_primary")) destroy_primary();
    else if (!strcmp(m, "stale_ctx")) stale_ctx();
    else if (!strcmp(m, "pitch_small")) pitch_small();
    else if (!strcmp(m, "vmm_host")) vmm_host();
    else if (!strcmp(m, "api")) api();
    else if (!strcmp(m, "refuse_dev1")) refuse_dev1();
    else if (!strcmp(m, "refuse_then")) refuse_then();
    else if (!strcmp(m, "refuse_abort")) refuse_abort();
    else if (!strcmp(m, "forkfds")) forkfds();
    else if (!strcmp(m, "ties")) ties();
    else if (!strcmp(m, "unmap_range")) unmap_range();
    else { fprintf(stderr, "unknown mode %s\n", m); return 2; }
    return 0;
}
