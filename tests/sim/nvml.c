/*
 * nvml.c - a test double of NVML (libnvidia-ml.so.1) over the simulated
 * driver: the guard asks it for device memory where no context is current
 * (src/driver/nvml.c). Devices are found by UUID, as NVML's are: the
 * simulated driver's cuDeviceGetUuid_v2, written "GPU-8-4-4-4-12" (asked
 * through simDeviceUuid, which still answers after the driver's shutdown).
 *
 *   GPUSIM_NVML=absent   nvmlInit_v2 fails (NVML_ERROR_DRIVER_NOT_LOADED)
 *   GPUSIM_NVML=mig      every device is a MIG instance: only its "MIG-"
 *                        name is known, as NVML names one
 *   GPUSIM_NVML_SKEW=N   free memory reads N bytes less than the driver's
 *                        (tells a test which of the two a report shows)
 *
 * Every call is counted in the file GPUSIM_NVML_LOG names, one line each
 * ("init", "uuid NAME", "mem DEV"), for tests that check who asked.
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

/* tests/sim/sim.c */
CUresult simDeviceMemInfo(CUdevice dev, size_t *freeb, size_t *total);
int simDeviceCount(void);
CUresult simDeviceUuid(CUuuid *uuid, CUdevice dev);

enum { NVML_SUCCESS = 0, NVML_ERROR_UNINITIALIZED = 1, NVML_ERROR_INVALID_ARGUMENT = 2,
       NVML_ERROR_NOT_FOUND = 6, NVML_ERROR_DRIVER_NOT_LOADED = 9 };
typedef struct { unsigned long long total, free, used; } nvmlMemory_t;

static int inited;
static long devices[64]; /* handles point here: devices[dev] == dev */

static void note(const char *what, const char *name, int dev)
{
    const char *path = getenv("GPUSIM_NVML_LOG");
    if (!path)
        return;
    char line[128];
    int len = name ? snprintf(line, sizeof line, "%s %s\n", what, name)
              : dev >= 0 ? snprintf(line, sizeof line, "%s %d\n", what, dev) : snprintf(line, sizeof line, "%s\n", what);
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd >= 0) {
        if (write(fd, line, (size_t)len) < 0) { /* a test's log: nothing to do */ }
        close(fd);
    }
}

EXPORT int nvmlInit_v2(void)
{
    note("init", NULL, -1);
    const char *m = getenv("GPUSIM_NVML");
    if (m && !strcmp(m, "absent"))
        return NVML_ERROR_DRIVER_NOT_LOADED;
    inited = 1;
    return NVML_SUCCESS;
}

EXPORT int nvmlDeviceGetHandleByUUID(const char *uuid, void **device)
{
    if (!inited)
        return NVML_ERROR_UNINITIALIZED;
    if (!uuid || !device)
        return NVML_ERROR_INVALID_ARGUMENT;
    note("uuid", uuid, -1);
    const char *m = getenv("GPUSIM_NVML");
    const char *prefix = m && !strcmp(m, "mig") ? "MIG-" : "GPU-";
    int n = simDeviceCount();
    for (int d = 0; d < n && d < 64; d++) {
        CUuuid u;
        char name[64];
        const unsigned char *b = (const unsigned char *)u.bytes;
        if (simDeviceUuid(&u, d) != CUDA_SUCCESS)
            continue;
        snprintf(name, sizeof name, "%s%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", prefix,
                 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
        if (!strcmp(name, uuid)) {
            devices[d] = d;
            *device = &devices[d];
            return NVML_SUCCESS;
        }
    }
    return NVML_ERROR_NOT_FOUND;
}

EXPORT int nvmlDeviceGetMemoryInfo(void *device, nvmlMemory_t *mem)
{
    if (!inited)
        return NVML_ERROR_UNINITIALIZED;
    if (!device || !mem)
        return NVML_ERROR_INVALID_ARGUMENT;
    int dev = (int)*(long *)device;
    note("mem", NULL, dev);
    size_t f, t;
    if (simDeviceMemInfo(dev, &f, &t) != CUDA_SUCCESS)
        return NVML_ERROR_INVALID_ARGUMENT;
    const char *skew = getenv("GPUSIM_NVML_SKEW");
    unsigned long long s = skew ? strtoull(skew, NULL, 10) : 0;
    mem->total = t;
    mem->free = f > s ? f - s : 0;
    mem->used = t - mem->free;
    return NVML_SUCCESS;
}
