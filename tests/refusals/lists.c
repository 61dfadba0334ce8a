/*
 * lists.c - what a refusal message lists: the biggest live allocations that
 * hold the refused device's quota, as they were at the refusal.
 *
 *   refusal_lists order          20 call sites of 64 KiB to 1.25 MiB in a shuffled
 *                                order, then 16 MiB refused (GPUMEM_LIMIT=16M)
 *   refusal_lists refuse_dev1    a refusal on device 1 while device 0 holds more
 *                                (GPUSIM_DEVICES=2, GPUMEM_LIMIT=1M)
 *   refusal_lists refuse_then    600000 bytes held, 600000 more refused
 *                                (GPUMEM_LIMIT=1M), the 600000 freed at once and
 *                                700000 allocated after the refusal
 *   refusal_lists refusal_lists  three 64 MiB cuMemCreate handles in host memory
 *                                and a sparse array beside 4 MiB on the device,
 *                                then 1 byte more (GPUMEM_LIMIT=4M)
 *   refusal_lists hostrefuse     pinned host memory bigger than the device
 *                                memory, then a refusal (GPUMEM_LIMIT=2M)
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include "../integration/testlib.h"

#include <unistd.h>

#define MiB (1024ull * 1024)

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

NOINLINE static void leak_sparse(CUarray *a)
{
    CUDA_ARRAY3D_DESCRIPTOR d = { 4096, 4096, 0, CU_AD_FORMAT_FLOAT, 4, CUDA_ARRAY3D_SPARSE };
    TL_CHECK(cuArray3DCreate_v2(a, &d));
}

/* A refusal's message lists what holds the device's quota: not pinned host
 * memory made with cuMemCreate (three 64 MiB handles in host memory, which
 * would fill the three places the message has), nor a sparse array (0
 * bytes). GPUMEM_LIMIT=4M: the 4 MiB on the device is what it must name. */
NOINLINE static void leak_host_handle(void)
{
    CUmemAllocationProp p = tl_vmm_prop(0);
    p.location.type = CU_MEM_LOCATION_TYPE_HOST;
    CUmemGenericAllocationHandle h;
    TL_CHECK(cuMemCreate(&h, 64 * MiB, &p, 0));
}
NOINLINE static void leak_on_device(void)
{
    CUdeviceptr p;
    TL_CHECK(cuMemAlloc_v2(&p, 4 * MiB));
}

static void refusal_lists(void)
{
    CUarray a;
    leak_sparse(&a);
    leak_host_handle(); /* three call sites: three groups, whatever the compiler unrolls */
    leak_host_handle();
    leak_host_handle();
    leak_on_device();
    CUdeviceptr p;
    printf("refusal lists: 1 byte more %d; guard %llu sim %llu\n", (int)cuMemAlloc_v2(&p, 1), tl_guard_live(0), tl_sim_live(0));
}

/* 4 MiB of pinned host memory from each of three call sites, 1 MiB of
 * device memory, then 2 MiB more of it (GPUMEM_LIMIT=2M refuses that) */
static void hostrefuse(void)
{
    CUdeviceptr p;
    void *h1, *h2, *h3;
    CUresult a = cuMemAllocHost_v2(&h1, 4 << 20);
    CUresult b = cuMemAllocHost_v2(&h2, 4 << 20);
    CUresult c = cuMemAllocHost_v2(&h3, 4 << 20);
    CUresult d = cuMemAlloc_v2(&p, 1 << 20);
    CUdeviceptr q;
    CUresult e = cuMemAlloc_v2(&q, 2 << 20);
    printf("hostrefuse: %d %d %d %d, then %d\n", (int)a, (int)b, (int)c, (int)d, (int)e);
}

/* 20 call sites of 64 KiB to 1.25 MiB, called in a shuffled order, then a
 * refusal: its message lists the biggest first, whatever order they came in */
#define SIZED(n) NOINLINE static void sized_##n(void) { CUdeviceptr p; CHECK(cuMemAlloc_v2(&p, (n) << 16)); }
SIZED(1) SIZED(2) SIZED(3) SIZED(4) SIZED(5) SIZED(6) SIZED(7) SIZED(8) SIZED(9) SIZED(10)
SIZED(11) SIZED(12) SIZED(13) SIZED(14) SIZED(15) SIZED(16) SIZED(17) SIZED(18) SIZED(19) SIZED(20)

static void order(void)
{
    void (*f[20])(void) = { sized_7, sized_19, sized_2, sized_13, sized_20, sized_1, sized_11, sized_16, sized_4,
                            sized_9, sized_18, sized_3, sized_14, sized_6, sized_10, sized_17, sized_5, sized_15,
                            sized_8, sized_12 };
    for (int i = 0; i < 20; i++)
        f[i]();
    CUdeviceptr p;
    printf("order: %d\n", (int)cuMemAlloc_v2(&p, 16 << 20));
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: refusal_lists refuse_dev1|refuse_then|refusal_lists|hostrefuse|order\n");
        return 2;
    }
    const char *m = argv[1];
    tl_setup(0);
    if (!strcmp(m, "refuse_dev1")) refuse_dev1();
    else if (!strcmp(m, "refuse_then")) refuse_then();
    else if (!strcmp(m, "refusal_lists")) refusal_lists();
    else if (!strcmp(m, "hostrefuse")) hostrefuse();
    else if (!strcmp(m, "order")) order();
    else {
        fprintf(stderr, "unknown mode %s\n", m);
        return 2;
    }
    fflush(stdout);
    return 0;
}
