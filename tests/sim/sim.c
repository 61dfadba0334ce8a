/*
 * sim.c - the simulated CUDA driver: devices, contexts, the device-memory
 * allocator and every memory entry point the guard wraps.
 *
 * One mutex guards all state: this is a test double, correctness and
 * realism matter more than its own speed.
 */
#define _GNU_SOURCE
#include "sim.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uthash.h>

/* ---------------------------------------------------------------- state */

enum blk_kind { BK_LINEAR, BK_MANAGED, BK_ASYNC, BK_IPC };

struct seg {               /* a free range of device address space */
    uint64_t addr, size;
    struct seg *next;      /* address order */
};

struct blk {               /* a live linear allocation */
    uint64_t addr;         /* key */
    uint64_t size;         /* rounded */
    uint64_t counted;      /* bytes counted in stats */
    int dev, kind;
    CUcontext ctx;
    UT_hash_handle hh;
};

struct sctx {
    int dev;
    int primary;
    int active;
    int refcount;
    unsigned flags;
};

struct sarray {            /* CUarray and CUmipmappedArray handles */
    uint64_t bytes;
    int dev, mip, alive;
    CUcontext ctx;
    struct sarray *next;
};

struct shandle {           /* cuMemCreate physical allocation */
    uint64_t size;
    int dev, released, maps;
};

struct smap {              /* cuMemMap mapping or cuMemAddressReserve range */
    uint64_t addr, size;
    struct shandle *h;     /* NULL for a reservation */
    struct smap *next;
};

struct shost {
    void *p;
    uint64_t size;
    int registered;
    UT_hash_handle hh;
};

struct sdev {
    uint64_t total, used;  /* used: bytes taken from the allocator (rounded) */
    struct sim_stats st;
    struct seg *free;
    struct sctx primary;
    CUmemoryPool default_pool;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int initialized;
static int ndev = 1;
static int free_delay_us; /* GPUSIM_FREE_DELAY_US */
static int no_primary_state; /* GPUSIM_NO_PRIMARY_STATE */
static int reuse_ctx;         /* GPUSIM_REUSE_CTX: a destroyed context's handle is handed out again */
static uint64_t pitch_align;  /* GPUSIM_PITCH: the pitch alignment (default 512) */
static int round_large;       /* GPUSIM_ROUND_LARGE: 2 MiB rounding of large allocations */
static void *spare_ctx;       /* GPUSIM_REUSE_CTX: the last destroyed context */
static void inject_setup(void);
static int after_free_us; /* GPUSIM_AFTER_FREE_US */
static struct sdev devs[SIM_MAX_DEVICES];
static struct blk *blocks;
static struct sarray *arrays;
static struct smap *maps, *reserves;
static struct shost *hosts;
static uint64_t va_next = 0x500000000000ull;

static __thread CUcontext ctx_stack[16];
static __thread int ctx_depth;

#define LOCK() pthread_mutex_lock(&mu)
#define UNLOCK() pthread_mutex_unlock(&mu)

static uint64_t parse_size(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    uint64_t mul = 1;
    switch (*end) {
    case 'K': case 'k': mul = 1ull << 10; break;
    case 'M': case 'm': mul = 1ull << 20; break;
    case 'G': case 'g': mul = 1ull << 30; break;
    case 'T': case 't': mul = 1ull << 40; break;
    }
    return (uint64_t)(v * (double)mul);
}

static void write_stats(void)
{
    const char *path = getenv("GPUSIM_STATS");
    if (!path || !*path)
        return;
    FILE *f = fopen(path, "w");
    if (!f)
        return;
    for (int d = 0; d < ndev; d++) {
        struct sim_stats *s = &devs[d].st;
        fprintf(f, "dev%d.total %llu\ndev%d.live %llu\ndev%d.peak %llu\n"
                   "dev%d.live_allocs %llu\ndev%d.allocs %llu\ndev%d.frees %llu\n"
                   "dev%d.oom %llu\n",
                d, (unsigned long long)s->total, d, (unsigned long long)s->live,
                d, (unsigned long long)s->peak, d, (unsigned long long)s->live_allocs,
                d, (unsigned long long)s->allocs, d, (unsigned long long)s->frees,
                d, (unsigned long long)s->oom);
    }
    fclose(f);
}

static void sim_lock(void) { LOCK(); }
static void sim_unlock(void) { UNLOCK(); }

__attribute__((constructor)) static void sim_setup(void)
{
    const char *n = getenv("GPUSIM_DEVICES");
    if (n && atoi(n) > 0)
        ndev = atoi(n) > SIM_MAX_DEVICES ? SIM_MAX_DEVICES : atoi(n);
    const char *fd = getenv("GPUSIM_FREE_DELAY_US");
    free_delay_us = fd ? atoi(fd) : 0;
    no_primary_state = getenv("GPUSIM_NO_PRIMARY_STATE") != NULL;
    reuse_ctx = getenv("GPUSIM_REUSE_CTX") != NULL;
    round_large = getenv("GPUSIM_ROUND_LARGE") != NULL;
    const char *pa = getenv("GPUSIM_PITCH");
    pitch_align = pa && atoi(pa) > 0 ? (uint64_t)atoi(pa) : SIM_GRANULARITY;
    inject_setup();
    const char *af = getenv("GPUSIM_AFTER_FREE_US");
    after_free_us = af ? atoi(af) : 0;
    const char *m = getenv("GPUSIM_MEM");
    char buf[256];
    snprintf(buf, sizeof buf, "%s", m && *m ? m : "8G");
    char *save = NULL, *tok = strtok_r(buf, ",", &save);
    uint64_t last = 8ull << 30;
    for (int d = 0; d < SIM_MAX_DEVICES; d++) {
        if (tok) {
            last = parse_size(tok);
            tok = strtok_r(NULL, ",", &save);
        }
        struct sdev *dv = &devs[d];
        dv->total = dv->st.total = last;
        dv->free = calloc(1, sizeof *dv->free);
        dv->free->addr = 0x700000000000ull + ((uint64_t)d << 40) + 0x100000; /* low 32 bits non-zero: legacy ABI */
        dv->free->size = last;
        dv->primary.dev = d;
        dv->primary.primary = 1;
        dv->default_pool = (CUmemoryPool)(uintptr_t)(0x1000 + d);
    }
    atexit(write_stats);
    /* a child forked while another thread is inside the driver must not
     * inherit a held lock */
    pthread_atfork(sim_lock, sim_unlock, sim_unlock);
}

/* Exported for tests: statistics of one device. */
SIM_EXPORT int simGetStats(int dev, struct sim_stats *out)
{
    if (dev < 0 || dev >= ndev || !out)
        return -1;
    LOCK();
    *out = devs[dev].st;
    UNLOCK();
    return 0;
}

/* ------------------------------------------------------ accounting helpers */

static void stats_add(int dev, uint64_t bytes)
{
    struct sim_stats *s = &devs[dev].st;
    s->live += bytes;
    s->live_allocs++;
    s->allocs++;
    if (s->live > s->peak)
        s->peak = s->live;
}

static void stats_sub(int dev, uint64_t bytes)
{
    struct sim_stats *s = &devs[dev].st;
    s->live -= bytes;
    s->live_allocs--;
    s->frees++;
}

/* Rounded up to a multiple of a; UINT64_MAX when that overflows (which no
 * device can satisfy: the request fails as out of memory, as the driver's). */
static uint64_t round_up(uint64_t v, uint64_t a) { return v > UINT64_MAX - (a - 1) ? UINT64_MAX : (v + a - 1) / a * a; }

/* First fit over the address-ordered free list. Returns 0 when nothing fits. */
static uint64_t range_take(int dev, uint64_t size)
{
    struct sdev *d = &devs[dev];
    for (struct seg **pp = &d->free; *pp; pp = &(*pp)->next) {
        struct seg *s = *pp;
        if (s->size < size)
            continue;
        uint64_t a = s->addr;
        s->addr += size;
        s->size -= size;
        if (s->size == 0) {
            *pp = s->next;
            free(s);
        }
        d->used += size;
        return a;
    }
    return 0;
}

static void range_give(int dev, uint64_t addr, uint64_t size)
{
    struct sdev *d = &devs[dev];
    struct seg **pp = &d->free, *prev = NULL;
    while (*pp && (*pp)->addr < addr) {
        prev = *pp;
        pp = &(*pp)->next;
    }
    struct seg *next = *pp;
    d->used -= size;
    if (prev && prev->addr + prev->size == addr) {
        prev->size += size;
        if (next && prev->addr + prev->size == next->addr) {
            prev->size += next->size;
            prev->next = next->next;
            free(next);
        }
        return;
    }
    if (next && addr + size == next->addr) {
        next->addr = addr;
        next->size += size;
        return;
    }
    struct seg *s = malloc(sizeof *s);
    s->addr = addr;
    s->size = size;
    s->next = next;
    *pp = s;
}

/* Bytes without an address (arrays, VMM handles) still need free memory. */
static int bytes_take(int dev, uint64_t size)
{
    struct sdev *d = &devs[dev];
    if (d->total - d->used < size)
        return 0;
    d->used += size;
    return 1;
}

static CUcontext cur_ctx(void) { return ctx_depth ? ctx_stack[ctx_depth - 1] : NULL; }

static int ctx_ok(CUcontext c) { return c && __atomic_load_n(&((struct sctx *)c)->active, __ATOMIC_ACQUIRE); }

/* GPUSIM_FAIL="NAME:N[,NAME:N...]": the Nth call of NAME fails (allocations
 * with CUDA_ERROR_OUT_OF_MEMORY, frees with CUDA_ERROR_UNKNOWN, nothing
 * done), as a real driver fails now and then. */
#define MAX_INJECT 16
static struct { char name[48]; long nth; long calls; } inject_tab[MAX_INJECT];
static int ninject;

static void inject_setup(void)
{
    const char *v = getenv("GPUSIM_FAIL");
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", v ? v : "");
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok && ninject < MAX_INJECT; tok = strtok_r(NULL, ",", &save)) {
        char *colon = strchr(tok, ':');
        if (!colon)
            continue;
        *colon = 0;
        snprintf(inject_tab[ninject].name, sizeof inject_tab[ninject].name, "%s", tok);
        inject_tab[ninject].nth = atol(colon + 1);
        ninject++;
    }
}

static int inject(const char *name)
{
    for (int i = 0; i < ninject; i++)
        if (strcmp(inject_tab[i].name, name) == 0)
            return __atomic_add_fetch(&inject_tab[i].calls, 1, __ATOMIC_RELAXED) == inject_tab[i].nth;
    return 0;
}
#define INJECT_ALLOC(name) do { if (ninject && inject(name)) return CUDA_ERROR_OUT_OF_MEMORY; } while (0)
#define INJECT_FREE(name) do { if (ninject && inject(name)) return CUDA_ERROR_UNKNOWN; } while (0)

#define REQUIRE_INIT() do { if (!initialized) return CUDA_ERROR_NOT_INITIALIZED; } while (0)
#define REQUIRE_CTX(c) do { REQUIRE_INIT(); if (!ctx_ok(c)) return CUDA_ERROR_INVALID_CONTEXT; } while (0)

/* ------------------------------------------------------------ init, device */

SIM_EXPORT CUresult cuInit(unsigned int flags)
{
    (void)flags;
    initialized = 1;
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuDriverGetVersion(int *v)
{
    if (!v)
        return CUDA_ERROR_INVALID_VALUE;
    *v = SIM_DRIVER_VERSION;
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuDeviceGet(CUdevice *d, int ordinal)
{
    REQUIRE_INIT();
    if (!d || ordinal < 0 || ordinal >= ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    *d = ordinal;
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuDeviceGetCount(int *n)
{
    REQUIRE_INIT();
    if (!n)
        return CUDA_ERROR_INVALID_VALUE;
    *n = ndev;
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
    REQUIRE_INIT();
    if (!name || dev < 0 || dev >= ndev)
        return CUDA_ERROR_INVALID_VALUE;
    snprintf(name, (size_t)len, "gpusim device %d", dev);
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
    REQUIRE_INIT();
    if (!bytes)
        return CUDA_ERROR_INVALID_VALUE;
    if (dev < 0 || dev >= ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    *bytes = devs[dev].total;
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuDeviceTotalMem(unsigned int *bytes, CUdevice dev)
{
    size_t b;
    CUresult r = cuDeviceTotalMem_v2(&b, dev);
    if (r == CUDA_SUCCESS) {
        if (!bytes)
            return CUDA_ERROR_INVALID_VALUE;
        *bytes = b > 0xffffffffu ? 0xffffffffu : (unsigned)b;
    }
    return r;
}

SIM_EXPORT CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
    REQUIRE_INIT();
    if (!pi || dev < 0 || dev >= ndev)
        return CUDA_ERROR_INVALID_VALUE;
    switch (attrib) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *pi = 9; break;
    case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY:
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: *pi = 1; break;
    default: *pi = 0;
    }
    return CUDA_SUCCESS;
}

/* ---------------------------------------------------------------- contexts */

static void free_ctx_memory(CUcontext c)
{
    struct blk *b, *tmp;
    HASH_ITER(hh, blocks, b, tmp) {
        if (b->ctx != c)
            continue;
        HASH_DEL(blocks, b);
        range_give(b->dev, b->addr, b->size);
        stats_sub(b->dev, b->counted);
        free(b);
    }
    for (struct sarray *a = arrays; a; a = a->next) {
        if (a->alive && a->ctx == c) {
            a->alive = 0;
            devs[a->dev].used -= a->bytes;
            stats_sub(a->dev, a->bytes);
        }
    }
}

static void drop_from_stacks(CUcontext c)
{
    /* only the calling thread's stack is visible; that is what tests use */
    for (int i = 0; i < ctx_depth; i++)
        if (ctx_stack[i] == c)
            ctx_stack[i] = NULL;
}

SIM_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    REQUIRE_INIT();
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    if (dev < 0 || dev >= ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    LOCK();
    struct sctx *p = &devs[dev].primary;
    __atomic_store_n(&p->active, 1, __ATOMIC_RELEASE);
    p->refcount++;
    UNLOCK();
    *pctx = (CUcontext)p;
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
    REQUIRE_INIT();
    if (dev < 0 || dev >= ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    LOCK();
    struct sctx *p = &devs[dev].primary;
    if (p->refcount <= 0) {
        UNLOCK();
        return CUDA_ERROR_INVALID_CONTEXT;
    }
    if (--p->refcount == 0) {   /* the last release resets the context */
        free_ctx_memory((CUcontext)p);
        __atomic_store_n(&p->active, 0, __ATOMIC_RELEASE);
    }
    UNLOCK();
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuDevicePrimaryCtxRelease(CUdevice dev) { return cuDevicePrimaryCtxRelease_v2(dev); }

SIM_EXPORT CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
    REQUIRE_INIT();
    if (dev < 0 || dev >= ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    LOCK();
    struct sctx *p = &devs[dev].primary;
    free_ctx_memory((CUcontext)p);
    __atomic_store_n(&p->active, 0, __ATOMIC_RELEASE);
    p->refcount = 0;
    UNLOCK();
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuDevicePrimaryCtxReset(CUdevice dev) { return cuDevicePrimaryCtxReset_v2(dev); }

SIM_EXPORT CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)
{
    if (no_primary_state) /* GPUSIM_NO_PRIMARY_STATE: a driver that cannot say */
        return CUDA_ERROR_NOT_SUPPORTED;
    REQUIRE_INIT();
    if (dev < 0 || dev >= ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    if (!flags || !active)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    *flags = devs[dev].primary.flags;
    *active = __atomic_load_n(&devs[dev].primary.active, __ATOMIC_ACQUIRE);
    UNLOCK();
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags)
{
    REQUIRE_INIT();
    if (dev < 0 || dev >= ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    devs[dev].primary.flags = flags;
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuDevicePrimaryCtxSetFlags(CUdevice dev, unsigned int flags)
{
    return cuDevicePrimaryCtxSetFlags_v2(dev, flags);
}

static CUresult ctx_create(CUcontext *pctx, unsigned flags, CUdevice dev)
{
    REQUIRE_INIT();
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    if (dev < 0 || dev >= ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    struct sctx *c = reuse_ctx ? __atomic_exchange_n((struct sctx **)&spare_ctx, NULL, __ATOMIC_ACQ_REL) : NULL;
    if (c)
        memset(c, 0, sizeof *c); /* the same handle as a destroyed one, as a driver may give */
    else
        c = calloc(1, sizeof *c);
    c->dev = dev;
    __atomic_store_n(&c->active, 1, __ATOMIC_RELEASE);
    c->flags = flags;
    *pctx = (CUcontext)c;
    if (ctx_depth < 16)
        ctx_stack[ctx_depth++] = *pctx;
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    return ctx_create(pctx, flags, dev);
}

SIM_EXPORT CUresult cuCtxCreate(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    return ctx_create(pctx, flags, dev);
}

SIM_EXPORT CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *params, unsigned int flags, CUdevice dev)
{
    (void)params;
    return ctx_create(pctx, flags, dev);
}

SIM_EXPORT CUresult cuCtxDestroy_v2(CUcontext c)
{
    REQUIRE_INIT();
    if (!c || ((struct sctx *)c)->primary)
        return CUDA_ERROR_INVALID_CONTEXT;
    LOCK();
    free_ctx_memory(c);
    __atomic_store_n(&((struct sctx *)c)->active, 0, __ATOMIC_RELEASE); /* kept allocated: handles stay unique */
    if (reuse_ctx)
        __atomic_store_n((struct sctx **)&spare_ctx, (struct sctx *)c, __ATOMIC_RELEASE);
    UNLOCK();
    drop_from_stacks(c);
    while (ctx_depth && ctx_stack[ctx_depth - 1] == NULL)
        ctx_depth--;
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuCtxDestroy(CUcontext c) { return cuCtxDestroy_v2(c); }

SIM_EXPORT CUresult cuCtxSetCurrent(CUcontext c)
{
    REQUIRE_INIT();
    if (c == NULL) {
        if (ctx_depth)
            ctx_depth--;
        return CUDA_SUCCESS;
    }
    if (ctx_depth == 0)
        ctx_depth = 1;
    ctx_stack[ctx_depth - 1] = c;
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuCtxGetCurrent(CUcontext *pc)
{
    REQUIRE_INIT();
    if (!pc)
        return CUDA_ERROR_INVALID_VALUE;
    *pc = cur_ctx();
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuCtxPushCurrent_v2(CUcontext c)
{
    REQUIRE_INIT();
    if (!c || ctx_depth >= 16)
        return CUDA_ERROR_INVALID_VALUE;
    ctx_stack[ctx_depth++] = c;
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuCtxPushCurrent(CUcontext c) { return cuCtxPushCurrent_v2(c); }

SIM_EXPORT CUresult cuCtxPopCurrent_v2(CUcontext *pc)
{
    REQUIRE_INIT();
    if (!ctx_depth)
        return CUDA_ERROR_INVALID_CONTEXT;
    CUcontext c = ctx_stack[--ctx_depth];
    if (pc)
        *pc = c;
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuCtxPopCurrent(CUcontext *pc) { return cuCtxPopCurrent_v2(pc); }

SIM_EXPORT CUresult cuCtxGetDevice(CUdevice *d)
{
    CUcontext c = cur_ctx();
    REQUIRE_CTX(c);
    if (!d)
        return CUDA_ERROR_INVALID_VALUE;
    *d = ((struct sctx *)c)->dev;
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuCtxSynchronize(void)
{
    REQUIRE_CTX(cur_ctx());
    return CUDA_SUCCESS;
}

/* ---------------------------------------------------------- linear memory */

static CUresult linear_alloc(CUdeviceptr *dptr, uint64_t bytes, uint64_t counted, int kind)
{
    CUcontext c = cur_ctx();
    REQUIRE_CTX(c);
    if (!dptr)
        return CUDA_ERROR_INVALID_VALUE;
    if (bytes == 0)
        return CUDA_ERROR_INVALID_VALUE;
    int dev = ((struct sctx *)c)->dev;
    /* GPUSIM_ROUND_LARGE: 2 MiB pages for allocations of 1 MiB and more, as
     * a real driver rounds large requests; else the 512-byte granularity */
    uint64_t size = round_up(bytes, round_large && bytes >= (1ull << 20) ? (2ull << 20) : SIM_GRANULARITY);
    LOCK();
    uint64_t a = range_take(dev, size);
    if (!a) {
        devs[dev].st.oom++;
        UNLOCK();
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    struct blk *b = calloc(1, sizeof *b);
    b->addr = a;
    b->size = size;
    b->counted = counted;
    b->dev = dev;
    b->kind = kind;
    b->ctx = c;
    HASH_ADD(hh, blocks, addr, sizeof b->addr, b);
    stats_add(dev, counted);
    UNLOCK();
    *dptr = a;
    return CUDA_SUCCESS;
}

static CUresult linear_free(CUdeviceptr p)
{
    REQUIRE_INIT();
    if (p == 0)
        return CUDA_SUCCESS;
    uint64_t key = p;
    if (free_delay_us) /* a driver's free takes time: widens races in tests */
        usleep((useconds_t)(free_delay_us * (1 + (unsigned)rand() % 2)));
    LOCK();
    struct blk *b;
    HASH_FIND(hh, blocks, &key, sizeof key, b);
    if (!b) {
        UNLOCK();
        return CUDA_ERROR_INVALID_VALUE;
    }
    HASH_DEL(blocks, b);
    if (b->kind != BK_IPC) {
        range_give(b->dev, b->addr, b->size);
        stats_sub(b->dev, b->counted);
    }
    UNLOCK();
    free(b);
    if (after_free_us) /* the caller preempted between the driver's unlock and its return */
        usleep((useconds_t)after_free_us);
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytes)
{
    INJECT_ALLOC("cuMemAlloc_v2");
    return linear_alloc(dptr, bytes, bytes, BK_LINEAR);
}

SIM_EXPORT CUresult cuMemAlloc(CUdeviceptr_v1 *dptr, unsigned int bytes)
{
    CUdeviceptr p;
    if (!dptr)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = cuMemAlloc_v2(&p, bytes);
    if (r == CUDA_SUCCESS)
        *dptr = (CUdeviceptr_v1)p; /* the legacy ABI truncates, as it did */
    return r;
}

SIM_EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pitch, size_t width, size_t height, unsigned int elem)
{
    INJECT_ALLOC("cuMemAllocPitch_v2");
    if (!pitch || (elem != 4 && elem != 8 && elem != 16))
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t p = round_up(width ? width : 1, pitch_align), total;
    if (__builtin_mul_overflow(p, height, &total))
        total = UINT64_MAX;
    CUresult r = linear_alloc(dptr, total, total, BK_LINEAR);
    if (r == CUDA_SUCCESS)
        *pitch = p;
    return r;
}

SIM_EXPORT CUresult cuMemAllocPitch(CUdeviceptr_v1 *dptr, unsigned int *pitch, unsigned int width, unsigned int height, unsigned int elem)
{
    CUdeviceptr p;
    size_t pp;
    if (!dptr || !pitch)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = cuMemAllocPitch_v2(&p, &pp, width, height, elem);
    if (r == CUDA_SUCCESS) {
        *dptr = (CUdeviceptr_v1)p;
        *pitch = (unsigned)pp;
    }
    return r;
}

SIM_EXPORT CUresult cuMemFree_v2(CUdeviceptr p)
{
    INJECT_FREE("cuMemFree_v2");
    return linear_free(p);
}
/* The legacy ABI holds 32 bits of an address: find the block they name,
 * on the current context's device first (two devices' legacy pointers can
 * be equal). */
static CUdeviceptr widen(CUdeviceptr_v1 p)
{
    CUdeviceptr full = p;
    CUcontext c = cur_ctx();
    int cur = c ? ((struct sctx *)c)->dev : -1, exact = 0;
    LOCK();
    struct blk *b, *tmp;
    HASH_ITER(hh, blocks, b, tmp) {
        if ((b->addr & 0xffffffffull) == p && !exact) {
            full = b->addr;
            exact = b->dev == cur;
        }
    }
    UNLOCK();
    return full;
}

SIM_EXPORT CUresult cuMemFree(CUdeviceptr_v1 p) { return p ? linear_free(widen(p)) : CUDA_SUCCESS; }

SIM_EXPORT CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytes, unsigned int flags)
{
    INJECT_ALLOC("cuMemAllocManaged");
    (void)flags;
    return linear_alloc(dptr, bytes, bytes, BK_MANAGED);
}

SIM_EXPORT CUresult cuMemGetInfo_v2(size_t *freeb, size_t *total)
{
    CUcontext c = cur_ctx();
    REQUIRE_CTX(c);
    if (!freeb || !total)
        return CUDA_ERROR_INVALID_VALUE;
    struct sdev *d = &devs[((struct sctx *)c)->dev];
    LOCK();
    *freeb = d->total - d->used;
    *total = d->total;
    UNLOCK();
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuMemGetInfo(unsigned int *freeb, unsigned int *total)
{
    size_t f, t;
    if (!freeb || !total)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = cuMemGetInfo_v2(&f, &t);
    if (r == CUDA_SUCCESS) {
        *freeb = f > 0xffffffffu ? 0xffffffffu : (unsigned)f;
        *total = t > 0xffffffffu ? 0xffffffffu : (unsigned)t;
    }
    return r;
}

SIM_EXPORT CUresult cuMemGetAddressRange_v2(CUdeviceptr *base, size_t *size, CUdeviceptr p)
{
    REQUIRE_INIT();
    CUresult r = CUDA_ERROR_NOT_FOUND;
    LOCK();
    struct blk *b, *tmp;
    uint64_t key = p;
    HASH_FIND(hh, blocks, &key, sizeof key, b);
    if (!b) {
        HASH_ITER(hh, blocks, b, tmp) {
            if (p >= b->addr && p < b->addr + b->size)
                break;
        }
    }
    if (b) {
        if (base)
            *base = b->addr;
        if (size)
            *size = b->size;
        r = CUDA_SUCCESS;
    }
    UNLOCK();
    return r;
}

/* ------------------------------------------------------ stream-ordered */

SIM_EXPORT CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool, CUdevice dev)
{
    REQUIRE_INIT();
    if (!pool || dev < 0 || dev >= ndev)
        return CUDA_ERROR_INVALID_VALUE;
    *pool = devs[dev].default_pool;
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *props)
{
    REQUIRE_INIT();
    if (!pool || !props || props->location.id < 0 || props->location.id >= ndev)
        return CUDA_ERROR_INVALID_VALUE;
    int *p = malloc(sizeof *p);
    *p = props->location.id;
    *pool = (CUmemoryPool)p;
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuMemPoolDestroy(CUmemoryPool pool)
{
    REQUIRE_INIT();
    if ((uintptr_t)pool > 0x1000 + SIM_MAX_DEVICES)
        free(pool);
    return CUDA_SUCCESS;
}

static CUresult async_alloc(CUdeviceptr *dptr, size_t bytes, CUstream s)
{
    (void)s;
    return linear_alloc(dptr, bytes, bytes, BK_ASYNC);
}

SIM_EXPORT CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytes, CUstream s)
{
    INJECT_ALLOC("cuMemAllocAsync");
    return async_alloc(dptr, bytes, s);
}
SIM_EXPORT CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytes, CUstream s) { return async_alloc(dptr, bytes, s); }
SIM_EXPORT CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytes, CUmemoryPool pool, CUstream s)
{
    if (!pool)
        return CUDA_ERROR_INVALID_VALUE;
    return async_alloc(dptr, bytes, s);
}
SIM_EXPORT CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytes, CUmemoryPool pool, CUstream s)
{
    return cuMemAllocFromPoolAsync(dptr, bytes, pool, s);
}
SIM_EXPORT CUresult cuMemFreeAsync(CUdeviceptr p, CUstream s)
{
    (void)s;
    INJECT_FREE("cuMemFreeAsync");
    return linear_free(p);
}
SIM_EXPORT CUresult cuMemFreeAsync_ptsz(CUdeviceptr p, CUstream s) { (void)s; return linear_free(p); }

/* ---------------------------------------------------------- virtual memory */

SIM_EXPORT CUresult cuMemGetAllocationGranularity(size_t *g, const CUmemAllocationProp *prop, CUmemAllocationGranularity_flags opt)
{
    (void)opt;
    REQUIRE_INIT();
    if (!g || !prop)
        return CUDA_ERROR_INVALID_VALUE;
    *g = SIM_VMM_GRANULARITY;
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size, const CUmemAllocationProp *prop, unsigned long long flags)
{
    INJECT_ALLOC("cuMemCreate");
    (void)flags;
    REQUIRE_INIT();
    if (!handle || !prop || size == 0 || size % SIM_VMM_GRANULARITY)
        return CUDA_ERROR_INVALID_VALUE;
    int dev = prop->location.id;
    if (prop->location.type == CU_MEM_LOCATION_TYPE_HOST) { /* host memory (CUDA 12.2+): no device's */
        struct shandle *h = calloc(1, sizeof *h);
        h->size = size;
        h->dev = -1;
        *handle = (CUmemGenericAllocationHandle)(uintptr_t)h;
        return CUDA_SUCCESS;
    }
    if (prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE || dev < 0 || dev >= ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    LOCK();
    if (!bytes_take(dev, size)) {
        devs[dev].st.oom++;
        UNLOCK();
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    stats_add(dev, size);
    UNLOCK();
    struct shandle *h = calloc(1, sizeof *h);
    h->size = size;
    h->dev = dev;
    *handle = (CUmemGenericAllocationHandle)(uintptr_t)h;
    return CUDA_SUCCESS;
}

static void handle_put(struct shandle *h)
{
    if (h->released && h->maps == 0) {
        if (h->dev >= 0) {
            devs[h->dev].used -= h->size;
            stats_sub(h->dev, h->size);
        }
        free(h);
    }
}

SIM_EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
    INJECT_FREE("cuMemRelease");
    REQUIRE_INIT();
    struct shandle *h = (struct shandle *)(uintptr_t)handle;
    if (!h || h->released)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    h->released = 1;
    handle_put(h); /* physical memory goes once the last mapping is gone */
    UNLOCK();
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t align, CUdeviceptr addr, unsigned long long flags)
{
    (void)align; (void)addr; (void)flags;
    REQUIRE_INIT();
    if (!ptr || size == 0 || size % SIM_VMM_GRANULARITY)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    struct smap *m = calloc(1, sizeof *m);
    m->addr = va_next;
    m->size = size;
    va_next += round_up(size, SIM_VMM_GRANULARITY) + SIM_VMM_GRANULARITY;
    m->next = reserves;
    reserves = m;
    UNLOCK();
    *ptr = m->addr;
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
    REQUIRE_INIT();
    CUresult r = CUDA_ERROR_INVALID_VALUE;
    LOCK();
    for (struct smap **pp = &reserves; *pp; pp = &(*pp)->next) {
        if ((*pp)->addr == ptr && (*pp)->size == size) {
            struct smap *m = *pp;
            *pp = m->next;
            free(m);
            r = CUDA_SUCCESS;
            break;
        }
    }
    UNLOCK();
    return r;
}

SIM_EXPORT CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle, unsigned long long flags)
{
    (void)flags;
    REQUIRE_INIT();
    struct shandle *h = (struct shandle *)(uintptr_t)handle;
    if (!h || h->released || offset + size > h->size)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = CUDA_ERROR_INVALID_VALUE;
    LOCK();
    for (struct smap *res = reserves; res; res = res->next) {
        if (ptr >= res->addr && ptr + size <= res->addr + res->size) {
            struct smap *m = calloc(1, sizeof *m);
            m->addr = ptr;
            m->size = size;
            m->h = h;
            h->maps++;
            m->next = maps;
            maps = m;
            r = CUDA_SUCCESS;
            break;
        }
    }
    UNLOCK();
    return r;
}

SIM_EXPORT CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
    REQUIRE_INIT();
    int found = 0;
    LOCK();
    for (struct smap **pp = &maps; *pp;) {
        struct smap *m = *pp;
        if (m->addr >= ptr && m->addr + m->size <= ptr + size) {
            *pp = m->next;
            m->h->maps--;
            handle_put(m->h);
            free(m);
            found = 1;
        } else {
            pp = &m->next;
        }
    }
    UNLOCK();
    return found ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

SIM_EXPORT CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count)
{
    (void)ptr; (void)size; (void)desc; (void)count;
    REQUIRE_INIT();
    return CUDA_SUCCESS;
}

/* ----------------------------------------------------------------- arrays */

static uint64_t format_bytes(CUarray_format f)
{
    switch (f) {
    case CU_AD_FORMAT_UNSIGNED_INT8: case CU_AD_FORMAT_SIGNED_INT8: return 1;
    case CU_AD_FORMAT_UNSIGNED_INT16: case CU_AD_FORMAT_SIGNED_INT16: case CU_AD_FORMAT_HALF: return 2;
    case CU_AD_FORMAT_UNSIGNED_INT32: case CU_AD_FORMAT_SIGNED_INT32: case CU_AD_FORMAT_FLOAT: return 4;
    default: return 0;
    }
}

/* UINT64_MAX when the descriptor's size overflows: it fails as out of memory. */
static uint64_t level_bytes(uint64_t w, uint64_t h, uint64_t d, uint64_t elem)
{
    uint64_t v = elem;
    if (__builtin_mul_overflow(v, w ? w : 1, &v) || __builtin_mul_overflow(v, h ? h : 1, &v) ||
        __builtin_mul_overflow(v, d ? d : 1, &v))
        return UINT64_MAX;
    return v;
}

static CUresult array_make(void **out, uint64_t bytes, int mip)
{
    CUcontext c = cur_ctx();
    REQUIRE_CTX(c);
    if (!out || bytes == 0)
        return CUDA_ERROR_INVALID_VALUE;
    int dev = ((struct sctx *)c)->dev;
    LOCK();
    if (!bytes_take(dev, bytes)) {
        devs[dev].st.oom++;
        UNLOCK();
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    stats_add(dev, bytes);
    struct sarray *a = calloc(1, sizeof *a);
    a->bytes = bytes;
    a->dev = dev;
    a->mip = mip;
    a->alive = 1;
    a->ctx = c;
    a->next = arrays;
    arrays = a;
    UNLOCK();
    *out = a;
    return CUDA_SUCCESS;
}

static CUresult array_destroy(void *h, int mip)
{
    REQUIRE_INIT();
    struct sarray *a = h;
    CUresult r = CUDA_ERROR_INVALID_HANDLE;
    LOCK();
    for (struct sarray *x = arrays; x; x = x->next) {
        if (x == a && x->mip == mip) {
            if (x->alive) {
                x->alive = 0;
                devs[x->dev].used -= x->bytes;
                stats_sub(x->dev, x->bytes);
            }
            r = CUDA_SUCCESS;
            break;
        }
    }
    UNLOCK();
    return r;
}

SIM_EXPORT CUresult cuArrayCreate_v2(CUarray *h, const CUDA_ARRAY_DESCRIPTOR *d)
{
    INJECT_ALLOC("cuArrayCreate_v2");
    if (!d || !format_bytes(d->Format) || !d->NumChannels)
        return CUDA_ERROR_INVALID_VALUE;
    return array_make((void **)h, level_bytes(d->Width, d->Height, 1, format_bytes(d->Format) * d->NumChannels), 0);
}

SIM_EXPORT CUresult cuArrayCreate(CUarray *h, const CUDA_ARRAY_DESCRIPTOR_v1 *d)
{
    if (!d)
        return CUDA_ERROR_INVALID_VALUE;
    CUDA_ARRAY_DESCRIPTOR d2 = { d->Width, d->Height, d->Format, d->NumChannels };
    return cuArrayCreate_v2(h, &d2);
}

SIM_EXPORT CUresult cuArray3DCreate_v2(CUarray *h, const CUDA_ARRAY3D_DESCRIPTOR *d)
{
    if (!d || !format_bytes(d->Format) || !d->NumChannels)
        return CUDA_ERROR_INVALID_VALUE;
    return array_make((void **)h, level_bytes(d->Width, d->Height, d->Depth, format_bytes(d->Format) * d->NumChannels), 0);
}

SIM_EXPORT CUresult cuArray3DCreate(CUarray *h, const CUDA_ARRAY3D_DESCRIPTOR_v1 *d)
{
    if (!d)
        return CUDA_ERROR_INVALID_VALUE;
    CUDA_ARRAY3D_DESCRIPTOR d2 = { d->Width, d->Height, d->Depth, d->Format, d->NumChannels, d->Flags };
    return cuArray3DCreate_v2(h, &d2);
}

SIM_EXPORT CUresult cuArrayDestroy(CUarray h) { return array_destroy(h, 0); }

SIM_EXPORT CUresult cuMipmappedArrayCreate(CUmipmappedArray *h, const CUDA_ARRAY3D_DESCRIPTOR *d, unsigned int levels)
{
    if (!d || !format_bytes(d->Format) || !d->NumChannels || levels == 0)
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t elem = format_bytes(d->Format) * d->NumChannels, total = 0;
    for (unsigned l = 0; l < levels; l++)
        if (__builtin_add_overflow(total, level_bytes(d->Width >> l ? d->Width >> l : 1,
                                                      d->Height ? (d->Height >> l ? d->Height >> l : 1) : 0,
                                                      d->Depth ? (d->Depth >> l ? d->Depth >> l : 1) : 0, elem),
                                   &total))
            total = UINT64_MAX;
    return array_make((void **)h, total, 1);
}

SIM_EXPORT CUresult cuMipmappedArrayDestroy(CUmipmappedArray h) { return array_destroy(h, 1); }

/* ------------------------------------------------------------ host memory */

static CUresult host_alloc(void **pp, size_t bytes)
{
    REQUIRE_CTX(cur_ctx());
    if (!pp || bytes == 0)
        return CUDA_ERROR_INVALID_VALUE;
    void *p = NULL;
    if (posix_memalign(&p, 4096, bytes))
        return CUDA_ERROR_OUT_OF_MEMORY;
    struct shost *h = calloc(1, sizeof *h);
    h->p = p;
    h->size = bytes;
    LOCK();
    HASH_ADD_PTR(hosts, p, h);
    UNLOCK();
    *pp = p;
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuMemAllocHost_v2(void **pp, size_t bytes) { return host_alloc(pp, bytes); }
SIM_EXPORT CUresult cuMemAllocHost(void **pp, unsigned int bytes) { return host_alloc(pp, bytes); }
SIM_EXPORT CUresult cuMemHostAlloc(void **pp, size_t bytes, unsigned int flags) { (void)flags; return host_alloc(pp, bytes); }

SIM_EXPORT CUresult cuMemFreeHost(void *p)
{
    REQUIRE_INIT();
    struct shost *h;
    LOCK();
    HASH_FIND_PTR(hosts, &p, h);
    if (h && !h->registered)
        HASH_DEL(hosts, h);
    UNLOCK();
    if (!h || h->registered)
        return CUDA_ERROR_INVALID_VALUE;
    free(h->p);
    free(h);
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuMemHostRegister_v2(void *p, size_t bytes, unsigned int flags)
{
    (void)flags;
    REQUIRE_CTX(cur_ctx());
    if (!p || bytes == 0)
        return CUDA_ERROR_INVALID_VALUE;
    struct shost *h;
    LOCK();
    HASH_FIND_PTR(hosts, &p, h);
    if (h) {
        UNLOCK();
        return CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
    }
    h = calloc(1, sizeof *h);
    h->p = p;
    h->size = bytes;
    h->registered = 1;
    HASH_ADD_PTR(hosts, p, h);
    UNLOCK();
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuMemHostRegister(void *p, size_t bytes, unsigned int flags) { return cuMemHostRegister_v2(p, bytes, flags); }

SIM_EXPORT CUresult cuMemHostUnregister(void *p)
{
    REQUIRE_INIT();
    struct shost *h;
    LOCK();
    HASH_FIND_PTR(hosts, &p, h);
    if (h && h->registered)
        HASH_DEL(hosts, h);
    UNLOCK();
    if (!h || !h->registered)
        return CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
    free(h);
    return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------- IPC */

SIM_EXPORT CUresult cuIpcGetMemHandle(CUipcMemHandle *h, CUdeviceptr p)
{
    REQUIRE_INIT();
    if (!h)
        return CUDA_ERROR_INVALID_VALUE;
    memset(h, 0, sizeof *h);
    memcpy(h->reserved, &p, sizeof p);
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuIpcOpenMemHandle_v2(CUdeviceptr *p, CUipcMemHandle h, unsigned int flags)
{
    CUcontext c = cur_ctx();
    REQUIRE_CTX(c);
    /* the driver's rule: Flags must be CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS */
    if (!p || flags != CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS)
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t src;
    memcpy(&src, h.reserved, sizeof src);
    uint64_t key = src, size = SIM_GRANULARITY;
    LOCK();
    struct blk *b;
    HASH_FIND(hh, blocks, &key, sizeof key, b);
    if (b)
        size = b->size;
    struct blk *m = calloc(1, sizeof *m); /* a second mapping, no new memory */
    m->addr = va_next;
    m->size = size;
    m->kind = BK_IPC;
    m->ctx = NULL;
    m->dev = ((struct sctx *)c)->dev;
    va_next += round_up(size, SIM_VMM_GRANULARITY);
    HASH_ADD(hh, blocks, addr, sizeof m->addr, m);
    UNLOCK();
    *p = m->addr;
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuIpcOpenMemHandle(CUdeviceptr *p, CUipcMemHandle h, unsigned int flags)
{
    return cuIpcOpenMemHandle_v2(p, h, flags);
}

SIM_EXPORT CUresult cuIpcCloseMemHandle(CUdeviceptr p) { return linear_free(p); }

/* --------------------------------------------------- streams and the rest */

SIM_EXPORT CUresult cuStreamCreate(CUstream *s, unsigned int flags)
{
    (void)flags;
    REQUIRE_CTX(cur_ctx());
    if (!s)
        return CUDA_ERROR_INVALID_VALUE;
    *s = (CUstream)calloc(1, 64);
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuStreamDestroy_v2(CUstream s)
{
    REQUIRE_INIT();
    free(s);
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuStreamDestroy(CUstream s) { return cuStreamDestroy_v2(s); }

SIM_EXPORT CUresult cuStreamSynchronize(CUstream s)
{
    (void)s;
    REQUIRE_INIT();
    return CUDA_SUCCESS;
}

/* The names and texts of the errors the simulated driver returns, as the
 * real driver words them; anything else is CUDA_ERROR_INVALID_VALUE, as an
 * unknown code is for the real one. */
static const struct { CUresult e; const char *name, *text; } errors[] = {
    { CUDA_SUCCESS, "CUDA_SUCCESS", "no error" },
    { CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument" },
    { CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory" },
    { CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error" },
    { CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal" },
    { CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context" },
    { CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle" },
    { CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found" },
    { CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported" },
};

/* One entry of the table for both: its name (which 0) or text (which 1). */
static CUresult error_word(CUresult e, const char **s, int which)
{
    if (!s)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
        if (errors[i].e == e) {
            *s = which ? errors[i].text : errors[i].name;
            return CUDA_SUCCESS;
        }
    *s = NULL;
    return CUDA_ERROR_INVALID_VALUE;
}

SIM_EXPORT CUresult cuGetErrorString(CUresult e, const char **s) { return error_word(e, s, 1); }
SIM_EXPORT CUresult cuGetErrorName(CUresult e, const char **s) { return error_word(e, s, 0); }

/* The runtime's private handshake: the simulator has no export tables. */
SIM_EXPORT CUresult cuGetExportTable(const void **table, const CUuuid *id)
{
    (void)id;
    if (table)
        *table = NULL;
    return CUDA_ERROR_NOT_SUPPORTED;
}

SIM_EXPORT CUresult cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *params, int n, unsigned int flags, CUdevice dev)
{
    (void)params; (void)n;
    return ctx_create(pctx, flags, dev);
}
