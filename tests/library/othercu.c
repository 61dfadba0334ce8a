/*
 * othercu.c MODE - a program that looks up cuMemAlloc_v2 with dlsym on
 * another library's handle (tests/library/mockcu.c), and reaches the driver
 * as the CUDA runtime does (dlopen libcuda.so.1, cuGetProcAddress_v2).
 *   early  the other library's name looked up before the first CUDA call
 *   late   after it
 * Each way the other library's function must be the one dlsym gives (its
 * call counted, its 0xdead0000), and the driver's cuMemAlloc must reach the
 * driver (the simulator's live bytes) and be counted by the guard.
 * Prints "othercu MODE: mock Q CALLS; driver P sim S guard G".
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef CUresult (*gpa_fn)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
typedef CUresult (*alloc_fn)(CUdeviceptr *, size_t);
struct sim_stats { uint64_t total, live, peak, live_allocs, allocs, frees, oom; };

static void *need(void *p, const char *what)
{
    if (!p) {
        printf("othercu: no %s\n", what);
        exit(2);
    }
    return p;
}

static void *get(gpa_fn gpa, const char *name, int version)
{
    void *p = NULL;
    CUdriverProcAddressQueryResult st;
    if (gpa(name, &p, version, 0, &st) != CUDA_SUCCESS)
        p = NULL;
    return need(p, name);
}

int main(int argc, char **argv)
{
    int early = argc > 2 && strcmp(argv[2], "early") == 0;
    void *mock = need(dlopen(argv[1], RTLD_NOW | RTLD_LOCAL), "mock library");
    alloc_fn other = early ? (alloc_fn)dlsym(mock, "cuMemAlloc_v2") : NULL;
    void *cuda = need(dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL), "libcuda.so.1");
    gpa_fn gpa = (gpa_fn)need(dlsym(cuda, "cuGetProcAddress_v2"), "cuGetProcAddress_v2");
    CUresult (*init)(unsigned) = get(gpa, "cuInit", 2000);
    CUresult (*retain)(CUcontext *, CUdevice) = get(gpa, "cuDevicePrimaryCtxRetain", 7000);
    CUresult (*set)(CUcontext) = get(gpa, "cuCtxSetCurrent", 4000);
    CUcontext ctx;
    if (init(0) || retain(&ctx, 0) || set(ctx))
        return 2;
    if (!early)
        other = (alloc_fn)dlsym(mock, "cuMemAlloc_v2");
    CUdeviceptr q = 0, p = 0;
    need((void *)other, "the mock's cuMemAlloc_v2");
    other(&q, 3 << 20);
    alloc_fn drv = get(gpa, "cuMemAlloc", 3020);
    CUresult r = drv(&p, 1 << 20);
    int (*stats)(int, struct sim_stats *) = (int (*)(int, struct sim_stats *))dlsym(cuda, "simGetStats");
    unsigned long long (*live)(int) = (unsigned long long (*)(int))dlsym(RTLD_DEFAULT, "gpumemguard_live_bytes");
    struct sim_stats s = { 0 };
    if (stats)
        stats(0, &s);
    printf("othercu %s: mock %#llx %d; driver %s sim %llu guard %llu\n", early ? "early" : "late", (unsigned long long)q,
           *(int *)need(dlsym(mock, "mock_calls"), "mock_calls"), r == CUDA_SUCCESS && p != 0xdead0000 ? "ok" : "wrong",
           (unsigned long long)s.live, live ? live(0) : 0ull);
    return 0;
}
