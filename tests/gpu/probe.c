// probe.c - GPU suite: the real driver's answers to the questions the
// simulated driver (tests/sim) models, one "probe NAME: ..." line each, for
// docs/gpu-validation.md. Run without the guard: it asks the driver, not us.
//   cc -I$CUDA_HOME/include -o probe tests/gpu/probe.c -lcuda -ldl
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#define CK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char *n_ = "?"; \
    cuGetErrorName(r_, &n_); printf("probe error: %s -> %s\n", #x, n_); } } while (0)

static const char *ename(CUresult r)
{
    const char *n = "?";
    cuGetErrorName(r, &n);
    return n;
}

// cuGetProcAddress's pointer against the exported symbol of each name
static void procaddr(void *lib)
{
    static const struct { const char *sym, *export; int ver; } t[] = {
        { "cuMemAlloc", "cuMemAlloc_v2", 12000 },       { "cuMemFree", "cuMemFree_v2", 12000 },
        { "cuMemAlloc", "cuMemAlloc", 3000 },           { "cuMemAllocAsync", "cuMemAllocAsync", 12000 },
        { "cuMemFreeAsync", "cuMemFreeAsync", 12000 },  { "cuMemAllocManaged", "cuMemAllocManaged", 12000 },
        { "cuMemCreate", "cuMemCreate", 12000 },        { "cuMemRelease", "cuMemRelease", 12000 },
        { "cuMemAllocPitch", "cuMemAllocPitch_v2", 12000 }, { "cuMemGetInfo", "cuMemGetInfo_v2", 12000 },
        { "cuMemAllocFromPoolAsync", "cuMemAllocFromPoolAsync", 12000 },
        { "cuGraphAddMemAllocNode", "cuGraphAddMemAllocNode", 12000 },
        { "cuArrayCreate", "cuArrayCreate_v2", 12000 }, { "cuMemHostAlloc", "cuMemHostAlloc", 12000 },
        { "cuCtxCreate", "cuCtxCreate_v2", 12000 },     { "cuCtxDestroy", "cuCtxDestroy_v2", 12000 },
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        void *p = NULL;
        CUdriverProcAddressQueryResult q = 0;
        CUresult r = cuGetProcAddress(t[i].sym, &p, t[i].ver, CU_GET_PROC_ADDRESS_DEFAULT, &q);
        void *e = dlsym(lib, t[i].export);
        Dl_info di;
        const char *where = p && dladdr(p, &di) && di.dli_sname ? di.dli_sname : "(no symbol)";
        printf("probe procaddr: %s v%d -> %s %s; export %s %s; %s\n", t[i].sym, t[i].ver, ename(r), where,
               t[i].export, e ? "present" : "absent", p && p == e ? "same pointer" : "DIFFERENT pointer");
    }
    void *p = NULL;
    CUdriverProcAddressQueryResult q = 0;
    CUresult r = cuGetProcAddress("cuMemAlloc", &p, 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &q);
    printf("probe procaddr: cuMemAlloc ptds -> %s %s\n", ename(r), p == dlsym(lib, "cuMemAlloc_v2") ? "= cuMemAlloc_v2" : "other");
    r = cuGetProcAddress("cuMemAllocAsync", &p, 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &q);
    printf("probe procaddr: cuMemAllocAsync ptds -> %s %s\n", ename(r),
           p == dlsym(lib, "cuMemAllocAsync_ptsz") ? "= cuMemAllocAsync_ptsz" :
           p == dlsym(lib, "cuMemAllocAsync") ? "= cuMemAllocAsync" : "other");
    p = (void *)1;
    r = cuGetProcAddress("cuNoSuchThing", &p, 12000, 0, &q);
    printf("probe procaddr: unknown name -> %s, query %d, pointer %s\n", ename(r), (int)q, p == (void *)1 ? "left as it was" : p ? "set" : "NULL");
    p = (void *)1;
    r = cuGetProcAddress("cuMemAllocAsync", &p, 10000, 0, &q);
    printf("probe procaddr: cuMemAllocAsync at 10000 -> %s, query %d, pointer %s\n", ename(r), (int)q, p == (void *)1 ? "left as it was" : p ? "set" : "NULL");
    CUresult (*legacy)(const char *, void **, int, cuuint64_t) =
        (CUresult (*)(const char *, void **, int, cuuint64_t))dlsym(lib, "cuGetProcAddress");
    if (legacy) {
        p = (void *)1;
        r = legacy("cuNoSuchThing", &p, 12000, 0);
        printf("probe procaddr: legacy cuGetProcAddress, unknown name -> %s, pointer %s\n", ename(r), p == (void *)1 ? "left as it was" : p ? "set" : "NULL");
        p = (void *)1;
        r = legacy("cuMemAllocAsync", &p, 10000, 0);
        printf("probe procaddr: legacy cuGetProcAddress, cuMemAllocAsync at 10000 -> %s, pointer %s\n", ename(r),
               p == (void *)1 ? "left as it was" : p ? "set" : "NULL");
    }
}

static size_t freemem(void)
{
    size_t f = 0, t = 0;
    CK(cuMemGetInfo(&f, &t));
    return f;
}

int main(void)
{
    CK(cuInit(0));
    int ver = 0;
    cuDriverGetVersion(&ver);
    printf("probe driver version: %d\n", ver);
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    procaddr(lib);
    CUdevice d;
    CK(cuDeviceGet(&d, 0));

    // primary context state after the last release
    CUcontext pc;
    unsigned flags;
    int active;
    CK(cuDevicePrimaryCtxRetain(&pc, d));
    CK(cuDevicePrimaryCtxGetState(d, &flags, &active));
    printf("probe primary: retained, active %d\n", active);
    CK(cuCtxSetCurrent(pc));
    CUdeviceptr x;
    CK(cuMemAlloc(&x, 1 << 20));
    CK(cuDevicePrimaryCtxRelease(d));
    CK(cuDevicePrimaryCtxGetState(d, &flags, &active));
    printf("probe primary: after the last release, active %d; free of the old pointer: %s\n", active, ename(cuMemFree(x)));
    CUcontext cur = NULL;
    cuCtxGetCurrent(&cur);
    printf("probe primary: current context after release %s\n", cur == pc ? "still the old handle" : cur ? "another" : "none");
    CUdeviceptr y;
    printf("probe primary: cuMemAlloc with the released context current -> %s\n", ename(cuMemAlloc(&y, 4096)));
    cuCtxSetCurrent(NULL);
    printf("probe primary: cuMemAlloc with no context -> %s; cuMemFree(0) -> %s\n", ename(cuMemAlloc(&y, 4096)), ename(cuMemFree(0)));

    // pitch alignment
    CK(cuDevicePrimaryCtxRetain(&pc, d));
    CK(cuCtxSetCurrent(pc));
    static const size_t widths[] = { 1, 100, 256, 511, 512, 513, 1000, 4096, 100000 };
    for (unsigned es = 4; es <= 16; es *= 2)
        for (size_t i = 0; i < sizeof widths / sizeof widths[0]; i++) {
            CUdeviceptr p;
            size_t pitch = 0;
            CUresult r = cuMemAllocPitch(&p, &pitch, widths[i], 3, es);
            printf("probe pitch: width %zu elem %u -> %s pitch %zu\n", widths[i], es, ename(r), pitch);
            if (r == CUDA_SUCCESS)
                cuMemFree(p);
        }
    // allocation granularity as free memory sees it
    size_t f0 = freemem();
    CUdeviceptr a;
    CK(cuMemAlloc(&a, 1));
    size_t f1 = freemem();
    CK(cuMemAlloc(&x, 3 << 20));
    size_t f2 = freemem();
    printf("probe granularity: 1 byte takes %zu of free memory, 3 MiB takes %zu\n", f0 - f1, f1 - f2);
    cuMemFree(a);
    cuMemFree(x);

    // cuMemCreate handles and pinned host memory across cuCtxDestroy
    CUcontext c;
    CUctxCreateParams cp;
    memset(&cp, 0, sizeof cp);
    CK(cuCtxCreate(&c, &cp, 0, d));
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    size_t gran = 0;
    CK(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    CK(cuCtxSetCurrent(pc));
    size_t g0 = freemem();
    CK(cuCtxSetCurrent(c));
    CUmemGenericAllocationHandle h;
    CK(cuMemCreate(&h, 64 << 20, &prop, 0));
    void *host = NULL;
    CK(cuMemAllocHost(&host, 1 << 20));
    CUdeviceptr plain;
    CK(cuMemAlloc(&plain, 32 << 20));
    CK(cuCtxSetCurrent(pc));
    size_t g1 = freemem();
    CK(cuCtxDestroy(c));
    size_t g2 = freemem();
    printf("probe destroy: granularity %zu; a context with a 64 MiB cuMemCreate handle and 32 MiB cuMemAlloc took %zu; "
           "cuCtxDestroy gave back %zu\n", gran, g0 - g1, g2 - g1);
    CUresult rr = cuMemRelease(h);
    size_t g3 = freemem();
    printf("probe destroy: cuMemRelease after destroy -> %s, gave back %zu more; cuMemFreeHost after destroy -> %s; "
           "cuMemFree of its cuMemAlloc -> %s\n", ename(rr), g3 - g2, ename(cuMemFreeHost(host)), ename(cuMemFree(plain)));

    // reset of the primary context: does it take cuMemCreate handles?
    CK(cuMemCreate(&h, 64 << 20, &prop, 0));
    CK(cuMemAlloc(&plain, 32 << 20));
    size_t r0 = freemem();
    CK(cuDevicePrimaryCtxReset(d));
    CK(cuDevicePrimaryCtxRetain(&pc, d));
    CK(cuCtxSetCurrent(pc));
    size_t r1 = freemem();
    rr = cuMemRelease(h);
    size_t r2 = freemem();
    printf("probe reset: cuDevicePrimaryCtxReset gave back %zu of 96 MiB; cuMemRelease after -> %s, gave back %zu more\n",
           r1 - r0, ename(rr), r2 - r1);

    // pinned host memory: portable, registered, the primary context's reset
    CK(cuCtxCreate(&c, &cp, 0, d));
    void *port = NULL, *plainh = NULL;
    static char reg[1 << 16] __attribute__((aligned(4096)));
    CK(cuMemHostAlloc(&port, 1 << 20, CU_MEMHOSTALLOC_PORTABLE));
    CK(cuMemAllocHost(&plainh, 1 << 20));
    CK(cuMemHostRegister(reg, sizeof reg, 0));
    CK(cuCtxDestroy(c));
    CK(cuCtxSetCurrent(pc));
    printf("probe host: after cuCtxDestroy: cuMemFreeHost(portable) -> %s, cuMemFreeHost(plain) -> %s, "
           "cuMemHostUnregister -> %s\n", ename(cuMemFreeHost(port)), ename(cuMemFreeHost(plainh)), ename(cuMemHostUnregister(reg)));
    CK(cuMemAllocHost(&plainh, 1 << 20));
    CK(cuMemHostRegister(reg, sizeof reg, 0));
    CK(cuDevicePrimaryCtxReset(d));
    CK(cuDevicePrimaryCtxRetain(&pc, d));
    CK(cuCtxSetCurrent(pc));
    printf("probe host: after cuDevicePrimaryCtxReset: cuMemFreeHost -> %s, cuMemHostUnregister -> %s\n",
           ename(cuMemFreeHost(plainh)), ename(cuMemHostUnregister(reg)));
    CK(cuMemAllocHost(&plainh, 1 << 20));
    int releases = 0, act = 1;
    while (act && releases < 8 && cuDevicePrimaryCtxRelease(d) == CUDA_SUCCESS) {
        releases++;
        cuDevicePrimaryCtxGetState(d, &flags, &act);
    }
    printf("probe host: after the last cuDevicePrimaryCtxRelease (%d releases after a reset and 1 retain, active %d): "
           "cuMemFreeHost -> %s\n", releases, act, ename(cuMemFreeHost(plainh)));
    CK(cuDevicePrimaryCtxRetain(&pc, d));
    CK(cuCtxSetCurrent(pc));
    size_t tm = 0, ff = 0, tt = 0;
    cuDeviceTotalMem(&tm, d);
    cuMemGetInfo(&ff, &tt);
    printf("probe totals: cuDeviceTotalMem %zu, cuMemGetInfo total %zu\n", tm, tt);

    // NVML's free memory against cuMemGetInfo's
    void *nv = dlopen("libnvidia-ml.so.1", RTLD_NOW);
    if (nv) {
        typedef struct { unsigned long long total, free, used; } mem_t;
        int (*init)(void) = (int (*)(void))dlsym(nv, "nvmlInit_v2");
        int (*byidx)(unsigned, void **) = (int (*)(unsigned, void **))dlsym(nv, "nvmlDeviceGetHandleByIndex_v2");
        int (*meminfo)(void *, mem_t *) = (int (*)(void *, mem_t *))dlsym(nv, "nvmlDeviceGetMemoryInfo");
        int (*uuid)(void *, char *, unsigned) = (int (*)(void *, char *, unsigned))dlsym(nv, "nvmlDeviceGetUUID");
        int (*mig)(void *, unsigned *, unsigned *) = (int (*)(void *, unsigned *, unsigned *))dlsym(nv, "nvmlDeviceGetMigMode");
        void *dev = NULL;
        mem_t m = { 0, 0, 0 };
        char u[96] = "";
        unsigned cm = 9, pm = 9;
        if (init && byidx && meminfo && !init() && !byidx(0, &dev)) {
            size_t f = 0, t = 0;
            cuMemGetInfo(&f, &t);
            int rm = meminfo(dev, &m);
            if (uuid)
                uuid(dev, u, sizeof u);
            if (mig)
                mig(dev, &cm, &pm);
            CUuuid cu;
            cuDeviceGetUuid(&cu, d);
            printf("probe nvml: rc %d free %llu total %llu used %llu; cuMemGetInfo free %zu total %zu; "
                   "uuid %s; MIG mode %u; cuDeviceGetUuid first bytes %02x%02x%02x%02x\n", rm, m.free, m.total, m.used, f,
                   t, u, cm, (unsigned char)cu.bytes[0], (unsigned char)cu.bytes[1], (unsigned char)cu.bytes[2],
                   (unsigned char)cu.bytes[3]);
        }
    } else {
        printf("probe nvml: libnvidia-ml.so.1 not found\n");
    }
    // managed memory pools (CUDA 13): which lookups give one, and what an allocation from it is
    {
        CUcontext c2;
        CK(cuDevicePrimaryCtxRetain(&c2, d));
        CK(cuCtxSetCurrent(c2));
        static const struct { const char *name; CUmemLocationType type; int id; } locs[] = {
            { "device 0", CU_MEM_LOCATION_TYPE_DEVICE, 0 }, { "host", CU_MEM_LOCATION_TYPE_HOST, 0 },
            { "host NUMA 0", CU_MEM_LOCATION_TYPE_HOST_NUMA, 0 },
        };
        static const char *how[] = { "cuMemGetDefaultMemPool", "cuMemGetMemPool", "cuMemPoolCreate" };
        for (int i = 0; i < 3; i++) {
            for (int cur = 0; cur < 3; cur++) {
                CUmemLocation loc = { .type = locs[i].type, .id = locs[i].id };
                CUmemoryPool p = NULL;
                CUmemPoolProps props;
                memset(&props, 0, sizeof props);
                props.allocType = CU_MEM_ALLOCATION_TYPE_MANAGED;
                props.location = loc;
                CUresult r = cur == 2 ? cuMemPoolCreate(&p, &props)
                             : cur ? cuMemGetMemPool(&p, &loc, CU_MEM_ALLOCATION_TYPE_MANAGED)
                                   : cuMemGetDefaultMemPool(&p, &loc, CU_MEM_ALLOCATION_TYPE_MANAGED);
                printf("probe managed pool: %s at %s -> %s", how[cur], locs[i].name, ename(r));
                if (r == CUDA_SUCCESS && p) {
                    CUdeviceptr m = 0;
                    size_t f0 = 0, f1 = 0, t = 0;
                    cuMemGetInfo(&f0, &t);
                    CUresult a = cuMemAllocFromPoolAsync(&m, 64 << 20, p, NULL);
                    cuStreamSynchronize(NULL);
                    cuMemGetInfo(&f1, &t);
                    unsigned managed = 9, mtype = 9;
                    int dev = -9;
                    if (a == CUDA_SUCCESS) {
                        cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, m);
                        cuPointerGetAttribute(&mtype, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, m);
                        cuPointerGetAttribute(&dev, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, m);
                    }
                    printf("; 64 MiB from it -> %s, is_managed %u, memory type %u, "
                           "device %d, device free fell by %lld",
                           ename(a), managed, mtype, dev, (long long)f0 - (long long)f1);
                    if (a == CUDA_SUCCESS) {
                        printf("; cuMemFreeAsync -> %s", ename(cuMemFreeAsync(m, NULL)));
                        cuStreamSynchronize(NULL);
                    }
                    if (cur == 2)
                        cuMemPoolDestroy(p);
                }
                printf("\n");
            }
        }
        CK(cuDevicePrimaryCtxRelease(d));
    }
    printf("probe done\n");
    return 0;
}
