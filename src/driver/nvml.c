/*
 * nvml.c - see nvml.h.
 *
 * The few NVML functions used are declared here from their stable C ABI
 * (nvml.h is not part of every CUDA toolkit install). The state is one
 * word, claimed with a compare-and-swap: no lock, so that a fork while
 * another thread opens NVML leaves the child nothing held, and a report on
 * a signal-woken thread never waits for another.
 */
#define _GNU_SOURCE
#include "driver/nvml.h"

#include "base/limit_parse.h" /* GMG_MAX_DEVICES */
#include "base/log.h"
#include "driver/real.h"
#include "driver/routes.h"

#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

typedef int nvml_return;                 /* nvmlReturn_t: 0 is NVML_SUCCESS */
typedef struct nvml_device *nvml_device; /* nvmlDevice_t */
struct nvml_memory {                     /* nvmlMemory_t (version 1) */
    unsigned long long total, free, used;
};

static nvml_return (*p_init)(void);                                        /* nvmlInit_v2 */
static nvml_return (*p_by_uuid)(const char *uuid, nvml_device *device);     /* nvmlDeviceGetHandleByUUID */
static nvml_return (*p_meminfo)(nvml_device device, struct nvml_memory *m); /* nvmlDeviceGetMemoryInfo */

enum { NV_UNTRIED, NV_OPENING, NV_READY, NV_ABSENT };
static int state = NV_UNTRIED;
static pid_t owner; /* the process that opened it: written before state becomes NV_READY */

static int open_nvml(void)
{
    void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        gmg_debug("no NVML (device free memory unknown where no context is current): %s", dlerror());
        return -1;
    }
    p_init = (nvml_return(*)(void))gmg_real_dlsym(h, "nvmlInit_v2");
    p_by_uuid = (nvml_return(*)(const char *, nvml_device *))gmg_real_dlsym(h, "nvmlDeviceGetHandleByUUID");
    p_meminfo = (nvml_return(*)(nvml_device, struct nvml_memory *))gmg_real_dlsym(h, "nvmlDeviceGetMemoryInfo");
    nvml_return r = -1;
    if (!p_init || !p_by_uuid || !p_meminfo || (r = p_init()) != 0) {
        gmg_debug("NVML unusable (nvmlInit_v2: %d)", r);
        return -1; /* the handle stays open: NVML may have started something */
    }
    return 0;
}

static int ready(void)
{
    int s = __atomic_load_n(&state, __ATOMIC_ACQUIRE);
    if (s == NV_UNTRIED && __atomic_compare_exchange_n(&state, &s, NV_OPENING, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        owner = getpid();
        s = open_nvml() == 0 ? NV_READY : NV_ABSENT;
        __atomic_store_n(&state, s, __ATOMIC_RELEASE);
    }
    return s == NV_READY && owner == getpid();
}

/* NVML's name of a UUID: "GPU-" or "MIG-", then 8-4-4-4-12 hex digits. */
static void uuid_name(char out[41], const char *prefix, const unsigned char b[16])
{
    snprintf(out, 41, "%s%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", prefix, b[0], b[1],
             b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

/* Each device's UUID, kept when first asked: at exit a real driver has
 * shut down before the guard's report (cuDeviceGetUuid_v2 fails there, as
 * an H100's driver 580 showed: docs/gpu-validation.md), and NVML, which
 * still answers, is found by it. known[]: 0 not yet, 2 while the first
 * asker writes the bytes, 1 once they are there. */
static CUuuid uuids[GMG_MAX_DEVICES];
static int known[GMG_MAX_DEVICES];

static int uuid_of(int dev, CUuuid *u)
{
    if (dev < 0 || dev >= GMG_MAX_DEVICES)
        return -1;
    if (__atomic_load_n(&known[dev], __ATOMIC_ACQUIRE) == 1) { /* 2: another thread is writing it */
        *u = uuids[dev];
        return 0;
    }
    if (!REAL(cuDeviceGetUuid_v2) || REAL(cuDeviceGetUuid_v2)(u, dev) != CUDA_SUCCESS)
        return -1;
    int was = 0;
    if (__atomic_compare_exchange_n(&known[dev], &was, 2, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
        uuids[dev] = *u; /* the first asker writes, then publishes */
        __atomic_store_n(&known[dev], 1, __ATOMIC_RELEASE);
    }
    return 0;
}

void gmg_nvml_learn(int dev)
{
    CUuuid u;
    if (dev >= 0 && dev < GMG_MAX_DEVICES && !__atomic_load_n(&known[dev], __ATOMIC_RELAXED))
        (void)uuid_of(dev, &u);
}

int gmg_nvml_meminfo(int dev, uint64_t *freeb, uint64_t *total)
{
    CUuuid u;
    if (uuid_of(dev, &u) != 0 || !ready())
        return -1;
    /* cuDeviceGetUuid_v2 gives a MIG instance's own UUID: NVML names it "MIG-" */
    static const char *const prefixes[] = { "GPU-", "MIG-" };
    for (int i = 0; i < 2; i++) {
        char name[41];
        nvml_device d;
        struct nvml_memory m;
        uuid_name(name, prefixes[i], (const unsigned char *)u.bytes);
        if (p_by_uuid(name, &d) == 0 && p_meminfo(d, &m) == 0) {
            *freeb = m.free;
            *total = m.total;
            return 0;
        }
    }
    return -1;
}
