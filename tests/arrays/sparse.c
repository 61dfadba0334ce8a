/*
 * sparse.c - sparse and deferred-mapping arrays hold no memory of their own
 * (handles are mapped into them later, counted as cuMemCreate).
 *
 *   sparse_arrays sparse   64 MiB of them under GPUMEM_LIMIT=1M, counted
 *                          nowhere; an ordinary 2 MiB array still refused
 *   sparse_arrays arrays   a 256 MiB sparse array under GPUMEM_LIMIT=4M, listed
 *                          at 0 bytes; the dense one refused
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include "../integration/testlib.h"

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
           tl_sim_live(0));
    CUresult rc = cuArray3DCreate_v2(&c, &plain);
    printf("an ordinary array over the limit: %d\n", (int)rc);
    if (ra == CUDA_SUCCESS)
        CHECK(cuArrayDestroy(a));
    if (rb == CUDA_SUCCESS)
        CHECK(cuArrayDestroy(b));
    if (rm == CUDA_SUCCESS)
        CHECK(cuMipmappedArrayDestroy(m));
}

NOINLINE static void leak_sparse(CUarray *a)
{
    CUDA_ARRAY3D_DESCRIPTOR d = { 4096, 4096, 0, CU_AD_FORMAT_FLOAT, 4, CUDA_ARRAY3D_SPARSE };
    TL_CHECK(cuArray3DCreate_v2(a, &d));
}

/* A sparse array holds no memory: allowed over the limit (GPUMEM_LIMIT=4M),
 * listed at 0 bytes; destroyed twice: the second is the driver's to answer. */
static void arrays(void)
{
    CUarray a, b;
    leak_sparse(&a);
    CUDA_ARRAY3D_DESCRIPTOR dd = { 4096, 4096, 0, CU_AD_FORMAT_FLOAT, 4, CUDA_ARRAY3D_DEFERRED_MAPPING };
    CUresult deferred = cuArray3DCreate_v2(&b, &dd);
    CUDA_ARRAY3D_DESCRIPTOR big = { 4096, 4096, 0, CU_AD_FORMAT_FLOAT, 4, 0 };
    CUarray c;
    CUresult dense = cuArray3DCreate_v2(&c, &big);
    TL_CHECK(cuArrayDestroy(b));
    printf("arrays: deferred %d dense %d; guard %llu sim %llu\n", (int)deferred, (int)dense, tl_guard_live(0), tl_sim_live(0));
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: sparse_arrays sparse|arrays\n");
        return 2;
    }
    const char *m = argv[1];
    tl_setup(0);
    if (!strcmp(m, "sparse")) sparse();
    else if (!strcmp(m, "arrays")) arrays();
    else {
        fprintf(stderr, "unknown mode %s\n", m);
        return 2;
    }
    fflush(stdout);
    return 0;
}
