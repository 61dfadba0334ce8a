/*
 * audit.c - small driver-API programs for tests/audit.sh (SPEC checks of an
 * audit): each mode does one thing and prints what the driver answered.
 *
 *   audit stdio              a leak, and a line on stdout left in its buffer
 *   audit oom BYTES          an allocation the driver fails, then 1 MiB
 *   audit pitch W H          one pitched allocation
 *   audit growth             1 MiB, a reserved range with a mapping, a dump
 *   audit alloc BYTES        one allocation
 *   audit dev1 BYTES         one allocation on device 1 (GPUSIM_DEVICES=2)
 *   audit hostrefuse         4 MiB of pinned host memory from each of three
 *                            call sites, 1 MiB of device memory, then 2 MiB
 *                            more of it (GPUMEM_LIMIT=2M refuses that)
 */
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void context(int ordinal)
{
    CUdevice d;
    CUcontext c;
    if (cuInit(0) || cuDeviceGet(&d, ordinal) || cuDevicePrimaryCtxRetain(&c, d) || cuCtxSetCurrent(c)) {
        fprintf(stderr, "audit: no context\n");
        exit(1);
    }
}

static unsigned long long live(void)
{
    unsigned long long (*f)(int) = (unsigned long long (*)(int))dlsym(RTLD_DEFAULT, "gpumemguard_live_bytes");
    return f ? f(0) : 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    CUdeviceptr p;
    context(strcmp(mode, "dev1") == 0);
    if (strcmp(mode, "copy") == 0 && argc > 2) {
        /* the public API through another copy of the guard, opened by path */
        cuMemAlloc(&p, 1 << 20);
        void *h = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
        unsigned long long (*f)(int) = h ? (unsigned long long (*)(int))dlsym(h, "gpumemguard_live_bytes") : NULL;
        printf("copy: live %llu\n", f ? f(0) : 0ull);
    } else if (strcmp(mode, "stdio") == 0) {
        cuMemAlloc(&p, 1 << 20);
        printf("program output, still buffered at exit\n"); /* no flush: exit's job */
    } else if (strcmp(mode, "oom") == 0 && argc > 2) {
        CUresult r1 = cuMemAlloc(&p, strtoull(argv[2], NULL, 0));
        CUresult r2 = cuMemAlloc(&p, 1 << 20);
        printf("oom: %d, then 1 MiB: %d\n", (int)r1, (int)r2);
    } else if (strcmp(mode, "pitch") == 0 && argc > 3) {
        size_t pitch = 0;
        CUresult r = cuMemAllocPitch(&p, &pitch, strtoull(argv[2], NULL, 0), strtoull(argv[3], NULL, 0), 4);
        printf("pitch: %d, pitch %zu, guard %llu\n", (int)r, pitch, live());
    } else if (strcmp(mode, "growth") == 0) {
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
    } else if (strcmp(mode, "hostrefuse") == 0) {
        void *h1, *h2, *h3;
        CUresult a = cuMemAllocHost(&h1, 4 << 20);
        CUresult b = cuMemAllocHost(&h2, 4 << 20);
        CUresult c = cuMemAllocHost(&h3, 4 << 20);
        CUresult d = cuMemAlloc(&p, 1 << 20);
        CUdeviceptr q;
        CUresult e = cuMemAlloc(&q, 2 << 20);
        printf("hostrefuse: %d %d %d %d, then %d\n", (int)a, (int)b, (int)c, (int)d, (int)e);
    } else if ((strcmp(mode, "alloc") == 0 || strcmp(mode, "dev1") == 0) && argc > 2) {
        printf("alloc: %d\n", (int)cuMemAlloc(&p, strtoull(argv[2], NULL, 0)));
    } else {
        fprintf(stderr, "audit: unknown mode '%s'\n", mode);
        return 1;
    }
    return 0;
}
