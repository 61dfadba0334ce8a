/*
 * per_site.c - a refusal message once per call site, however often the site
 * is refused; every refusal counted. Two call sites refused 3 and 2 times
 * (GPUMEM_LIMIT=1M), beside 512 KiB kept.
 *
 *   refusal_sites
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include "../integration/testlib.h"

/* volatile: the loops stay loops (an unrolled loop is several call sites) */
static volatile int tries_a = 3, tries_b = 2;

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
    printf("refuse: %d + %d refused; guard %llu sim %llu\n", a, b, tl_guard_live(0), tl_sim_live(0));
}

int main(void)
{
    tl_setup(0);
    refuse();
    fflush(stdout);
    return 0;
}
