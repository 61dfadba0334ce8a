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

/* The driver's free and total memory of `dev`, asked in the calling
 * thread's current context: 0 on success, -1 when that context is not on
 * `dev` (no context is ever made current for the purpose). */
int gmg_dev_meminfo(int dev, uint64_t *freeb, uint64_t *total);

/* The base and size of the driver allocation holding `ptr`: 0 on success. */
int gmg_dev_address_range(uint64_t ptr, uint64_t *base, uint64_t *size);

#endif
