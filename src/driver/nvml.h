/*
 * nvml.h - device memory from NVML (driver layer), for reports made where
 * the thread has no context on the device: signal dumps on the reporter
 * thread, API dumps from any thread, other devices at exit. NVML answers
 * without a context, which cuMemGetInfo cannot; the guard never makes a
 * context current for a report. libnvidia-ml.so.1 ships with the driver
 * and is opened (RTLD_LOCAL) on the first report that shows device free
 * memory where no context answers (report/output.c); without it
 * the report says the free memory is unknown, as before.
 */
#ifndef GMG_DRIVER_NVML_H
#define GMG_DRIVER_NVML_H

#include <stdint.h>

/* Free and total bytes of CUDA device `dev` (an ordinal of this process,
 * matched to NVML's device by UUID: a MIG instance by its own): 0 on
 * success, -1 when NVML is absent, fails, knows no such device, or was
 * opened by the parent of this forked process (never used across fork).
 * Never waits: a call while another thread opens NVML answers -1. */
int gmg_nvml_meminfo(int dev, uint64_t *freeb, uint64_t *total);

/* Keeps `dev`'s UUID while the driver can still tell it (once per device;
 * a call afterwards costs one load): a report at exit, after the driver has
 * shut down, still finds the device in NVML. */
void gmg_nvml_learn(int dev);

#endif
