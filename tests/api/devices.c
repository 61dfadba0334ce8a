/*
 * devices.c - the public API asked about devices that do not exist (-1, 64)
 * and about device 0, with 1 MiB allocated on it.
 *
 *   api_devices [early]   early: the limits asked first, before any CUDA
 *                         use, and of a device the process does not see (5)
 *   api_devices refusals  8 MiB, 100 MiB on device 0 and 2 MiB of pinned host
 *                         memory asked for; then gpumemguard_refusals of
 *                         every device (-1), device 0 and 64 (no such device)
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include "../integration/testlib.h"

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

static void refusals(void)
{
    int (*ref)(int, unsigned long long *, unsigned long long *) =
        (int (*)(int, unsigned long long *, unsigned long long *))dlsym(RTLD_DEFAULT, "gpumemguard_refusals");
    CUdeviceptr p;
    void *h;
    int r8 = (int)cuMemAlloc_v2(&p, 8u << 20), r100 = (int)cuMemAlloc_v2(&p, 100u << 20), rh = (int)cuMemAllocHost_v2(&h, 2u << 20);
    if (!ref) {
        printf("refusals: no guard\n");
        return;
    }
    unsigned long long q = 0, d = 0, q0 = 0, d0 = 0;
    int all = ref(-1, &q, &d), zero = ref(0, &q0, &d0), none = ref(64, NULL, NULL), nulls = ref(-1, NULL, NULL);
    printf("refusals: calls %d %d %d; -1 rc %d quota %llu driver %llu; 0 rc %d quota %llu driver %llu; 64 rc %d; NULLs rc %d\n",
           r8, r100, rh, all, q, d, zero, q0, d0, none, nulls);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "refusals") == 0) {
        tl_setup(0);
        refusals();
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "early") == 0) {
        unsigned long long (*limit)(int) = (unsigned long long (*)(int))dlsym(RTLD_DEFAULT, "gpumemguard_limit");
        if (!limit)
            return 1;
        unsigned long long before = limit(0);
        tl_setup(0);
        printf("api early: limit 0 before %llu, 0 after %llu, 5 %llu\n", before, limit(0), limit(5));
        return 0;
    }
    tl_setup(0);
    api();
    fflush(stdout);
    return 0;
}
