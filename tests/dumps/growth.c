/*
 * growth.c - 1 MiB allocated, a 2 MiB handle mapped in a reserved range,
 * then a dump (gpumemguard_dump): its growth lists the allocations, the
 * range and the mapping under their own heading.
 *
 *   growth_header
 */
#define _GNU_SOURCE
#include "../integration/testlib.h"

int main(void)
{
    CUdeviceptr p;
    tl_setup(0);
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    CUmemGenericAllocationHandle h;
    CUdeviceptr va;
    cuMemAlloc(&p, 1 << 20);
    cuMemCreate(&h, 2 << 20, &prop, 0);
    cuMemAddressReserve(&va, 4 << 20, 0, 0, 0);
    cuMemMap(va, 2 << 20, 0, h, 0);
    int (*dump)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "gpumemguard_dump");
    if (dump)
        dump();
    return 0;
}
