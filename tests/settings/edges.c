/* edges.c - settings and queries at their edges, each mode one case:
 *   alloc N        cuMemAlloc of N bytes: prints the driver's answer and the limit
 *   totalmem       cuDeviceTotalMem and cuMemGetInfo's total
 *   managed        3 MiB managed, then 3 MiB and 2 MiB linear (GPUMEM_LIMIT=4M)
 *   teardown       managed, pitched, stream-ordered and array memory in a
 *                  context that is destroyed; then, in a new one, the limit
 *                  exact to the byte (GPUMEM_LIMIT=8M)
 *   mipmap         a layered mipmapped array with more layers than its
 *                  width and height: the guard's bytes are the driver's
 */
#include "../integration/testlib.h"

static void alloc_n(unsigned long long n)
{
    CUdeviceptr p;
    CUresult r = cuMemAlloc(&p, n);
    printf("alloc %llu: rc %d limit %llu\n", n, (int)r, tl_guard_limit(0));
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    tl_setup(0);
    if (!strcmp(mode, "alloc")) {
        alloc_n(strtoull(argv[2], NULL, 0));
    } else if (!strcmp(mode, "totalmem")) {
        size_t total = 0, fr = 0, t2 = 0;
        TL_CHECK(cuDeviceTotalMem(&total, 0));
        TL_CHECK(cuMemGetInfo(&fr, &t2));
        printf("totalmem: %zu meminfo total %zu sim %llu\n", total, t2, (unsigned long long)tl_sim(0).total);
    } else if (!strcmp(mode, "managed")) {
        CUdeviceptr m, a, b;
        TL_CHECK(cuMemAllocManaged(&m, 3 << 20, CU_MEM_ATTACH_GLOBAL));
        CUresult r1 = cuMemAlloc(&a, 3 << 20);
        CUresult r2 = cuMemAlloc(&b, 2 << 20);
        printf("managed: 3 MiB linear rc %d, 2 MiB more rc %d, guard %llu\n", (int)r1, (int)r2, tl_guard_live(0));
    } else if (!strcmp(mode, "teardown")) {
        CUdevice d;
        CUcontext c;
        TL_CHECK(cuDeviceGet(&d, 0));
        TL_CHECK(cuCtxCreate(&c, NULL, 0, d));
        CUdeviceptr m, pch, as;
        size_t pitch;
        TL_CHECK(cuMemAllocManaged(&m, 1 << 20, CU_MEM_ATTACH_GLOBAL));
        TL_CHECK(cuMemAllocPitch(&pch, &pitch, 1024, 1024, 4));
        TL_CHECK(cuMemAllocAsync(&as, 2 << 20, NULL));
        TL_CHECK(cuStreamSynchronize(NULL));
        CUarray arr;
        CUDA_ARRAY_DESCRIPTOR ad = { .Width = 256, .Height = 256, .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 4 };
        TL_CHECK(cuArrayCreate(&arr, &ad));
        printf("teardown: before guard %llu sim %llu\n", tl_guard_live(0), (unsigned long long)tl_sim(0).live);
        TL_CHECK(cuCtxDestroy(c));
        printf("teardown: after guard %llu sim %llu\n", tl_guard_live(0), (unsigned long long)tl_sim(0).live);
        tl_setup(0);
        CUdeviceptr x, y;
        CUresult r1 = cuMemAlloc(&x, 8 << 20);
        CUresult r2 = cuMemAlloc(&y, 1);
        printf("teardown: 8 MiB rc %d, 1 byte more rc %d, guard %llu\n", (int)r1, (int)r2, tl_guard_live(0));
        TL_CHECK(cuMemFree(x));
        CUresult r3 = cuMemAlloc(&x, (8 << 20) + 1);
        printf("teardown: freed, guard %llu; 8 MiB + 1 rc %d\n", tl_guard_live(0), (int)r3);
    } else if (!strcmp(mode, "mipmap")) {
        CUmipmappedArray mm;
        CUDA_ARRAY3D_DESCRIPTOR ad = { .Width = 4, .Height = 4, .Depth = 64, .Format = CU_AD_FORMAT_FLOAT,
                                       .NumChannels = 1, .Flags = CUDA_ARRAY3D_LAYERED };
        TL_CHECK(cuMipmappedArrayCreate(&mm, &ad, 3));
        printf("mipmap: guard %llu sim %llu\n", tl_guard_live(0), (unsigned long long)tl_sim(0).live);
    }
    fflush(stdout);
    return 0;
}
