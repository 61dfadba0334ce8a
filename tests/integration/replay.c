/*
 * replay.c - replays the CUDA 13.0 runtime's recorded cuGetProcAddress
 * requests through the guard. Every memory entry point (SPEC §2) must come
 * back wrapped, by a wrapper of exactly the ABI the driver answered with
 * (same symbol name); every other one exactly as the driver gave it, with
 * the same symbolStatus.
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const wrapped[] = {
    "cuMemAlloc", "cuMemAllocPitch", "cuMemFree", "cuMemAllocManaged", "cuMemAllocAsync",
    "cuMemAllocFromPoolAsync", "cuMemFreeAsync", "cuMemCreate", "cuMemRelease", "cuMemMap", "cuMemUnmap",
    "cuMemAddressReserve", "cuMemAddressFree", "cuArrayCreate", "cuArray3DCreate", "cuArrayDestroy",
    "cuMipmappedArrayCreate", "cuMipmappedArrayDestroy", "cuMemAllocHost", "cuMemHostAlloc", "cuMemFreeHost",
    "cuMemHostRegister", "cuMemHostUnregister", "cuIpcOpenMemHandle", "cuIpcCloseMemHandle", "cuGraphAddMemAllocNode",
    "cuGraphAddMemFreeNode", "cuGraphAddNode", "cuMemPoolCreate", "cuMemPoolDestroy", "cuDeviceGetDefaultMemPool",
    "cuDeviceGetMemPool", "cuMemGetDefaultMemPool", "cuMemGetMemPool", "cuMemPoolImportPointer", "cuMemRetainAllocationHandle",
    "cuMemImportFromShareableHandle",
    "cuStreamBeginCapture", "cuStreamBeginCaptureToGraph", "cuStreamEndCapture", "cuCtxDestroy",
    "cuDevicePrimaryCtxReset", "cuDevicePrimaryCtxRelease", "cuDevicePrimaryCtxRetain", "cuMemGetInfo",
    "cuDeviceTotalMem", "cuGetProcAddress",
};

static int is_wrapped(const char *n)
{
    for (size_t i = 0; i < sizeof wrapped / sizeof wrapped[0]; i++)
        if (strcmp(n, wrapped[i]) == 0)
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    FILE *f = fopen(argc > 1 ? argv[1] : "tests/data/cudart-13.0-getprocaddress.txt", "r");
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    if (!f || !h) {
        fprintf(stderr, "cannot open data or libcuda.so.1\n");
        return 2;
    }
    PFN_cuGetProcAddress_v12000 guarded = (PFN_cuGetProcAddress_v12000)dlsym(h, "cuGetProcAddress_v2");
    PFN_cuGetProcAddress_v12000 driver = (PFN_cuGetProcAddress_v12000)dlsym(h, "simGetProcAddress");
    if (!guarded || !driver)
        return 2;
    char line[256], name[128];
    int ver, total = 0, wrapped_n = 0, passed_n = 0, bad = 0;
    unsigned long long flags;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "%127s %d %llu", name, &ver, &flags) != 3 || strncmp(name, "cu", 2) != 0)
            continue;
        total++;
        void *g = NULL, *d = NULL;
        CUdriverProcAddressQueryResult gs = 99, ds = 98;
        CUresult gr = guarded(name, &g, ver, flags, &gs);
        CUresult dr = driver(name, &d, ver, flags, &ds);
        if (gr != dr || gs != ds) {
            printf("FAIL %s %d %llu: result %d/%d status %d/%d\n", name, ver, flags, gr, dr, gs, ds);
            bad++;
            continue;
        }
        if (is_wrapped(name)) {
            Dl_info gi, di;
            int named = dladdr(g, &gi) && dladdr(d, &di) && gi.dli_sname && di.dli_sname;
            int in_guard = named && strstr(gi.dli_fname, "libgpumemguard") != NULL;
            /* GPUSIM_PROC_DISTINCT: the driver answers with simtr_NAME, not NAME */
            const char *dn = named && strncmp(di.dli_sname, "simtr_", 6) == 0 ? di.dli_sname + 6 : named ? di.dli_sname : "";
            if (g == d || !in_guard || strcmp(gi.dli_sname, dn) != 0) {
                printf("FAIL %s %d %llu: not wrapped with the driver's ABI (guard %s, driver %s)\n", name, ver,
                       flags, named ? gi.dli_sname : "?", named ? di.dli_sname : "?");
                bad++;
                continue;
            }
            wrapped_n++;
        } else {
            if (g != d) {
                printf("FAIL %s %d %llu: changed by the guard\n", name, ver, flags);
                bad++;
                continue;
            }
            passed_n++;
        }
    }
    printf("replayed %d lookups: %d wrapped with the right ABI, %d passed through, %d wrong\n", total, wrapped_n,
           passed_n, bad);
    return bad != 0 || wrapped_n == 0;
}
