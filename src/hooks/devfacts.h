/*
 * devfacts.h - facts about devices, asked of the real driver (hooks layer)
 * for the layers that may not call it: the quota's device totals (handed in
 * by the wrappers), and the report side's device interface (memory info,
 * address ranges), which guard.c passes to the report side.
 */
#ifndef GMG_HOOKS_DEVFACTS_H
#define GMG_HOOKS_DEVFACTS_H

#include <stdint.h>

/* The device's memory in bytes (cuDeviceTotalMem), 0 if unknown. */
uint64_t gmg_dev_total(int dev);

/* The free and total memory of `dev`: the driver's cuMemGetInfo when the
 * calling thread's current context is on `dev` (GMG_MEMINFO_DRIVER), else
 * NVML's (GMG_MEMINFO_NVML, driver/nvml.h); -1 when neither can say. No
 * context is ever made current for the purpose. The two values are those
 * of report/report.h's device interface, which this function is. */
enum { GMG_MEMINFO_DRIVER = 0, GMG_MEMINFO_NVML = 1 };
int gmg_dev_meminfo(int dev, uint64_t *freeb, uint64_t *total);

/* The base and size of the driver allocation holding `ptr`: 0 on success. */
int gmg_dev_address_range(uint64_t ptr, uint64_t *base, uint64_t *size);

#endif
