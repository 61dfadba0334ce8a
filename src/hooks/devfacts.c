/* devfacts.c - see devfacts.h. */
#include "hooks/devfacts.h"

#include "driver/nvml.h"
#include "hooks/intercept.h"

uint64_t gmg_dev_total(int dev)
{
    size_t bytes = 0;
    if (REAL(cuDeviceTotalMem_v2) && REAL(cuDeviceTotalMem_v2)(&bytes, dev) == CUDA_SUCCESS)
        return bytes;
    return 0;
}

int gmg_dev_meminfo(int dev, uint64_t *freeb, uint64_t *total)
{
    size_t f, t;
    if (gmg_current_device(NULL) == dev && REAL(cuMemGetInfo_v2) && REAL(cuMemGetInfo_v2)(&f, &t) == CUDA_SUCCESS) {
        *freeb = f;
        *total = t;
        return GMG_MEMINFO_DRIVER;
    }
    return gmg_nvml_meminfo(dev, freeb, total) == 0 ? GMG_MEMINFO_NVML : -1;
}

int gmg_dev_address_range(uint64_t ptr, uint64_t *base, uint64_t *size)
{
    CUdeviceptr b;
    size_t s;
    if (!REAL(cuMemGetAddressRange_v2) || REAL(cuMemGetAddressRange_v2)(&b, &s, (CUdeviceptr)ptr) != CUDA_SUCCESS)
        return -1;
    *base = b;
    *size = s;
    return 0;
}
