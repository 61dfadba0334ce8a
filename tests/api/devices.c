/*
 * devices.c - the public API asked about devices that do not exist (-1, 64)
 * and about device 0, with 1 MiB allocated on it.
 *
 *   api_devices
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

int main(void)
{
    tl_setup(0);
    api();
    fflush(stdout);
    return 0;
}
