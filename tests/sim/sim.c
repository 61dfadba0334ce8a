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
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>
#include <uthash.h>

/* Hash tables (their headers and buckets) on whole cache lines: two
 * threads' tables never share one (GPUSIM_THREAD_RANGES, below). */
static void *table_alloc(size_t n)
{
    void *p; /* posix_memalign: tests/oom/nomem.c fails the guard's aligned_alloc, not the driver's */
    return posix_memalign(&p, 64, (n + 63) & ~(size_t)63) == 0 ? p : NULL;
}
#undef uthash_malloc
#define uthash_malloc(sz) table_alloc(sz)

/* ---------------------------------------------------------------- state */

enum blk_kind { BK_LINEAR, BK_MANAGED, BK_ASYNC, BK_IPC, BK_GRAPH, BK_HOSTPOOL };

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
    struct spool *pool;    /* stream-ordered: the pool it came from */
    uint64_t ipc_src;      /* BK_IPC: the address of the block it maps */
    void *graph_own;       /* BK_GRAPH: the graph of its allocation node,
                              NULL once that graph is destroyed */
    void *graph_free;      /* BK_GRAPH: the graph with a free node for it */
    unsigned char *mem;    /* the bytes, allocated on first access */
    unsigned long long id; /* CU_POINTER_ATTRIBUTE_BUFFER_ID */
    UT_hash_handle hh;
};

struct sctx {
    int dev;
    int primary;
    int active;
    int refcount;
    unsigned flags;
    unsigned long long id;  /* cuCtxGetId */
    unsigned peers;         /* devices whose memory it may access (cuCtxEnablePeerAccess) */
    CUfunc_cache cache;     /* cuCtxSetCacheConfig */
};

/* Handles a client holds (streams, events, memory pools) are looked up in
 * one registry before use: a stale or foreign handle is an error
 * (CUDA_ERROR_INVALID_HANDLE, or the driver's INVALID_VALUE for pools),
 * never a dereference. */
enum obj_kind { OK_STREAM = 1, OK_EVENT, OK_POOL, OK_GRAPH };

struct sobj {
    void *self;            /* key: the handle's value */
    int kind;
    UT_hash_handle hh;
};

struct spool {             /* CUmemoryPool */
    struct sobj o;
    int dev, is_default, destroyed;
    int managed;           /* managed memory's (CUDA 13): its memory is cuMemAllocManaged's, on the context's device */
    uint64_t used, used_high, threshold;
    /* what the pool holds from the device: what is in use, and freed memory
     * it keeps up to its release threshold (the driver trims at the next
     * synchronisation; the simulator at the free itself), or until
     * cuMemPoolTrimTo */
    uint64_t reserved, reserved_high;
    int reuse[3];          /* FOLLOW_EVENT_DEPENDENCIES, ALLOW_OPPORTUNISTIC, ALLOW_INTERNAL_DEPENDENCIES */
    unsigned access;       /* devices given access (cuMemPoolSetAccess) */
};

struct sarray {            /* CUarray and CUmipmappedArray handles */
    uint64_t bytes;
    int dev, mip, alive;
    CUcontext ctx;
    struct sarray *next;
};

struct shandle {           /* cuMemCreate physical allocation */
    uint64_t size;
    int dev, maps;
    int refs;              /* the handle's references: 1 from cuMemCreate or an import, one
                              more each cuMemRetainAllocationHandle, one less each cuMemRelease;
                              the memory goes once refs and maps are both 0 */
    unsigned char *mem;    /* the bytes, allocated on first access */
    struct shandle *next;  /* the live handles (under the lock): a released one is refused */
};

struct smap {              /* cuMemMap mapping or cuMemAddressReserve range */
    uint64_t addr, size;
    uint64_t offset;       /* mapping: where in the handle it starts */
    struct shandle *h;     /* NULL for a reservation */
    struct smap *next;
};

struct shost {
    void *p;
    uint64_t size;
    CUcontext ctx;         /* pinned allocations go with their context */
    int registered;
    unsigned flags;        /* cuMemHostAlloc / cuMemHostRegister flags */
    UT_hash_handle hh;
};

struct sdev {
    uint64_t total, used;  /* used: bytes taken from the allocator (rounded) */
    struct sim_stats st;
    struct seg *free;
    struct sctx primary;
    struct spool default_pool;
    struct spool *cur_pool;  /* cuDeviceSetMemPool */
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int initialized;
static int ndev = 1;
static int free_delay_us; /* GPUSIM_FREE_DELAY_US */
static int oom_delay_us;  /* GPUSIM_OOM_DELAY_US: a linear allocation refused takes this long (a real
                             driver's may, as it tries to make room): holds a call under way */
/* GPUSIM_FREE_DELAYS=US,US,...: the first frees of the process each take
 * its own time, in the order they reach the driver (an exact race) */
static int free_delays[8], n_free_delays, free_delays_used;
static int end_capture_delay_us; /* GPUSIM_END_CAPTURE_DELAY_US */
static int no_primary_state; /* GPUSIM_NO_PRIMARY_STATE */
static int reuse_ctx;         /* GPUSIM_REUSE_CTX: a destroyed context's handle is handed out again */
static uint64_t pitch_align;  /* GPUSIM_PITCH: the pitch alignment (default 512) */
static int round_large;       /* GPUSIM_ROUND_LARGE: 2 MiB rounding of large allocations */
static struct spool host_pool;  /* the host's default pool (pinned host memory) */
static struct spool managed_pool; /* managed memory's default pool, whatever the location */
static int import_same;       /* GPUSIM_IMPORT_SAME: an import of this process's export is its handle */
static void *spare_ctx;       /* GPUSIM_REUSE_CTX: the last destroyed context */
static void inject_setup(void);
static int after_free_us; /* GPUSIM_AFTER_FREE_US */
static int thread_ranges;  /* GPUSIM_THREAD_RANGES: per-thread ranges for cuMemAlloc_v2 (below) */
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

static struct sobj *objs;
static unsigned long long next_id = 100; /* stream, buffer and context ids */

static unsigned long long new_id(void) { return __atomic_add_fetch(&next_id, 1, __ATOMIC_RELAXED); }

static void obj_add(struct sobj *o, int kind)
{
    o->self = o;
    o->kind = kind;
    LOCK();
    HASH_ADD_PTR(objs, self, o);
    UNLOCK();
}

/* The object a handle names, if it is a live one of that kind; the caller
 * holds the lock. */
static void *obj_find(const void *h, int kind)
{
    struct sobj *o = NULL;
    if (h)
        HASH_FIND_PTR(objs, &h, o);
    return o && o->kind == kind ? o : NULL;
}

/* Take a live object of that kind out of the registry, for its destroyer
 * to free (its struct sobj comes first); NULL if the handle names none. */
static void *obj_take(const void *h, int kind)
{
    LOCK();
    struct sobj *o = obj_find(h, kind);
    if (o)
        HASH_DEL(objs, o);
    UNLOCK();
    return o;
}

static void *obj_get(const void *h, int kind)
{
    LOCK();
    void *o = obj_find(h, kind);
    UNLOCK();
    return o;
}

static uint64_t host_mem_cap; /* GPUSIM_HOST_MEM: 0, none */
/* A size of GPUSIM_MEM or GPUSIM_HOST_MEM (`name`): a number, then K, M,
 * G or T (1024-based) or nothing. Anything else ends the program with a
 * message: a mistyped capacity must not become a tiny device that makes
 * every allocation fail. */
static uint64_t parse_size(const char *name, const char *s)
{
    char *end;
    double v = strtod(s, &end);
    int number = end != s;
    uint64_t mul = 1;
    switch (*end) {
    case 'K': case 'k': mul = 1ull << 10; end++; break;
    case 'M': case 'm': mul = 1ull << 20; end++; break;
    case 'G': case 'g': mul = 1ull << 30; end++; break;
    case 'T': case 't': mul = 1ull << 40; end++; break;
    }
    if (!number || *end || !(v >= 0) || v * (double)mul >= 18446744073709551616.0) {
        fprintf(stderr, "gpusim: %s: '%s' is not a size (a number, then K, M, G or T)\n", name, s);
        exit(2);
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
    const char *od = getenv("GPUSIM_OOM_DELAY_US");
    oom_delay_us = od ? atoi(od) : 0;
    const char *fds = getenv("GPUSIM_FREE_DELAYS");
    for (const char *q = fds; q && *q && n_free_delays < 8; q = strchr(q, ',') ? strchr(q, ',') + 1 : "")
        free_delays[n_free_delays++] = atoi(q);
    const char *ed = getenv("GPUSIM_END_CAPTURE_DELAY_US");
    end_capture_delay_us = ed ? atoi(ed) : 0;
    no_primary_state = getenv("GPUSIM_NO_PRIMARY_STATE") != NULL;
    reuse_ctx = getenv("GPUSIM_REUSE_CTX") != NULL;
    round_large = getenv("GPUSIM_ROUND_LARGE") != NULL;
    import_same = getenv("GPUSIM_IMPORT_SAME") != NULL;
    const char *pa = getenv("GPUSIM_PITCH");
    pitch_align = pa && atoi(pa) > 0 ? (uint64_t)atoi(pa) : SIM_GRANULARITY;
    inject_setup();
    const char *tr = getenv("GPUSIM_THREAD_RANGES");
    thread_ranges = tr && *tr == '1';
    const char *af = getenv("GPUSIM_AFTER_FREE_US");
    after_free_us = af ? atoi(af) : 0;
    const char *hm = getenv("GPUSIM_HOST_MEM"); /* pinned host memory: more than this is out of memory */
    host_mem_cap = hm && *hm ? parse_size("GPUSIM_HOST_MEM", hm) : 0;
    const char *m = getenv("GPUSIM_MEM");
    char buf[256];
    snprintf(buf, sizeof buf, "%s", m && *m ? m : "8G");
    char *tok = buf; /* one size per device, separated by commas; an empty one is no size */
    uint64_t last = 8ull << 30;
    for (int d = 0; d < SIM_MAX_DEVICES; d++) {
        if (tok) {
            char *comma = strchr(tok, ',');
            if (comma)
                *comma = 0;
            last = parse_size("GPUSIM_MEM", tok);
            tok = comma ? comma + 1 : NULL;
        }
        struct sdev *dv = &devs[d];
        dv->total = dv->st.total = last;
        dv->free = calloc(1, sizeof *dv->free);
        dv->free->addr = 0x700000000000ull + ((uint64_t)d << 40) + 0x100000; /* low 32 bits non-zero: legacy ABI */
        dv->free->size = last;
        dv->primary.dev = d;
        dv->primary.primary = 1;
        dv->primary.id = (unsigned long long)d + 1;
        dv->default_pool.dev = d;
        dv->default_pool.is_default = 1;
        dv->default_pool.reuse[0] = dv->default_pool.reuse[1] = dv->default_pool.reuse[2] = 1;
        dv->default_pool.access = 1u << d;
        dv->cur_pool = &dv->default_pool;
        if (d < ndev)
            obj_add(&dv->default_pool.o, OK_POOL);
    }
    host_pool.dev = -1; /* pinned host memory (cuMemGetDefaultMemPool) */
    host_pool.is_default = 1;
    host_pool.reuse[0] = host_pool.reuse[1] = host_pool.reuse[2] = 1;
    obj_add(&host_pool.o, OK_POOL);
    managed_pool.dev = -1;
    managed_pool.managed = 1;
    managed_pool.is_default = 1;
    managed_pool.reuse[0] = managed_pool.reuse[1] = managed_pool.reuse[2] = 1;
    obj_add(&managed_pool.o, OK_POOL);
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

/* First fit over the address-ordered free list. Returns 0 when nothing fits,
 * or when the device's free memory (less what arrays and VMM handles hold,
 * which have no range: bytes_take) is less than size. */
static uint64_t range_take(int dev, uint64_t size)
{
    struct sdev *d = &devs[dev];
    if (d->total - d->used < size)
        return 0;
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

/* GPUSIM_SHUTDOWN_AT_EXIT=1: the driver shuts down at exit (an atexit
 * handler of cuInit's) and answers CUDA_ERROR_DEINITIALIZED afterwards, as a
 * real one appears to before a preloaded library's own exit handlers run
 * (docs/gpu-validation.md). Off by default. */
static int shut_down;
static void sim_shutdown(void) { __atomic_store_n(&shut_down, 1, __ATOMIC_RELEASE); }
/* cuInit on one thread while another (the guard's reporter) asks for the
 * device count: the real driver is thread-safe, so is this flag */
static int is_initialized(void) { return __atomic_load_n(&initialized, __ATOMIC_ACQUIRE); }
#define REQUIRE_INIT() do { if (!is_initialized()) return CUDA_ERROR_NOT_INITIALIZED; \
    if (__atomic_load_n(&shut_down, __ATOMIC_ACQUIRE)) return CUDA_ERROR_DEINITIALIZED; } while (0)
/* No context: CUDA_ERROR_INVALID_CONTEXT. A context torn down while still
 * current (the primary one after its last release, which a real driver
 * leaves current): CUDA_ERROR_CONTEXT_IS_DESTROYED, as an H100's driver
 * answers (docs/gpu-validation.md). */
#define REQUIRE_CTX(c) do { REQUIRE_INIT(); CUcontext c_ = (c); if (!ctx_ok(c_)) \
    return c_ ? CUDA_ERROR_CONTEXT_IS_DESTROYED : CUDA_ERROR_INVALID_CONTEXT; } while (0)
/* For calls that need no context but fail, as a real driver's do, while a
 * torn-down one is current. */
#define REFUSE_TORN_DOWN_CURRENT() do { CUcontext t_ = cur_ctx(); if (t_ && !ctx_ok(t_)) \
    return CUDA_ERROR_CONTEXT_IS_DESTROYED; } while (0)

/* ------------------------------------------------------------ init, device */

SIM_EXPORT CUresult cuInit(unsigned int flags)
{
    (void)flags;
    static int at_exit;
    if (!__atomic_exchange_n(&at_exit, 1, __ATOMIC_ACQ_REL) && getenv("GPUSIM_SHUTDOWN_AT_EXIT"))
        atexit(sim_shutdown);
    __atomic_store_n(&initialized, 1, __ATOMIC_RELEASE);
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
    if (!name || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (dev < 0 || dev >= ndev)
        return CUDA_ERROR_INVALID_DEVICE;
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

/* What a real device answers: an H100 SXM5 (compute capability 9.0), with
 * the memory of GPUSIM_MEM. Attributes not listed are 0. */
static const int attr_value[CU_DEVICE_ATTRIBUTE_MAX] = {
    [CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK] = 1024,
    [CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X] = 1024,
    [CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y] = 1024,
    [CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z] = 64,
    [CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X] = 2147483647,
    [CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y] = 65535,
    [CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z] = 65535,
    [CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK] = 49152,
    [CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY] = 65536,
    [CU_DEVICE_ATTRIBUTE_WARP_SIZE] = 32,
    [CU_DEVICE_ATTRIBUTE_MAX_PITCH] = 2147483647,
    [CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK] = 65536,
    [CU_DEVICE_ATTRIBUTE_CLOCK_RATE] = 1980000,
    [CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT] = 512,
    [CU_DEVICE_ATTRIBUTE_GPU_OVERLAP] = 1,
    [CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT] = 132,
    [CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY] = 1,
    [CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH] = 131072,
    [CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH] = 131072,
    [CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT] = 65536,
    [CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH] = 16384,
    [CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT] = 16384,
    [CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH] = 16384,
    [CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_WIDTH] = 32768,
    [CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_HEIGHT] = 32768,
    [CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_LAYERS] = 2048,
    [CU_DEVICE_ATTRIBUTE_SURFACE_ALIGNMENT] = 512,
    [CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS] = 1,
    [CU_DEVICE_ATTRIBUTE_ECC_ENABLED] = 1,
    [CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE] = 2619000,
    [CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH] = 5120,
    [CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE] = 52428800,
    [CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR] = 2048,
    [CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT] = 3,
    [CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING] = 1,
    [CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_WIDTH] = 32768,
    [CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_LAYERS] = 2048,
    [CU_DEVICE_ATTRIBUTE_CAN_TEX2D_GATHER] = 1,
    [CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_WIDTH] = 32768,
    [CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_HEIGHT] = 32768,
    [CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH_ALTERNATE] = 8192,
    [CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT_ALTERNATE] = 8192,
    [CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH_ALTERNATE] = 32768,
    [CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT] = 32,
    [CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_WIDTH] = 32768,
    [CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_WIDTH] = 32768,
    [CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_LAYERS] = 2046,
    [CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_WIDTH] = 32768,
    [CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_WIDTH] = 131072,
    [CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_HEIGHT] = 65536,
    [CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_WIDTH] = 16384,
    [CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_HEIGHT] = 16384,
    [CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_DEPTH] = 16384,
    [CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_WIDTH] = 32768,
    [CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_LAYERS] = 2048,
    [CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_WIDTH] = 32768,
    [CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_HEIGHT] = 32768,
    [CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_LAYERS] = 2048,
    [CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_WIDTH] = 32768,
    [CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_WIDTH] = 32768,
    [CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_LAYERS] = 2046,
    [CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LINEAR_WIDTH] = 268435456,
    [CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_WIDTH] = 131072,
    [CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_HEIGHT] = 65000,
    [CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_PITCH] = 2097120,
    [CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_WIDTH] = 32768,
    [CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_HEIGHT] = 32768,
    [CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR] = 9,
    [CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR] = 0,
    [CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_MIPMAPPED_WIDTH] = 32768,
    [CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED] = 1,
    [CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED] = 1,
    [CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED] = 1,
    [CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR] = 233472,
    [CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR] = 65536,
    [CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY] = 1,
    [CU_DEVICE_ATTRIBUTE_SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO] = 2,
    [CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS] = 1,
    [CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED] = 1,
    [CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM] = 1,
    [CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH] = 1,
    [CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN] = 232448,
    [CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED] = 1,
    [CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED] = 1,
    [CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED] = 1,
    [CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR] = 32,
    [CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED] = 1,
    [CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE] = 32505856,
    [CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE] = 134213632,
    [CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED] = 1,
    [CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK] = 1024,
    [CU_DEVICE_ATTRIBUTE_SPARSE_CUDA_ARRAY_SUPPORTED] = 1,
    [CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED] = 1,
    [CU_DEVICE_ATTRIBUTE_TIMELINE_SEMAPHORE_INTEROP_SUPPORTED] = 1,
    [CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED] = 1,
    [CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED] = 1,
    [CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS] = 1,
    [CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING] = 100,
    [CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES] = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
    [CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH] = 1,
    [CU_DEVICE_ATTRIBUTE_DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED] = 1,
    [CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS] = 1,
    [CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR] = 1,
    [CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED] = 1,
    [CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED] = 1,
    [CU_DEVICE_ATTRIBUTE_MEM_SYNC_DOMAIN_COUNT] = 4,
    [CU_DEVICE_ATTRIBUTE_TENSOR_MAP_ACCESS_SUPPORTED] = 1,
    [CU_DEVICE_ATTRIBUTE_UNIFIED_FUNCTION_POINTERS] = 1,
    [CU_DEVICE_ATTRIBUTE_NUMA_ID] = -1,
    [CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID] = -1,
    [CU_DEVICE_ATTRIBUTE_GPU_PCI_DEVICE_ID] = 0x233010de,
    [CU_DEVICE_ATTRIBUTE_GPU_PCI_SUBSYSTEM_ID] = 0x16c110de,
};

#define DEV_OK(dev) ((dev) >= 0 && (dev) < ndev)

/* Device d sits on PCI bus 0x18 + d (domain 0, device 0, function 0). */
static int pci_bus(int d) { return 0x18 + d; }

SIM_EXPORT CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
    REQUIRE_INIT();
    if (!pi)
        return CUDA_ERROR_INVALID_VALUE;
    if (!DEV_OK(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    if ((int)attrib <= 0 || attrib >= CU_DEVICE_ATTRIBUTE_MAX)
        return CUDA_ERROR_INVALID_VALUE;
    switch (attrib) {
    case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: *pi = pci_bus(dev); break;
    case CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD_GROUP_ID: *pi = dev; break;
    default: *pi = attr_value[attrib];
    }
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuDeviceComputeCapability(int *major, int *minor, CUdevice dev)
{
    REQUIRE_INIT();
    if (!major || !minor)
        return CUDA_ERROR_INVALID_VALUE;
    if (!DEV_OK(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    *major = attr_value[CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR];
    *minor = attr_value[CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR];
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuDeviceGetProperties(CUdevprop *p, CUdevice dev)
{
    REQUIRE_INIT();
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    if (!DEV_OK(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    memset(p, 0, sizeof *p);
    p->maxThreadsPerBlock = attr_value[CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK];
    for (int i = 0; i < 3; i++) {
        p->maxThreadsDim[i] = attr_value[CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X + i];
        p->maxGridSize[i] = attr_value[CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X + i];
    }
    p->sharedMemPerBlock = attr_value[CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK];
    p->totalConstantMemory = attr_value[CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY];
    p->SIMDWidth = attr_value[CU_DEVICE_ATTRIBUTE_WARP_SIZE];
    p->memPitch = attr_value[CU_DEVICE_ATTRIBUTE_MAX_PITCH];
    p->regsPerBlock = attr_value[CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK];
    p->clockRate = attr_value[CU_DEVICE_ATTRIBUTE_CLOCK_RATE];
    p->textureAlign = attr_value[CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT];
    return CUDA_SUCCESS;
}

/* A stable identity per device, the same in every process. */
static CUresult device_uuid(CUuuid *uuid, CUdevice dev)
{
    if (!uuid)
        return CUDA_ERROR_INVALID_VALUE;
    if (!DEV_OK(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    static const unsigned char base[16] = { 0x67, 0x70, 0x75, 0x73, 0x69, 0x6d, 0x4a, 0x11,
                                            0x8e, 0x2c, 0x53, 0x49, 0x4d, 0x00, 0x00, 0x00 };
    memcpy(uuid->bytes, base, sizeof base);
    uuid->bytes[15] = (char)dev;
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
    REQUIRE_INIT();
    return device_uuid(uuid, dev);
}

SIM_EXPORT CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev) { return cuDeviceGetUuid_v2(uuid, dev); }

/* For the NVML double (tests/sim/nvml.c), under names no interposer wraps:
 * NVML still answers after the driver shut down at exit. */
SIM_EXPORT int simDeviceCount(void) { return is_initialized() ? ndev : 0; }
SIM_EXPORT CUresult simDeviceUuid(CUuuid *uuid, CUdevice dev)
{
    return is_initialized() ? device_uuid(uuid, dev) : CUDA_ERROR_NOT_INITIALIZED;
}

SIM_EXPORT CUresult cuDeviceGetPCIBusId(char *id, int len, CUdevice dev)
{
    REQUIRE_INIT();
    if (!id || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (!DEV_OK(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    snprintf(id, (size_t)len, "0000:%02X:00.0", pci_bus(dev));
    return CUDA_SUCCESS;
}

/* "[domain]:[bus]:[device].[function]" or "[bus]:[device].[function]", hex. */
SIM_EXPORT CUresult cuDeviceGetByPCIBusId(CUdevice *dev, const char *id)
{
    REQUIRE_INIT();
    if (!dev || !id)
        return CUDA_ERROR_INVALID_VALUE;
    unsigned dom = 0, bus, d, fn;
    if (sscanf(id, "%x:%x:%x.%x", &dom, &bus, &d, &fn) != 4) {
        dom = 0;
        if (sscanf(id, "%x:%x.%x", &bus, &d, &fn) != 3)
            return CUDA_ERROR_INVALID_VALUE;
    }
    for (int i = 0; i < ndev; i++)
        if (dom == 0 && bus == (unsigned)pci_bus(i) && d == 0 && fn == 0) {
            *dev = i;
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_INVALID_DEVICE;
}

SIM_EXPORT CUresult cuDeviceCanAccessPeer(int *can, CUdevice dev, CUdevice peer)
{
    REQUIRE_INIT();
    if (!can)
        return CUDA_ERROR_INVALID_VALUE;
    if (!DEV_OK(dev) || !DEV_OK(peer))
        return CUDA_ERROR_INVALID_DEVICE;
    *can = dev != peer;
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuDeviceGetP2PAttribute(int *value, CUdevice_P2PAttribute attrib, CUdevice src, CUdevice dst)
{
    REQUIRE_INIT();
    if (!value)
        return CUDA_ERROR_INVALID_VALUE;
    if (!DEV_OK(src) || !DEV_OK(dst) || src == dst)
        return CUDA_ERROR_INVALID_DEVICE;
    switch (attrib) {
    case CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK: *value = 0; break;
    case CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED:
    case CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED:
    case CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED: *value = 1; break;
    case CU_DEVICE_P2P_ATTRIBUTE_ONLY_PARTIAL_NATIVE_ATOMIC_SUPPORTED: *value = 0; break;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

/* ---------------------------------------------------------------- contexts */

/* A pool's reservation as its memory is handed out and given back. */
static void pool_grew(struct spool *p)
{
    if (p->used > p->reserved)
        p->reserved = p->used;
    if (p->reserved > p->reserved_high)
        p->reserved_high = p->reserved;
}

static void pool_shrank(struct spool *p, uint64_t size)
{
    p->used -= size;
    uint64_t keep = p->used > p->threshold ? p->used : p->threshold;
    if (p->reserved > keep)
        p->reserved = keep;
}

static void free_ctx_memory(CUcontext c)
{
    struct blk *b, *tmp;
    HASH_ITER(hh, blocks, b, tmp) {
        if (b->ctx != c)
            continue;
        HASH_DEL(blocks, b);
        if (b->kind != BK_GRAPH) /* a graph's addresses are not the allocator's */
            range_give(b->dev, b->addr, b->size);
        stats_sub(b->dev, b->counted);
        if (b->pool)
            pool_shrank(b->pool, b->size);
        free(b->mem);
        free(b);
    }
    /* pinned host memory and registrations go with the context that made
     * them: a real driver's cuMemFreeHost or cuMemHostUnregister of them
     * afterwards fails (docs/gpu-validation.md) */
    struct shost *h, *htmp;
    HASH_ITER(hh, hosts, h, htmp) {
        if (h->ctx != c)
            continue;
        HASH_DEL(hosts, h);
        if (!h->registered) /* a registration unregisters; the memory is the program's */
            free(h->p);
        free(h);
    }
    for (struct sarray *a = arrays; a; a = a->next) {
        if (a->alive && a->ctx == c) {
            a->alive = 0;
            devs[a->dev].used -= a->bytes;
            if (a->bytes)
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
    /* the retain count stays: an H100's driver needed as many releases
     * after a reset as retains were held (docs/gpu-validation.md) */
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
    c->id = new_id();
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

/* The context named, or the current one for NULL. */
static CUcontext ctx_or_current(CUcontext c) { return c ? c : cur_ctx(); }

SIM_EXPORT CUresult cuCtxGetDevice_v2(CUdevice *d, CUcontext ctx)
{
    CUcontext c = ctx_or_current(ctx);
    REQUIRE_CTX(c);
    if (!d)
        return CUDA_ERROR_INVALID_VALUE;
    *d = ((struct sctx *)c)->dev;
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuCtxSynchronize_v2(CUcontext ctx)
{
    REQUIRE_CTX(ctx_or_current(ctx));
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuCtxGetFlags(unsigned int *flags)
{
    CUcontext c = cur_ctx();
    REQUIRE_CTX(c);
    if (!flags)
        return CUDA_ERROR_INVALID_VALUE;
    *flags = ((struct sctx *)c)->flags;
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuCtxSetFlags(unsigned int flags)
{
    CUcontext c = cur_ctx();
    REQUIRE_CTX(c);
    if (flags & ~(unsigned)CU_CTX_FLAGS_MASK)
        return CUDA_ERROR_INVALID_VALUE;
    ((struct sctx *)c)->flags = flags;
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuCtxGetApiVersion(CUcontext ctx, unsigned int *version)
{
    REQUIRE_CTX(ctx_or_current(ctx));
    if (!version)
        return CUDA_ERROR_INVALID_VALUE;
    *version = 3020;
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuCtxGetId(CUcontext ctx, unsigned long long *id)
{
    CUcontext c = ctx_or_current(ctx);
    REQUIRE_CTX(c);
    if (!id)
        return CUDA_ERROR_INVALID_VALUE;
    *id = ((struct sctx *)c)->id;
    return CUDA_SUCCESS;
}

/* Per process, not per context: enough for a test double. */
static size_t limits[CU_LIMIT_MAX] = {
    [CU_LIMIT_STACK_SIZE] = 1024,
    [CU_LIMIT_PRINTF_FIFO_SIZE] = 1048576,
    [CU_LIMIT_MALLOC_HEAP_SIZE] = 8388608,
    [CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH] = 2,
    [CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT] = 2048,
    [CU_LIMIT_MAX_L2_FETCH_GRANULARITY] = 64,
    [CU_LIMIT_SHMEM_SIZE] = 232448,
};

SIM_EXPORT CUresult cuCtxGetLimit(size_t *value, CUlimit limit)
{
    REQUIRE_CTX(cur_ctx());
    if (!value)
        return CUDA_ERROR_INVALID_VALUE;
    if ((unsigned)limit >= CU_LIMIT_MAX)
        return CUDA_ERROR_UNSUPPORTED_LIMIT;
    LOCK();
    *value = limits[limit];
    UNLOCK();
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuCtxSetLimit(CUlimit limit, size_t value)
{
    REQUIRE_CTX(cur_ctx());
    if ((unsigned)limit >= CU_LIMIT_MAX)
        return CUDA_ERROR_UNSUPPORTED_LIMIT;
    if (limit == CU_LIMIT_MAX_L2_FETCH_GRANULARITY && value > 128)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    limits[limit] = value;
    UNLOCK();
    return CUDA_SUCCESS;
}

/* Lower numbers are higher priorities: 0 is the least, -5 the greatest. */
SIM_EXPORT CUresult cuCtxGetStreamPriorityRange(int *least, int *greatest)
{
    REQUIRE_CTX(cur_ctx());
    if (least)
        *least = 0;
    if (greatest)
        *greatest = -5;
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuCtxGetCacheConfig(CUfunc_cache *cfg)
{
    CUcontext c = cur_ctx();
    REQUIRE_CTX(c);
    if (!cfg)
        return CUDA_ERROR_INVALID_VALUE;
    *cfg = ((struct sctx *)c)->cache;
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuCtxSetCacheConfig(CUfunc_cache cfg)
{
    CUcontext c = cur_ctx();
    REQUIRE_CTX(c);
    if ((unsigned)cfg > CU_FUNC_CACHE_PREFER_EQUAL)
        return CUDA_ERROR_INVALID_VALUE;
    ((struct sctx *)c)->cache = cfg;
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuCtxEnablePeerAccess(CUcontext peer, unsigned int flags)
{
    CUcontext c = cur_ctx();
    REQUIRE_CTX(c);
    if (flags)
        return CUDA_ERROR_INVALID_VALUE;
    if (!ctx_ok(peer))
        return CUDA_ERROR_INVALID_CONTEXT;
    struct sctx *me = (struct sctx *)c, *p = (struct sctx *)peer;
    if (me->dev == p->dev)
        return CUDA_ERROR_INVALID_DEVICE;
    if (me->peers & (1u << p->dev))
        return CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
    me->peers |= 1u << p->dev;
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuCtxDisablePeerAccess(CUcontext peer)
{
    CUcontext c = cur_ctx();
    REQUIRE_CTX(c);
    if (!ctx_ok(peer))
        return CUDA_ERROR_INVALID_CONTEXT;
    struct sctx *me = (struct sctx *)c, *p = (struct sctx *)peer;
    if (!(me->peers & (1u << p->dev)))
        return CUDA_ERROR_PEER_ACCESS_NOT_ENABLED;
    me->peers &= ~(1u << p->dev);
    return CUDA_SUCCESS;
}

/* ---------------------------------------------------------- linear memory */

/* A host pool's allocation: pinned host memory, on no device (no device's
 * counts, untouched by any context's teardown), at an address of its own. */
static CUresult host_pool_alloc(CUdeviceptr *dptr, uint64_t bytes, struct spool *pool)
{
    struct blk *b = calloc(1, sizeof *b);
    if (!b)
        return CUDA_ERROR_OUT_OF_MEMORY;
    LOCK();
    b->addr = va_next;
    b->size = round_up(bytes, SIM_GRANULARITY);
    b->kind = BK_HOSTPOOL;
    b->dev = -1;
    b->id = new_id();
    b->pool = pool;
    pool->used += b->size;
    pool_grew(pool);
    va_next += round_up(b->size, SIM_VMM_GRANULARITY);
    HASH_ADD(hh, blocks, addr, sizeof b->addr, b);
    UNLOCK();
    *dptr = b->addr;
    return CUDA_SUCCESS;
}

static CUresult linear_alloc_in(CUdeviceptr *dptr, uint64_t bytes, uint64_t counted, int kind, struct spool *pool)
{
    CUcontext c = cur_ctx();
    REQUIRE_CTX(c);
    if (!dptr)
        return CUDA_ERROR_INVALID_VALUE;
    if (bytes == 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (pool && pool->managed) /* as cuMemAllocManaged's, on the context's device */
        kind = BK_MANAGED;
    else if (pool && pool->dev < 0)
        return host_pool_alloc(dptr, bytes, pool);
    int dev = pool && !pool->managed ? pool->dev : ((struct sctx *)c)->dev; /* a pool's memory is on its device */
    /* GPUSIM_ROUND_LARGE: 2 MiB pages for allocations of 1 MiB and more, as
     * a real driver rounds large requests; else the 512-byte granularity */
    uint64_t size = round_up(bytes, round_large && bytes >= (1ull << 20) ? (2ull << 20) : SIM_GRANULARITY);
    LOCK();
    uint64_t a = range_take(dev, size);
    if (!a) {
        devs[dev].st.oom++;
        UNLOCK();
        if (oom_delay_us)
            usleep((useconds_t)oom_delay_us);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    struct blk *b = calloc(1, sizeof *b);
    b->addr = a;
    b->size = size;
    b->counted = counted;
    b->dev = dev;
    b->kind = kind;
    b->ctx = c;
    b->id = new_id();
    if (pool) {
        b->pool = pool;
        pool->used += size;
        if (pool->used > pool->used_high)
            pool->used_high = pool->used;
        pool_grew(pool);
    }
    HASH_ADD(hh, blocks, addr, sizeof b->addr, b);
    stats_add(dev, counted);
    UNLOCK();
    *dptr = a;
    return CUDA_SUCCESS;
}

static CUresult linear_alloc(CUdeviceptr *dptr, uint64_t bytes, uint64_t counted, int kind)
{
    return linear_alloc_in(dptr, bytes, counted, kind, NULL);
}

static CUresult linear_free(CUdeviceptr p)
{
    REQUIRE_INIT();
    if (p == 0)
        return CUDA_SUCCESS;
    REFUSE_TORN_DOWN_CURRENT();
    uint64_t key = p;
    int nth = n_free_delays ? __atomic_fetch_add(&free_delays_used, 1, __ATOMIC_RELAXED) : 0;
    if (nth < n_free_delays)
        usleep((useconds_t)free_delays[nth]);
    else if (free_delay_us) /* a driver's free takes time: widens races in tests */
        usleep((useconds_t)(free_delay_us * (1 + (unsigned)rand() % 2)));
    LOCK();
    struct blk *b;
    HASH_FIND(hh, blocks, &key, sizeof key, b);
    if (!b) {
        UNLOCK();
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (b->kind == BK_GRAPH && b->graph_free && b->graph_free == b->graph_own) { /* freed in its graph: only there */
        UNLOCK();
        return CUDA_ERROR_INVALID_VALUE;
    }
    HASH_DEL(blocks, b);
    if (b->kind != BK_IPC && b->kind != BK_GRAPH && b->kind != BK_HOSTPOOL) {
        range_give(b->dev, b->addr, b->size);
        stats_sub(b->dev, b->counted);
    }
    if (b->pool)
        pool_shrank(b->pool, b->size);
    UNLOCK();
    free(b->mem);
    free(b);
    if (after_free_us) /* the caller preempted between the driver's unlock and its return */
        usleep((useconds_t)after_free_us);
    return CUDA_SUCCESS;
}

/*
 * GPUSIM_THREAD_RANGES=1, for the benchmark's pair rows (tests/bench):
 * cuMemAlloc_v2 and cuMemFree_v2 serve each thread from an address range of
 * its own, under that range's lock, and touch nothing that another thread's
 * calls write. By default every call serialises on `mu`, a thread that finds
 * it held sleeps, and a row of several threads then measures those sleeps,
 * not what a library between the program and the driver adds
 * (docs/benchmarks.md). A real driver's cuMemAlloc takes tens of µs, and its
 * stream-ordered pools serve each stream apart. Nothing else sees these
 * allocations (pointer attributes, teardown, statistics, GPUSIM_MEM): a free
 * from any thread finds its range by address, a free of an unknown pointer
 * is CUDA_ERROR_INVALID_VALUE, and a range holds 64 GiB.
 */
#define TR_MAX 64
#define TR_BASE 0x600000000000ull
#define TR_SHIFT 36
struct tblk {
    uint64_t addr, size;
    struct tblk *next_free;
    UT_hash_handle hh;
};
struct trange {
    pthread_mutex_t mu;
    uint64_t next, end;
    struct tblk *live, *spare; /* spare: freed, reused for a request of its size first */
} __attribute__((aligned(64)));
static struct trange tranges[TR_MAX];
static int tr_used;
static __thread struct trange *my_range;

static struct trange *range_mine(void)
{
    if (__builtin_expect(my_range != NULL, 1))
        return my_range;
    int i = __atomic_fetch_add(&tr_used, 1, __ATOMIC_ACQ_REL);
    if (i >= TR_MAX)
        return NULL; /* more threads than ranges: the others share `mu` */
    struct trange *r = &tranges[i];
    pthread_mutex_init(&r->mu, NULL);
    r->next = TR_BASE + ((uint64_t)i << TR_SHIFT);
    r->end = r->next + (1ull << TR_SHIFT);
    /* one entry never freed (no address matches 1): uthash frees a table
     * with its last entry and makes it again with the next, a malloc and a
     * free a pair, and two threads' tables side by side share a line */
    static struct tblk sentinel[TR_MAX];
    sentinel[i].addr = 1;
    HASH_ADD(hh, r->live, addr, sizeof sentinel[i].addr, &sentinel[i]);
    return my_range = r;
}

static int ranges_on(void) { return thread_ranges; }

static CUresult range_alloc(struct trange *r, CUdeviceptr *dptr, uint64_t bytes)
{
    REQUIRE_CTX(cur_ctx());
    if (!dptr || bytes == 0)
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t size = round_up(bytes, SIM_GRANULARITY);
    pthread_mutex_lock(&r->mu);
    struct tblk **pp = &r->spare, *b;
    while ((b = *pp) && b->size != size)
        pp = &b->next_free;
    if (b) {
        *pp = b->next_free;
    } else if (size <= r->end - r->next && (b = calloc(1, sizeof *b)) != NULL) {
        b->addr = r->next;
        b->size = size;
        r->next += size;
    } else {
        pthread_mutex_unlock(&r->mu);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    HASH_ADD(hh, r->live, addr, sizeof b->addr, b);
    pthread_mutex_unlock(&r->mu);
    *dptr = b->addr;
    return CUDA_SUCCESS;
}

/* CUDA_ERROR_NOT_FOUND: not in any thread's range (the usual free then). */
static CUresult range_free(CUdeviceptr p)
{
    uint64_t i = (p - TR_BASE) >> TR_SHIFT;
    if (p < TR_BASE || i >= (uint64_t)__atomic_load_n(&tr_used, __ATOMIC_ACQUIRE) || i >= TR_MAX)
        return CUDA_ERROR_NOT_FOUND;
    struct trange *r = &tranges[i];
    uint64_t key = p;
    struct tblk *b;
    pthread_mutex_lock(&r->mu);
    HASH_FIND(hh, r->live, &key, sizeof key, b);
    if (b) {
        HASH_DEL(r->live, b);
        b->next_free = r->spare;
        r->spare = b;
    }
    pthread_mutex_unlock(&r->mu);
    return b ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

SIM_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytes)
{
    INJECT_ALLOC("cuMemAlloc_v2");
    struct trange *r;
    if (ranges_on() && (r = range_mine()) != NULL)
        return range_alloc(r, dptr, bytes);
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
    if (ranges_on()) {
        REQUIRE_INIT();
        CUresult r = range_free(p);
        if (r != CUDA_ERROR_NOT_FOUND)
            return r;
    }
    return linear_free(p);
}

/* For the benchmark (tests/bench/bench.c): the same two calls under names
 * the guard does not intercept (-Bsymbolic binds them to the ones above),
 * so that one process times the driver alone and through the guard in
 * alternate rounds, in the same moments. */
SIM_EXPORT CUresult simBenchMemAlloc(CUdeviceptr *dptr, size_t bytes) { return cuMemAlloc_v2(dptr, bytes); }
SIM_EXPORT CUresult simBenchMemFree(CUdeviceptr p) { return cuMemFree_v2(p); }
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

/* A device's free and total memory without a context, as NVML tells them
 * (tests/sim/nvml.c, the NVML double, asks this). */
SIM_EXPORT CUresult simDeviceMemInfo(CUdevice dev, size_t *freeb, size_t *total)
{
    if (!is_initialized()) /* not REQUIRE_INIT: NVML answers after the driver's shutdown */
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!DEV_OK(dev) || !freeb || !total)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    *freeb = devs[dev].total - devs[dev].used;
    *total = devs[dev].total;
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

static CUresult stream_check(CUstream s);

SIM_EXPORT CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool, CUdevice dev)
{
    REQUIRE_INIT();
    if (!pool)
        return CUDA_ERROR_INVALID_VALUE;
    if (dev < 0 || dev >= ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    *pool = (CUmemoryPool)&devs[dev].default_pool;
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev)
{
    REQUIRE_INIT();
    if (!pool)
        return CUDA_ERROR_INVALID_VALUE;
    if (dev < 0 || dev >= ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    LOCK();
    *pool = (CUmemoryPool)devs[dev].cur_pool;
    UNLOCK();
    return CUDA_SUCCESS;
}

/* CUDA 13's pools by location: a device's, or pinned host memory's (one
 * default pool for the host, a host NUMA node's the same here), or managed
 * memory's (at a device, the host or a host NUMA node, as an H200's driver
 * 580 gives them; one pool here, its allocations managed memory on the
 * context's device, as that driver's were). current: cuMemGetMemPool's (the
 * device's current pool; the host's and managed memory's are their
 * defaults, cuMemSetMemPool not simulated). */

static CUresult pool_at(CUmemoryPool *out, const CUmemLocation *loc, CUmemAllocationType type, int current)
{
    REQUIRE_INIT();
    if (!out || !loc)
        return CUDA_ERROR_INVALID_VALUE;
    if (type != CU_MEM_ALLOCATION_TYPE_PINNED && type != CU_MEM_ALLOCATION_TYPE_MANAGED)
        return CUDA_ERROR_INVALID_VALUE;
    int host = loc->type == CU_MEM_LOCATION_TYPE_HOST || loc->type == CU_MEM_LOCATION_TYPE_HOST_NUMA;
    if (!host && loc->type != CU_MEM_LOCATION_TYPE_DEVICE)
        return CUDA_ERROR_INVALID_VALUE;
    if (!host && (loc->id < 0 || loc->id >= ndev))
        return CUDA_ERROR_INVALID_DEVICE;
    if (type == CU_MEM_ALLOCATION_TYPE_MANAGED || host) {
        *out = (CUmemoryPool)(type == CU_MEM_ALLOCATION_TYPE_MANAGED ? &managed_pool : &host_pool);
        return CUDA_SUCCESS;
    }
    LOCK();
    *out = (CUmemoryPool)(current ? devs[loc->id].cur_pool : &devs[loc->id].default_pool);
    UNLOCK();
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuMemGetDefaultMemPool(CUmemoryPool *pool, CUmemLocation *loc, CUmemAllocationType type)
{
    return pool_at(pool, loc, type, 0);
}

SIM_EXPORT CUresult cuMemGetMemPool(CUmemoryPool *pool, CUmemLocation *loc, CUmemAllocationType type)
{
    return pool_at(pool, loc, type, 1);
}

SIM_EXPORT CUresult cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool)
{
    REQUIRE_INIT();
    if (dev < 0 || dev >= ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    LOCK();
    struct spool *p = obj_find(pool, OK_POOL);
    CUresult r = !p ? CUDA_ERROR_INVALID_VALUE : p->dev != dev ? CUDA_ERROR_INVALID_DEVICE : CUDA_SUCCESS;
    if (r == CUDA_SUCCESS)
        devs[dev].cur_pool = p;
    UNLOCK();
    return r;
}

SIM_EXPORT CUresult cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *props)
{
    REQUIRE_INIT();
    /* a device's pool, or pinned host memory (CUDA 12.2+: a host or NUMA
     * location), or managed memory's at either (CUDA 13) */
    int host = props && (props->location.type == CU_MEM_LOCATION_TYPE_HOST ||
                         props->location.type == CU_MEM_LOCATION_TYPE_HOST_NUMA);
    if (!pool || !props || (!host && (props->location.id < 0 || props->location.id >= ndev)))
        return CUDA_ERROR_INVALID_VALUE;
    int managed = props->allocType == CU_MEM_ALLOCATION_TYPE_MANAGED;
    if ((props->allocType != CU_MEM_ALLOCATION_TYPE_PINNED && !managed) ||
        (!host && props->location.type != CU_MEM_LOCATION_TYPE_DEVICE))
        return CUDA_ERROR_INVALID_VALUE;
    struct spool *p = calloc(1, sizeof *p);
    if (!p)
        return CUDA_ERROR_OUT_OF_MEMORY;
    p->managed = managed;
    p->dev = host || managed ? -1 : props->location.id;
    p->reuse[0] = p->reuse[1] = p->reuse[2] = 1;
    p->access = host || managed ? 0 : 1u << p->dev;
    obj_add(&p->o, OK_POOL);
    *pool = (CUmemoryPool)p;
    return CUDA_SUCCESS;
}

/* A destroyed pool's handle stops being valid at once; its record stays (the
 * allocations still out name it), as the driver releases a pool only once
 * they are freed. Destroying a device's current pool makes the default
 * current again; the default pool itself is not destroyed. */
SIM_EXPORT CUresult cuMemPoolDestroy(CUmemoryPool pool)
{
    REQUIRE_INIT();
    LOCK();
    struct spool *p = obj_find(pool, OK_POOL);
    if (!p) {
        UNLOCK();
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (!p->is_default) {
        HASH_DEL(objs, &p->o);
        p->destroyed = 1;
        if (p->dev >= 0 && devs[p->dev].cur_pool == p)
            devs[p->dev].cur_pool = &devs[p->dev].default_pool;
    }
    UNLOCK();
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value)
{
    REQUIRE_INIT();
    if (!value)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = CUDA_SUCCESS;
    LOCK();
    struct spool *p = obj_find(pool, OK_POOL);
    if (!p)
        r = CUDA_ERROR_INVALID_VALUE;
    else switch (attr) {
    case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
        *(int *)value = p->reuse[attr - CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES];
        break;
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: *(cuuint64_t *)value = p->threshold; break;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT: *(cuuint64_t *)value = p->reserved; break;
    case CU_MEMPOOL_ATTR_USED_MEM_CURRENT: *(cuuint64_t *)value = p->used; break;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH: *(cuuint64_t *)value = p->reserved_high; break;
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH: *(cuuint64_t *)value = p->used_high; break;
    default: r = CUDA_ERROR_INVALID_VALUE;
    }
    UNLOCK();
    return r;
}

SIM_EXPORT CUresult cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value)
{
    REQUIRE_INIT();
    if (!value)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = CUDA_SUCCESS;
    LOCK();
    struct spool *p = obj_find(pool, OK_POOL);
    if (!p)
        r = CUDA_ERROR_INVALID_VALUE;
    else switch (attr) {
    case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
        p->reuse[attr - CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES] = *(int *)value != 0;
        break;
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: p->threshold = *(cuuint64_t *)value; break;
    /* the high-water marks can only be reset, to 0 */
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
        if (*(cuuint64_t *)value != 0)
            r = CUDA_ERROR_INVALID_VALUE;
        else if (attr == CU_MEMPOOL_ATTR_USED_MEM_HIGH)
            p->used_high = p->used;
        else
            p->reserved_high = p->reserved;
        break;
    default: r = CUDA_ERROR_INVALID_VALUE;
    }
    UNLOCK();
    return r;
}

SIM_EXPORT CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t keep)
{
    REQUIRE_INIT();
    LOCK();
    struct spool *p = obj_find(pool, OK_POOL);
    if (p) { /* down to `keep`, never below what is in use */
        uint64_t floor = p->used > keep ? p->used : keep;
        if (p->reserved > floor)
            p->reserved = floor;
    }
    UNLOCK();
    return p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

SIM_EXPORT CUresult cuMemPoolSetAccess(CUmemoryPool pool, const CUmemAccessDesc *map, size_t count)
{
    REQUIRE_INIT();
    if (!map && count)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = CUDA_SUCCESS;
    LOCK();
    struct spool *p = obj_find(pool, OK_POOL);
    for (size_t i = 0; p && r == CUDA_SUCCESS && i < count; i++) {
        int d = map[i].location.id;
        if (map[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE || d < 0 || d >= ndev)
            r = CUDA_ERROR_INVALID_DEVICE;
        else if (d == p->dev && map[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
            r = CUDA_ERROR_INVALID_VALUE; /* the owner keeps read-write access */
        else if (map[i].flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
            p->access |= 1u << d;
        else if (map[i].flags == CU_MEM_ACCESS_FLAGS_PROT_NONE)
            p->access &= ~(1u << d);
        else
            r = CUDA_ERROR_INVALID_VALUE;
    }
    if (!p)
        r = CUDA_ERROR_INVALID_VALUE;
    UNLOCK();
    return r;
}

SIM_EXPORT CUresult cuMemPoolGetAccess(CUmemAccess_flags *flags, CUmemoryPool pool, CUmemLocation *loc)
{
    REQUIRE_INIT();
    if (!flags || !loc)
        return CUDA_ERROR_INVALID_VALUE;
    if (loc->type != CU_MEM_LOCATION_TYPE_DEVICE || loc->id < 0 || loc->id >= ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    LOCK();
    struct spool *p = obj_find(pool, OK_POOL);
    if (p)
        *flags = (p->access >> loc->id) & 1 ? CU_MEM_ACCESS_FLAGS_PROT_READWRITE : CU_MEM_ACCESS_FLAGS_PROT_NONE;
    UNLOCK();
    return p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* From the device's current pool (cuMemAllocAsync) or the one given. */
static CUgraph capturing(CUstream s);
static CUresult capture_alloc(CUdeviceptr *dptr, size_t bytes, CUgraph g, int dev);
static CUresult capture_free(CUdeviceptr p, CUgraph g);

static CUresult async_alloc(CUdeviceptr *dptr, size_t bytes, CUstream s, CUmemoryPool pool)
{
    CUcontext c = cur_ctx();
    REQUIRE_CTX(c);
    CUresult r = stream_check(s);
    if (r != CUDA_SUCCESS)
        return r;
    struct spool *p;
    LOCK();
    p = pool ? obj_find(pool, OK_POOL) : devs[((struct sctx *)c)->dev].cur_pool;
    UNLOCK();
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    CUgraph g = capturing(s);
    if (g) /* captured: an allocation node of the graph, no memory until a launch */
        return capture_alloc(dptr, bytes, g, p->dev >= 0 ? p->dev : ((struct sctx *)c)->dev);
    return linear_alloc_in(dptr, bytes, bytes, BK_ASYNC, p);
}

SIM_EXPORT CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytes, CUstream s)
{
    INJECT_ALLOC("cuMemAllocAsync");
    return async_alloc(dptr, bytes, s, NULL);
}
/* the _ptsz calls' NULL stream is the calling thread's own default stream */
static CUstream ptsz_stream(CUstream s) { return s ? s : CU_STREAM_PER_THREAD; }
SIM_EXPORT CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytes, CUstream s)
{
    return async_alloc(dptr, bytes, ptsz_stream(s), NULL);
}
SIM_EXPORT CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytes, CUmemoryPool pool, CUstream s)
{
    if (!pool)
        return CUDA_ERROR_INVALID_VALUE;
    return async_alloc(dptr, bytes, s, pool);
}
SIM_EXPORT CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytes, CUmemoryPool pool, CUstream s)
{
    return cuMemAllocFromPoolAsync(dptr, bytes, pool, ptsz_stream(s));
}
static CUresult async_free(CUdeviceptr p, CUstream s)
{
    REQUIRE_INIT();
    CUresult r = stream_check(s);
    if (r != CUDA_SUCCESS)
        return r;
    CUgraph g = capturing(s);
    return g ? capture_free(p, g) : linear_free(p);
}
SIM_EXPORT CUresult cuMemFreeAsync(CUdeviceptr p, CUstream s)
{
    INJECT_FREE("cuMemFreeAsync");
    return async_free(p, s);
}
SIM_EXPORT CUresult cuMemFreeAsync_ptsz(CUdeviceptr p, CUstream s) { return async_free(p, ptsz_stream(s)); }

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

/* The live handles: the driver refuses a handle it does not hold (one
 * released, or never made) with an error; it never reads freed memory
 * (two threads releasing one handle at once, a stale handle). Under the
 * lock. */
static struct shandle *handles;

static struct shandle *handle_new(uint64_t size, int dev)
{
    struct shandle *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    h->size = size;
    h->dev = dev;
    h->refs = 1;
    LOCK();
    h->next = handles;
    handles = h;
    UNLOCK();
    return h;
}

/* The live handle named so, or NULL; under the lock. */
static struct shandle *handle_find(CUmemGenericAllocationHandle handle)
{
    struct shandle *h = handles;
    while (h && (uintptr_t)h != (uintptr_t)handle)
        h = h->next;
    return h && h->refs > 0 ? h : NULL;
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
        struct shandle *h = handle_new(size, -1);
        if (!h)
            return CUDA_ERROR_OUT_OF_MEMORY;
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
    struct shandle *h = handle_new(size, dev);
    if (!h)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *handle = (CUmemGenericAllocationHandle)(uintptr_t)h;
    return CUDA_SUCCESS;
}

/* Under the lock. */
static void handle_put(struct shandle *h)
{
    if (h->refs == 0 && h->maps == 0) {
        struct shandle **pp = &handles;
        while (*pp && *pp != h)
            pp = &(*pp)->next;
        if (*pp)
            *pp = h->next;
        if (h->dev >= 0) {
            devs[h->dev].used -= h->size;
            stats_sub(h->dev, h->size);
        }
        free(h->mem);
        free(h);
    }
}

SIM_EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
    INJECT_FREE("cuMemRelease");
    REQUIRE_INIT();
    LOCK();
    struct shandle *h = handle_find(handle);
    if (!h) {
        UNLOCK();
        return CUDA_ERROR_INVALID_VALUE;
    }
    h->refs--;
    handle_put(h); /* physical memory goes once the last mapping is gone */
    UNLOCK();
    return CUDA_SUCCESS;
}

/* The handle behind a mapped address, with one more reference for the
 * caller to release (NCCL frees its buffers so: retain, release, unmap,
 * release). */
SIM_EXPORT CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *handle, void *addr)
{
    REQUIRE_INIT();
    if (!handle)
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t a = (uint64_t)(uintptr_t)addr;
    LOCK();
    struct smap *m = maps;
    while (m && !(a >= m->addr && a < m->addr + m->size))
        m = m->next;
    if (m)
        m->h->refs++;
    UNLOCK();
    if (!m)
        return CUDA_ERROR_INVALID_VALUE;
    *handle = (CUmemGenericAllocationHandle)(uintptr_t)m->h;
    return CUDA_SUCCESS;
}

/* Shareable handles: a file descriptor (an eventfd) stands for the handle;
 * importing it makes a new handle to the same bytes' size on no device of
 * this process (the exporter's memory, in a real second process). */
struct sexport {
    int fd;
    struct shandle *h;
    struct sexport *next;
};
static struct sexport *exports;

SIM_EXPORT CUresult cuMemExportToShareableHandle(void *out, CUmemGenericAllocationHandle handle,
                                                 CUmemAllocationHandleType type, unsigned long long flags)
{
    REQUIRE_INIT();
    if (!out || flags || type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
        return CUDA_ERROR_INVALID_VALUE;
    struct sexport *e = calloc(1, sizeof *e);
    if (!e)
        return CUDA_ERROR_OUT_OF_MEMORY;
    e->fd = eventfd(0, EFD_CLOEXEC);
    if (e->fd < 0) {
        free(e);
        return CUDA_ERROR_OPERATING_SYSTEM;
    }
    /* found and listed under one lock: a release meanwhile would leave the
     * export naming a freed handle (whose address a new one may take) */
    LOCK();
    struct shandle *h = handle_find(handle);
    if (h) {
        e->h = h;
        e->next = exports;
        exports = e;
    }
    UNLOCK();
    if (!h) {
        close(e->fd);
        free(e);
        return CUDA_ERROR_INVALID_VALUE;
    }
    *(int *)out = e->fd;
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuMemImportFromShareableHandle(CUmemGenericAllocationHandle *handle, void *os_handle,
                                                   CUmemAllocationHandleType type)
{
    REQUIRE_INIT();
    if (!handle || type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
        return CUDA_ERROR_INVALID_VALUE;
    int fd = (int)(intptr_t)os_handle; /* the driver takes the descriptor's value as the pointer */
    LOCK();
    struct sexport *e = exports;
    while (e && e->fd != fd)
        e = e->next;
    struct shandle *src = handles; /* the exported handle, if it still lives */
    while (e && src && src != e->h)
        src = src->next;
    if (e && src && import_same && src->refs > 0) {
        /* GPUSIM_IMPORT_SAME: the handle this process already holds, one
         * more reference to it (cuda.h: no guarantee that an import gives
         * a handle of its own) */
        src->refs++;
        *handle = (CUmemGenericAllocationHandle)(uintptr_t)src;
        UNLOCK();
        return CUDA_SUCCESS;
    }
    uint64_t size = e && src ? src->size : 0;
    UNLOCK();
    if (!e || !src)
        return CUDA_ERROR_INVALID_VALUE;
    struct shandle *h = handle_new(size, -1);
    if (!h)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *handle = (CUmemGenericAllocationHandle)(uintptr_t)h;
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
    CUresult r = CUDA_ERROR_INVALID_VALUE;
    LOCK();
    struct shandle *h = handle_find(handle);
    if (!h || offset + size > h->size) {
        UNLOCK();
        return CUDA_ERROR_INVALID_VALUE;
    }
    for (struct smap *res = reserves; res; res = res->next) {
        if (ptr >= res->addr && ptr + size <= res->addr + res->size) {
            struct smap *m = calloc(1, sizeof *m);
            m->addr = ptr;
            m->size = size;
            m->offset = offset;
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

/* flags: a sparse or deferred-mapping array (CUDA_ARRAY3D_SPARSE,
 * CUDA_ARRAY3D_DEFERRED_MAPPING) takes no memory: it is mapped later */
static CUresult array_make(void **out, uint64_t bytes, int mip, unsigned flags)
{
    CUcontext c = cur_ctx();
    REQUIRE_CTX(c);
    if (!out || bytes == 0)
        return CUDA_ERROR_INVALID_VALUE;
    int dev = ((struct sctx *)c)->dev;
    if (flags & (CUDA_ARRAY3D_SPARSE | CUDA_ARRAY3D_DEFERRED_MAPPING))
        bytes = 0;
    LOCK();
    if (bytes && !bytes_take(dev, bytes)) {
        devs[dev].st.oom++;
        UNLOCK();
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    if (bytes)
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
            if (x->alive) { /* destroyed once: two threads destroying it at once, one of them succeeds */
                x->alive = 0;
                devs[x->dev].used -= x->bytes;
                if (x->bytes)
                    stats_sub(x->dev, x->bytes);
                r = CUDA_SUCCESS;
            }
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
    return array_make((void **)h, level_bytes(d->Width, d->Height, 1, format_bytes(d->Format) * d->NumChannels), 0, 0);
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
    return array_make((void **)h, level_bytes(d->Width, d->Height, d->Depth, format_bytes(d->Format) * d->NumChannels), 0,
                      d->Flags);
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
    if (!d || !format_bytes(d->Format) || !d->NumChannels)
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t elem = format_bytes(d->Format) * d->NumChannels, total = 0;
    /* layers and cube faces are not halved: each level has them all */
    int layers = (d->Flags & (CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_CUBEMAP)) != 0;
    /* cuda.h: the count is clamped to [1, 1 + floor(log2(max(width, height,
     * depth)))] (a layered array's depth is its layers: not a dimension) */
    uint64_t m = d->Width > d->Height ? d->Width : d->Height;
    if (!layers && d->Depth > m)
        m = d->Depth;
    unsigned most = 1;
    while (m >>= 1)
        most++;
    levels = levels < 1 ? 1 : levels > most ? most : levels;
    for (unsigned l = 0; l < levels; l++)
        if (__builtin_add_overflow(total, level_bytes(d->Width >> l ? d->Width >> l : 1,
                                                      d->Height ? (d->Height >> l ? d->Height >> l : 1) : 0,
                                                      layers ? d->Depth : d->Depth ? (d->Depth >> l ? d->Depth >> l : 1) : 0,
                                                      elem),
                                   &total))
            total = UINT64_MAX;
    return array_make((void **)h, total, 1, d->Flags);
}

SIM_EXPORT CUresult cuMipmappedArrayDestroy(CUmipmappedArray h) { return array_destroy(h, 1); }

/* ------------------------------------------------------------ host memory */

static CUresult host_alloc(void **pp, size_t bytes, unsigned flags)
{
    REQUIRE_CTX(cur_ctx());
    if (!pp || bytes == 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (host_mem_cap && bytes > host_mem_cap) /* the real driver's answer to more than it can pin */
        return CUDA_ERROR_OUT_OF_MEMORY;
    void *p = NULL;
    if (posix_memalign(&p, 4096, bytes))
        return CUDA_ERROR_OUT_OF_MEMORY;
    struct shost *h = calloc(1, sizeof *h);
    h->p = p;
    h->size = bytes;
    h->flags = flags;
    h->ctx = cur_ctx();
    LOCK();
    HASH_ADD_PTR(hosts, p, h);
    UNLOCK();
    *pp = p;
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuMemAllocHost_v2(void **pp, size_t bytes) { return host_alloc(pp, bytes, 0); }
SIM_EXPORT CUresult cuMemAllocHost(void **pp, unsigned int bytes) { return host_alloc(pp, bytes, 0); }
SIM_EXPORT CUresult cuMemHostAlloc(void **pp, size_t bytes, unsigned int flags) { return host_alloc(pp, bytes, flags); }

SIM_EXPORT CUresult cuMemFreeHost(void *p)
{
    REQUIRE_INIT();
    REFUSE_TORN_DOWN_CURRENT();
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
    h->ctx = cur_ctx();
    h->registered = 1;
    h->flags = flags;
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

/* ------------------------------------------------ copies, sets, pointers */

/* Device memory has bytes behind it, allocated on first access (a block
 * never touched costs nothing), so copies really copy. With unified
 * addressing, an address no block or mapping holds is host memory, unless it
 * lies where the simulator hands out device addresses. */
static int device_va(uint64_t a)
{
    return (a >= 0x700000000000ull && a < 0x700000000000ull + ((uint64_t)SIM_MAX_DEVICES << 40)) ||
           (a >= 0x500000000000ull && a < va_next);
}

/* The block holding addr (the lock is held). */
static struct blk *block_at(uint64_t addr)
{
    struct blk *b, *tmp;
    HASH_FIND(hh, blocks, &addr, sizeof addr, b);
    if (b)
        return b;
    HASH_ITER(hh, blocks, b, tmp) {
        if (addr >= b->addr && addr < b->addr + b->size)
            return b;
    }
    return NULL;
}

static unsigned char *lazy_bytes(unsigned char **mem, uint64_t size)
{
    if (!*mem)
        *mem = calloc(1, size);
    return *mem;
}

/* Where the n bytes at addr live: *out is the host address to use (itself
 * for host memory). The lock is held. */
static CUresult resolve(uint64_t addr, uint64_t n, unsigned char **out)
{
    struct blk *b = block_at(addr);
    if (b) {
        if (n > b->size - (addr - b->addr))
            return CUDA_ERROR_INVALID_VALUE;
        uint64_t off = addr - b->addr;
        if (b->kind == BK_IPC) { /* the exporter's bytes, while it lives */
            uint64_t key = b->ipc_src;
            struct blk *src;
            HASH_FIND(hh, blocks, &key, sizeof key, src);
            if (src && src->kind != BK_IPC && off + n <= src->size)
                b = src;
        }
        unsigned char *m = lazy_bytes(&b->mem, b->size);
        if (!m)
            return CUDA_ERROR_OUT_OF_MEMORY;
        *out = m + off;
        return CUDA_SUCCESS;
    }
    for (struct smap *m = maps; m; m = m->next) {
        if (addr < m->addr || addr >= m->addr + m->size)
            continue;
        if (n > m->size - (addr - m->addr))
            return CUDA_ERROR_INVALID_VALUE;
        unsigned char *mem = lazy_bytes(&m->h->mem, m->h->size);
        if (!mem)
            return CUDA_ERROR_OUT_OF_MEMORY;
        *out = mem + m->offset + (addr - m->addr);
        return CUDA_SUCCESS;
    }
    if (device_va(addr))
        return CUDA_ERROR_INVALID_VALUE;
    *out = (unsigned char *)(uintptr_t)addr;
    return CUDA_SUCCESS;
}

static CUresult copy_bytes(uint64_t dst, uint64_t src, size_t n)
{
    REQUIRE_CTX(cur_ctx());
    if (n == 0)
        return CUDA_SUCCESS;
    if (!dst || !src)
        return CUDA_ERROR_INVALID_VALUE;
    unsigned char *d, *s;
    LOCK();
    CUresult r = resolve(dst, n, &d);
    if (r == CUDA_SUCCESS)
        r = resolve(src, n, &s);
    if (r == CUDA_SUCCESS)
        memmove(d, s, n);
    UNLOCK();
    return r;
}

#define U(p) ((uint64_t)(uintptr_t)(p))
SIM_EXPORT CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t n) { return copy_bytes(dst, src, n); }
SIM_EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n) { return copy_bytes(dst, U(src), n); }
SIM_EXPORT CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n) { return copy_bytes(U(dst), src, n); }
SIM_EXPORT CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n) { return copy_bytes(dst, src, n); }
SIM_EXPORT CUresult cuMemcpyPeer(CUdeviceptr dst, CUcontext dc, CUdeviceptr src, CUcontext sc, size_t n)
{
    REQUIRE_INIT();
    if (!ctx_ok(dc) || !ctx_ok(sc))
        return CUDA_ERROR_INVALID_CONTEXT;
    return copy_bytes(dst, src, n);
}
/* the rest are synchronous too: the stream is only checked */
#define ASYNC(call, s) do { CUresult r_ = stream_check(s); return r_ != CUDA_SUCCESS ? r_ : (call); } while (0)
SIM_EXPORT CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) { ASYNC(copy_bytes(dst, src, n), s); }
SIM_EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, CUstream s) { ASYNC(copy_bytes(dst, U(src), n), s); }
SIM_EXPORT CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, CUstream s) { ASYNC(copy_bytes(U(dst), src, n), s); }
SIM_EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) { ASYNC(copy_bytes(dst, src, n), s); }
SIM_EXPORT CUresult cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dc, CUdeviceptr src, CUcontext sc, size_t n, CUstream s)
{
    ASYNC(cuMemcpyPeer(dst, dc, src, sc, n), s);
}
/* the legacy 32-bit ABI and the per-thread-default-stream forms */
SIM_EXPORT CUresult cuMemcpyHtoD(CUdeviceptr_v1 dst, const void *src, unsigned int n) { return copy_bytes(widen(dst), U(src), n); }
SIM_EXPORT CUresult cuMemcpyDtoH(void *dst, CUdeviceptr_v1 src, unsigned int n) { return copy_bytes(U(dst), widen(src), n); }
SIM_EXPORT CUresult cuMemcpyDtoD(CUdeviceptr_v1 dst, CUdeviceptr_v1 src, unsigned int n) { return copy_bytes(widen(dst), widen(src), n); }
SIM_EXPORT CUresult cuMemcpy_ptds(CUdeviceptr dst, CUdeviceptr src, size_t n) { return copy_bytes(dst, src, n); }
SIM_EXPORT CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr dst, const void *src, size_t n) { return copy_bytes(dst, U(src), n); }
SIM_EXPORT CUresult cuMemcpyDtoH_v2_ptds(void *dst, CUdeviceptr src, size_t n) { return copy_bytes(U(dst), src, n); }
SIM_EXPORT CUresult cuMemcpyDtoD_v2_ptds(CUdeviceptr dst, CUdeviceptr src, size_t n) { return copy_bytes(dst, src, n); }
SIM_EXPORT CUresult cuMemcpyPeer_ptds(CUdeviceptr dst, CUcontext dc, CUdeviceptr src, CUcontext sc, size_t n) { return cuMemcpyPeer(dst, dc, src, sc, n); }
SIM_EXPORT CUresult cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) { return cuMemcpyAsync(dst, src, n, s); }
SIM_EXPORT CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dst, const void *src, size_t n, CUstream s) { return cuMemcpyHtoDAsync_v2(dst, src, n, s); }
SIM_EXPORT CUresult cuMemcpyDtoHAsync_v2_ptsz(void *dst, CUdeviceptr src, size_t n, CUstream s) { return cuMemcpyDtoHAsync_v2(dst, src, n, s); }
SIM_EXPORT CUresult cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) { return cuMemcpyDtoDAsync_v2(dst, src, n, s); }
SIM_EXPORT CUresult cuMemcpyPeerAsync_ptsz(CUdeviceptr dst, CUcontext dc, CUdeviceptr src, CUcontext sc, size_t n, CUstream s) { return cuMemcpyPeerAsync(dst, dc, src, sc, n, s); }

/* height rows of width elements of elem bytes, pitch bytes apart */
static CUresult set_elems(uint64_t dst, size_t pitch, unsigned value, size_t elem, size_t width, size_t height)
{
    REQUIRE_CTX(cur_ctx());
    if (width == 0 || height == 0)
        return CUDA_SUCCESS;
    if (!dst || dst % elem || pitch % elem || (height > 1 && pitch < width * elem))
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t span = (uint64_t)pitch * (height - 1) + (uint64_t)width * elem;
    unsigned char *d;
    LOCK();
    CUresult r = resolve(dst, span, &d);
    for (size_t y = 0; r == CUDA_SUCCESS && y < height; y++) {
        unsigned char *row = d + (size_t)y * pitch;
        for (size_t x = 0; x < width; x++) {
            if (elem == 1)
                row[x] = (unsigned char)value;
            else if (elem == 2)
                memcpy(row + 2 * x, &(uint16_t){ (uint16_t)value }, 2);
            else
                memcpy(row + 4 * x, &(uint32_t){ value }, 4);
        }
    }
    UNLOCK();
    return r;
}

SIM_EXPORT CUresult cuMemsetD8_v2(CUdeviceptr d, unsigned char v, size_t n) { return set_elems(d, n, v, 1, n, 1); }
SIM_EXPORT CUresult cuMemsetD16_v2(CUdeviceptr d, unsigned short v, size_t n) { return set_elems(d, 2 * n, v, 2, n, 1); }
SIM_EXPORT CUresult cuMemsetD32_v2(CUdeviceptr d, unsigned int v, size_t n) { return set_elems(d, 4 * n, v, 4, n, 1); }
SIM_EXPORT CUresult cuMemsetD2D8_v2(CUdeviceptr d, size_t pitch, unsigned char v, size_t w, size_t h) { return set_elems(d, pitch, v, 1, w, h); }
SIM_EXPORT CUresult cuMemsetD2D16_v2(CUdeviceptr d, size_t pitch, unsigned short v, size_t w, size_t h) { return set_elems(d, pitch, v, 2, w, h); }
SIM_EXPORT CUresult cuMemsetD2D32_v2(CUdeviceptr d, size_t pitch, unsigned int v, size_t w, size_t h) { return set_elems(d, pitch, v, 4, w, h); }
SIM_EXPORT CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream s) { ASYNC(cuMemsetD8_v2(d, v, n), s); }
SIM_EXPORT CUresult cuMemsetD16Async(CUdeviceptr d, unsigned short v, size_t n, CUstream s) { ASYNC(cuMemsetD16_v2(d, v, n), s); }
SIM_EXPORT CUresult cuMemsetD32Async(CUdeviceptr d, unsigned int v, size_t n, CUstream s) { ASYNC(cuMemsetD32_v2(d, v, n), s); }
SIM_EXPORT CUresult cuMemsetD2D8Async(CUdeviceptr d, size_t p, unsigned char v, size_t w, size_t h, CUstream s) { ASYNC(cuMemsetD2D8_v2(d, p, v, w, h), s); }
SIM_EXPORT CUresult cuMemsetD2D16Async(CUdeviceptr d, size_t p, unsigned short v, size_t w, size_t h, CUstream s) { ASYNC(cuMemsetD2D16_v2(d, p, v, w, h), s); }
SIM_EXPORT CUresult cuMemsetD2D32Async(CUdeviceptr d, size_t p, unsigned int v, size_t w, size_t h, CUstream s) { ASYNC(cuMemsetD2D32_v2(d, p, v, w, h), s); }
SIM_EXPORT CUresult cuMemsetD8_v2_ptds(CUdeviceptr d, unsigned char v, size_t n) { return cuMemsetD8_v2(d, v, n); }
SIM_EXPORT CUresult cuMemsetD16_v2_ptds(CUdeviceptr d, unsigned short v, size_t n) { return cuMemsetD16_v2(d, v, n); }
SIM_EXPORT CUresult cuMemsetD32_v2_ptds(CUdeviceptr d, unsigned int v, size_t n) { return cuMemsetD32_v2(d, v, n); }
SIM_EXPORT CUresult cuMemsetD8Async_ptsz(CUdeviceptr d, unsigned char v, size_t n, CUstream s) { return cuMemsetD8Async(d, v, n, s); }
SIM_EXPORT CUresult cuMemsetD16Async_ptsz(CUdeviceptr d, unsigned short v, size_t n, CUstream s) { return cuMemsetD16Async(d, v, n, s); }
SIM_EXPORT CUresult cuMemsetD32Async_ptsz(CUdeviceptr d, unsigned int v, size_t n, CUstream s) { return cuMemsetD32Async(d, v, n, s); }
#undef ASYNC
#undef U

/* Pinned host memory (allocated or registered) holding p; the lock is held. */
static struct shost *host_at(const void *p)
{
    struct shost *h, *tmp;
    HASH_FIND_PTR(hosts, &p, h);
    if (h)
        return h;
    HASH_ITER(hh, hosts, h, tmp) {
        if ((const char *)p >= (const char *)h->p && (const char *)p < (const char *)h->p + h->size)
            return h;
    }
    return NULL;
}

/* With unified addressing the device sees pinned memory at its host address. */
SIM_EXPORT CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *pd, void *p, unsigned int flags)
{
    REQUIRE_CTX(cur_ctx());
    if (!pd || !p || flags)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    struct shost *h = host_at(p);
    UNLOCK();
    if (!h)
        return CUDA_ERROR_INVALID_VALUE;
    *pd = (CUdeviceptr)(uintptr_t)p;
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuMemHostGetFlags(unsigned int *flags, void *p)
{
    REQUIRE_CTX(cur_ctx());
    if (!flags || !p)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    struct shost *h = host_at(p);
    if (h)
        *flags = h->flags | CU_MEMHOSTALLOC_DEVICEMAP; /* mapped, as always with unified addressing */
    UNLOCK();
    return h ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* One attribute of the memory at p; the lock is held. Booleans are written
 * as one byte (the caller's variable is zeroed or a bool). */
static CUresult ptr_attr(void *data, CUpointer_attribute a, CUdeviceptr p)
{
    struct blk *b = block_at(p);
    struct smap *m = NULL;
    struct shost *h = NULL;
    if (!b)
        for (m = maps; m && !(p >= m->addr && p < m->addr + m->size); m = m->next)
            ;
    if (!b && !m)
        h = host_at((const void *)(uintptr_t)p);
    if (!b && !m && !h)
        return CUDA_ERROR_INVALID_VALUE;
    int dev = b ? b->dev : m ? m->h->dev : -1;
    CUcontext ctx = b && b->ctx ? b->ctx : cur_ctx();
    uint64_t base = b ? b->addr : m ? m->addr : (uint64_t)(uintptr_t)h->p;
    uint64_t size = b ? b->size : m ? m->size : h->size;
    int managed = b && b->kind == BK_MANAGED;
    switch (a) {
    case CU_POINTER_ATTRIBUTE_CONTEXT:
        *(CUcontext *)data = m ? NULL : ctx; /* VMM memory belongs to no context */
        break;
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
        *(unsigned *)data = h ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
        break;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER: *(CUdeviceptr *)data = p; break;
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
        if (!h && !managed)
            return CUDA_ERROR_INVALID_VALUE;
        *(void **)data = (void *)(uintptr_t)p;
        break;
    case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS: *(unsigned char *)data = 0; break;
    case CU_POINTER_ATTRIBUTE_BUFFER_ID:
        *(unsigned long long *)data = b ? b->id : (unsigned long long)base;
        break;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED: *(unsigned char *)data = (unsigned char)managed; break;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
        *(int *)data = dev >= 0 ? dev : ctx_ok(ctx) ? ((struct sctx *)ctx)->dev : 0;
        break;
    case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
        *(unsigned char *)data = b && b->kind == BK_LINEAR;
        break;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR: *(void **)data = (void *)(uintptr_t)base; break;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE: *(size_t *)data = size; break;
    case CU_POINTER_ATTRIBUTE_MAPPED: *(unsigned char *)data = 1; break;
    case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
        *(unsigned long long *)data = b && b->pool ? CU_MEM_HANDLE_TYPE_NONE : m ? CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR : 0;
        break;
    case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE: *(unsigned char *)data = !h; break;
    case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS: *(int *)data = CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE; break;
    case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
        *(CUmemoryPool *)data = b && b->pool ? (CUmemoryPool)b->pool : NULL;
        break;
    case CU_POINTER_ATTRIBUTE_MAPPING_SIZE: *(size_t *)data = size; break;
    case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR: *(void **)data = (void *)(uintptr_t)base; break;
    case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID: *(unsigned long long *)data = b ? b->id : (unsigned long long)base; break;
    case CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE: *(unsigned char *)data = 0; break;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuPointerGetAttribute(void *data, CUpointer_attribute a, CUdeviceptr p)
{
    REQUIRE_INIT();
    if (!data || !p)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    CUresult r = ptr_attr(data, a, p);
    UNLOCK();
    return r;
}

/* Unlike cuPointerGetAttribute, memory the driver does not know is no error:
 * its attributes read as zero (no context, memory type 0). */
SIM_EXPORT CUresult cuPointerGetAttributes(unsigned int n, CUpointer_attribute *attrs, void **data, CUdeviceptr p)
{
    REQUIRE_INIT();
    if (!attrs || !data)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = CUDA_SUCCESS;
    LOCK();
    for (unsigned i = 0; i < n && r == CUDA_SUCCESS; i++) {
        if (!data[i]) {
            r = CUDA_ERROR_INVALID_VALUE;
            break;
        }
        if (ptr_attr(data[i], attrs[i], p) == CUDA_SUCCESS)
            continue;
        switch (attrs[i]) {
        case CU_POINTER_ATTRIBUTE_CONTEXT: case CU_POINTER_ATTRIBUTE_HOST_POINTER:
        case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR: case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR:
        case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
            *(void **)data[i] = NULL; break;
        case CU_POINTER_ATTRIBUTE_MEMORY_TYPE: *(unsigned *)data[i] = 0; break;
        case CU_POINTER_ATTRIBUTE_DEVICE_POINTER: *(CUdeviceptr *)data[i] = 0; break;
        case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: *(int *)data[i] = -2; break;
        case CU_POINTER_ATTRIBUTE_BUFFER_ID: case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
        case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID:
            *(unsigned long long *)data[i] = 0; break;
        case CU_POINTER_ATTRIBUTE_RANGE_SIZE: case CU_POINTER_ATTRIBUTE_MAPPING_SIZE:
            *(size_t *)data[i] = 0; break;
        case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS: *(int *)data[i] = 0; break;
        case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS: case CU_POINTER_ATTRIBUTE_IS_MANAGED:
        case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE: case CU_POINTER_ATTRIBUTE_MAPPED:
        case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE: case CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE:
            *(unsigned char *)data[i] = 0; break;
        default: r = CUDA_ERROR_INVALID_VALUE;
        }
    }
    UNLOCK();
    return r;
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

/* A second mapping of the block at src, on device dev: no new memory (an
 * IPC handle opened, a pool's pointer imported); 0 if src is no block and
 * `known` is asked for. */
static uint64_t ipc_map(uint64_t src, int dev, int known)
{
    uint64_t key = src, size = SIM_GRANULARITY;
    LOCK();
    struct blk *b;
    HASH_FIND(hh, blocks, &key, sizeof key, b);
    if (!b && known) {
        UNLOCK();
        return 0;
    }
    if (b)
        size = b->size;
    struct blk *m = calloc(1, sizeof *m);
    m->addr = va_next;
    m->size = size;
    m->kind = BK_IPC;
    m->ipc_src = src;
    m->ctx = NULL;
    m->dev = dev;
    va_next += round_up(size, SIM_VMM_GRANULARITY);
    HASH_ADD(hh, blocks, addr, sizeof m->addr, m);
    UNLOCK();
    return m->addr;
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
    *p = ipc_map(src, ((struct sctx *)c)->dev, 0);
    return CUDA_SUCCESS;
}

/* A pool's allocation shared with another process (cuMemPoolExportPointer,
 * then cuMemPoolImportPointer there, from the pool it imported): the
 * simulator shares within the process, a second mapping of the same block.
 * The importer frees it with cuMemFree or cuMemFreeAsync. */
SIM_EXPORT CUresult cuMemPoolExportPointer(CUmemPoolPtrExportData *out, CUdeviceptr ptr)
{
    REQUIRE_INIT();
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t key = ptr;
    LOCK();
    struct blk *b;
    HASH_FIND(hh, blocks, &key, sizeof key, b);
    int ok = b && b->kind == BK_ASYNC;
    UNLOCK();
    if (!ok) /* only a pool's allocation can be exported */
        return CUDA_ERROR_INVALID_VALUE;
    memset(out, 0, sizeof *out);
    memcpy(out->reserved, &key, sizeof key);
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuMemPoolImportPointer(CUdeviceptr *ptr_out, CUmemoryPool pool, CUmemPoolPtrExportData *data)
{
    CUcontext c = cur_ctx();
    REQUIRE_CTX(c);
    if (!ptr_out || !pool || !data)
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t src;
    memcpy(&src, data->reserved, sizeof src);
    uint64_t m = ipc_map(src, ((struct sctx *)c)->dev, 1);
    if (!m)
        return CUDA_ERROR_INVALID_VALUE;
    *ptr_out = m;
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuIpcOpenMemHandle(CUdeviceptr *p, CUipcMemHandle h, unsigned int flags)
{
    return cuIpcOpenMemHandle_v2(p, h, flags);
}

SIM_EXPORT CUresult cuIpcCloseMemHandle(CUdeviceptr p) { return linear_free(p); }

/* ------------------------------------------------------ graph memory nodes */

/* Graphs hold only what memory nodes need. An allocation node's address is
 * fixed when the node is added: a reservation of its own (no memory is
 * counted until a launch, and the simulator launches nothing). One free node
 * may be added for it, in its own graph or in another (cuda.h, at
 * cuGraphAddMemAllocNode). Freed in its own graph, it cannot be freed outside
 * it, and the graph's destruction frees its address. Otherwise it lives
 * until cuMemFree/cuMemFreeAsync or context teardown, as an allocation that
 * outlives a launch does: destroying a graph ends its nodes, not the memory
 * of an allocation still live (the programming guide: "Graph destruction
 * does not automatically free any live graph-allocated memory"), so the
 * destruction of the graph that allocates it, or of another graph with its
 * free node, leaves it to the program. Other node types are not simulated. */
struct sgraph {
    struct sobj o;
    struct snode *nodes;
};

struct snode {
    struct sgraph *g;
    struct snode *next;
};

static CUresult graph_node(CUgraphNode *ph, struct sgraph *g)
{
    struct snode *n = calloc(1, sizeof *n);
    if (!n)
        return CUDA_ERROR_OUT_OF_MEMORY;
    n->g = g;
    n->next = g->nodes;
    g->nodes = n;
    *ph = (CUgraphNode)n;
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuGraphCreate(CUgraph *ph, unsigned int flags)
{
    REQUIRE_INIT();
    if (!ph || flags)
        return CUDA_ERROR_INVALID_VALUE;
    struct sgraph *g = calloc(1, sizeof *g);
    if (!g)
        return CUDA_ERROR_OUT_OF_MEMORY;
    obj_add(&g->o, OK_GRAPH);
    *ph = (CUgraph)g;
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuGraphDestroy(CUgraph h)
{
    REQUIRE_INIT();
    struct sgraph *g = obj_take(h, OK_GRAPH);
    if (!g)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    struct blk *b, *tmp;
    HASH_ITER(hh, blocks, b, tmp) {
        if (b->kind != BK_GRAPH)
            continue;
        if (b->graph_own == g && b->graph_free == g) { /* allocated and freed here */
            HASH_DEL(blocks, b);
            free(b->mem);
            free(b);
            continue;
        }
        if (b->graph_own == g) /* its node is gone; a free node elsewhere may still free it */
            b->graph_own = NULL;
        if (b->graph_free == g) /* its free node is gone: the program's to free again */
            b->graph_free = NULL;
    }
    UNLOCK();
    while (g->nodes) {
        struct snode *n = g->nodes;
        g->nodes = n->next;
        free(n);
    }
    free(g);
    return CUDA_SUCCESS;
}

static CUresult graph_alloc(CUgraphNode *ph, CUgraph h, CUDA_MEM_ALLOC_NODE_PARAMS *p)
{
    CUcontext c = cur_ctx();
    REQUIRE_CTX(c);
    if (!ph || !p || p->bytesize == 0 || p->poolProps.allocType != CU_MEM_ALLOCATION_TYPE_PINNED
        || p->poolProps.handleTypes != CU_MEM_HANDLE_TYPE_NONE
        || p->poolProps.location.type != CU_MEM_LOCATION_TYPE_DEVICE
        || p->poolProps.location.id < 0 || p->poolProps.location.id >= ndev)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    struct sgraph *g = obj_find(h, OK_GRAPH);
    struct blk *b = g ? calloc(1, sizeof *b) : NULL;
    CUresult r = !g ? CUDA_ERROR_INVALID_VALUE : !b ? CUDA_ERROR_OUT_OF_MEMORY : graph_node(ph, g);
    if (r != CUDA_SUCCESS) {
        UNLOCK();
        free(b);
        return r;
    }
    b->addr = va_next;
    b->size = round_up(p->bytesize, SIM_GRANULARITY);
    b->kind = BK_GRAPH;
    b->graph_own = g;
    b->dev = p->poolProps.location.id;
    b->ctx = c;
    b->id = new_id();
    va_next += round_up(b->size, SIM_VMM_GRANULARITY);
    HASH_ADD(hh, blocks, addr, sizeof b->addr, b);
    UNLOCK();
    p->dptr = b->addr;
    return CUDA_SUCCESS;
}

static CUresult graph_free(CUgraphNode *ph, CUgraph h, CUdeviceptr dptr)
{
    REQUIRE_INIT();
    if (!ph)
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t key = dptr;
    LOCK();
    struct sgraph *g = obj_find(h, OK_GRAPH);
    struct blk *b = NULL;
    HASH_FIND(hh, blocks, &key, sizeof key, b);
    /* the driver's refusals: not an allocation node's address, or freed twice */
    CUresult r = !g || !b || b->kind != BK_GRAPH || b->graph_free ? CUDA_ERROR_INVALID_VALUE : graph_node(ph, g);
    if (r == CUDA_SUCCESS)
        b->graph_free = g;
    UNLOCK();
    return r;
}

SIM_EXPORT CUresult cuGraphAddMemAllocNode(CUgraphNode *ph, CUgraph g, const CUgraphNode *deps, size_t ndeps,
                                           CUDA_MEM_ALLOC_NODE_PARAMS *p)
{
    (void)deps, (void)ndeps;
    return graph_alloc(ph, g, p);
}

SIM_EXPORT CUresult cuGraphAddMemFreeNode(CUgraphNode *ph, CUgraph g, const CUgraphNode *deps, size_t ndeps, CUdeviceptr dptr)
{
    (void)deps, (void)ndeps;
    return graph_free(ph, g, dptr);
}

static CUresult graph_add(CUgraphNode *ph, CUgraph g, CUgraphNodeParams *p)
{
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    switch (p->type) {
    case CU_GRAPH_NODE_TYPE_MEM_ALLOC: return graph_alloc(ph, g, (CUDA_MEM_ALLOC_NODE_PARAMS *)&p->alloc);
    case CU_GRAPH_NODE_TYPE_MEM_FREE: return graph_free(ph, g, p->free.dptr);
    default: return CUDA_ERROR_NOT_SUPPORTED;
    }
}

SIM_EXPORT CUresult cuGraphAddNode(CUgraphNode *ph, CUgraph g, const CUgraphNode *deps, size_t ndeps, CUgraphNodeParams *p)
{
    (void)deps, (void)ndeps;
    return graph_add(ph, g, p);
}

SIM_EXPORT CUresult cuGraphAddNode_v2(CUgraphNode *ph, CUgraph g, const CUgraphNode *deps, const CUgraphEdgeData *edges,
                                      size_t ndeps, CUgraphNodeParams *p)
{
    (void)deps, (void)edges, (void)ndeps;
    return graph_add(ph, g, p);
}

/* --------------------------------------------------------- streams, events */

/* Work is done when it is issued: every stream is idle, every event recorded
 * is complete. */
struct sstream {
    struct sobj o;
    CUgraph capture;       /* the graph being captured into (cuStreamBeginCapture), or NULL */
    CUcontext ctx;
    unsigned flags;
    int prio;
    unsigned long long id;
};

struct sevent {
    struct sobj o;
    unsigned flags;
    int recorded;
    struct timespec when;
};

#define PRIO_LEAST 0
#define PRIO_GREATEST (-5)

static int special_stream(CUstream s) { return s == NULL || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD; }

static CUresult stream_check(CUstream s)
{
    return special_stream(s) || obj_get(s, OK_STREAM) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult stream_make(CUstream *ps, unsigned flags, int prio)
{
    CUcontext c = cur_ctx();
    REQUIRE_CTX(c);
    if (!ps || (flags & ~(unsigned)CU_STREAM_NON_BLOCKING))
        return CUDA_ERROR_INVALID_VALUE;
    struct sstream *s = calloc(1, sizeof *s);
    if (!s)
        return CUDA_ERROR_OUT_OF_MEMORY;
    s->ctx = c;
    s->flags = flags;
    /* out-of-range priorities are clamped, as the driver does */
    s->prio = prio > PRIO_LEAST ? PRIO_LEAST : prio < PRIO_GREATEST ? PRIO_GREATEST : prio;
    s->id = new_id();
    obj_add(&s->o, OK_STREAM);
    *ps = (CUstream)s;
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuStreamCreate(CUstream *s, unsigned int flags) { return stream_make(s, flags, PRIO_LEAST); }

SIM_EXPORT CUresult cuStreamCreateWithPriority(CUstream *s, unsigned int flags, int priority)
{
    return stream_make(s, flags, priority);
}

SIM_EXPORT CUresult cuStreamDestroy_v2(CUstream s)
{
    REQUIRE_INIT();
    struct sstream *st = obj_take(s, OK_STREAM);
    if (!st)
        return CUDA_ERROR_INVALID_HANDLE;
    free(st);
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuStreamDestroy(CUstream s) { return cuStreamDestroy_v2(s); }

/* What a stream's properties are; the NULL, legacy and per-thread streams
 * are the current context's, blocking, of the lowest priority. */
static CUresult stream_props(CUstream s, CUcontext *ctx, unsigned *flags, int *prio, unsigned long long *id)
{
    REQUIRE_INIT();
    if (special_stream(s)) {
        CUcontext c = cur_ctx();
        if (!ctx_ok(c))
            return CUDA_ERROR_INVALID_CONTEXT;
        if (ctx) *ctx = c;
        if (flags) *flags = 0;
        if (prio) *prio = 0;
        if (id) *id = (unsigned long long)(uintptr_t)s; /* 0, 1, 2: fixed per context */
        return CUDA_SUCCESS;
    }
    LOCK();
    struct sstream *st = obj_find(s, OK_STREAM);
    if (st) {
        if (ctx) *ctx = st->ctx;
        if (flags) *flags = st->flags;
        if (prio) *prio = st->prio;
        if (id) *id = st->id;
    }
    UNLOCK();
    return st ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

SIM_EXPORT CUresult cuStreamGetPriority(CUstream s, int *prio)
{
    return prio ? stream_props(s, NULL, NULL, prio, NULL) : CUDA_ERROR_INVALID_VALUE;
}
SIM_EXPORT CUresult cuStreamGetFlags(CUstream s, unsigned int *flags)
{
    return flags ? stream_props(s, NULL, flags, NULL, NULL) : CUDA_ERROR_INVALID_VALUE;
}
SIM_EXPORT CUresult cuStreamGetId(CUstream s, unsigned long long *id)
{
    return id ? stream_props(s, NULL, NULL, NULL, id) : CUDA_ERROR_INVALID_VALUE;
}
SIM_EXPORT CUresult cuStreamGetCtx(CUstream s, CUcontext *ctx)
{
    return ctx ? stream_props(s, ctx, NULL, NULL, NULL) : CUDA_ERROR_INVALID_VALUE;
}
SIM_EXPORT CUresult cuStreamGetCtx_v2(CUstream s, CUcontext *ctx, CUgreenCtx *green)
{
    if (!ctx || !green)
        return CUDA_ERROR_INVALID_VALUE;
    *green = NULL;
    return stream_props(s, ctx, NULL, NULL, NULL);
}
SIM_EXPORT CUresult cuStreamGetDevice(CUstream s, CUdevice *dev)
{
    CUcontext c;
    if (!dev)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = stream_props(s, &c, NULL, NULL, NULL);
    if (r == CUDA_SUCCESS)
        *dev = ((struct sctx *)c)->dev;
    return r;
}

SIM_EXPORT CUresult cuStreamSynchronize(CUstream s)
{
    REQUIRE_INIT();
    return stream_check(s);
}

SIM_EXPORT CUresult cuStreamQuery(CUstream s)
{
    REQUIRE_INIT();
    return stream_check(s);
}

SIM_EXPORT CUresult cuStreamWaitEvent(CUstream s, CUevent ev, unsigned int flags)
{
    REQUIRE_INIT();
    if (flags & ~(unsigned)CU_EVENT_WAIT_EXTERNAL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = stream_check(s);
    if (r == CUDA_SUCCESS && !obj_get(ev, OK_EVENT))
        r = CUDA_ERROR_INVALID_HANDLE;
    return r;
}

/* The stream is idle: a host function or callback runs at once, on the
 * calling thread. */
SIM_EXPORT CUresult cuStreamAddCallback(CUstream s, CUstreamCallback cb, void *data, unsigned int flags)
{
    REQUIRE_INIT();
    if (!cb || flags)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = stream_check(s);
    if (r == CUDA_SUCCESS)
        cb(s, CUDA_SUCCESS, data);
    return r;
}

SIM_EXPORT CUresult cuLaunchHostFunc(CUstream s, CUhostFn fn, void *data)
{
    REQUIRE_CTX(cur_ctx());
    if (!fn)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = stream_check(s);
    if (r == CUDA_SUCCESS)
        fn(data);
    return r;
}

/* Stream capture, for what memory needs of it: a created stream (not the
 * legacy or per-thread default stream) captures into a graph of its own or
 * a given one; its cuMemAllocAsync calls become allocation nodes of that
 * graph (no memory until a launch, which is not simulated), its
 * cuMemFreeAsync calls free nodes (of such allocations only). Other work
 * issued meanwhile is done at once, as ever. */
/* The per-thread default stream captures too (the legacy one cannot): its
 * capture is the thread's own. */
static __thread CUgraph ptds_capture;

static CUgraph capturing(CUstream s)
{
    if (s == CU_STREAM_PER_THREAD)
        return ptds_capture;
    if (special_stream(s))
        return NULL;
    LOCK();
    struct sstream *st = obj_find(s, OK_STREAM);
    CUgraph g = st ? st->capture : NULL;
    UNLOCK();
    return g;
}

static CUresult capture_alloc(CUdeviceptr *dptr, size_t bytes, CUgraph g, int dev)
{
    CUDA_MEM_ALLOC_NODE_PARAMS p;
    memset(&p, 0, sizeof p);
    p.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    p.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    p.poolProps.location.id = dev;
    p.bytesize = bytes;
    CUgraphNode n;
    CUresult r = graph_alloc(&n, g, &p);
    if (r == CUDA_SUCCESS)
        *dptr = p.dptr;
    return r;
}

static CUresult capture_free(CUdeviceptr p, CUgraph g)
{
    CUgraphNode n;
    return graph_free(&n, g, p);
}

static CUresult capture_begin(CUstream s, CUgraph into)
{
    REQUIRE_CTX(cur_ctx());
    if (special_stream(s) && s != CU_STREAM_PER_THREAD)
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    if (s == CU_STREAM_PER_THREAD && ptds_capture)
        return CUDA_ERROR_ILLEGAL_STATE;
    CUgraph made = NULL;
    if (!into && cuGraphCreate(&made, 0) != CUDA_SUCCESS)
        return CUDA_ERROR_OUT_OF_MEMORY;
    if (s == CU_STREAM_PER_THREAD) {
        if (into && !obj_get(into, OK_GRAPH))
            return CUDA_ERROR_INVALID_VALUE;
        ptds_capture = into ? into : made;
        return CUDA_SUCCESS;
    }
    LOCK();
    struct sstream *st = obj_find(s, OK_STREAM);
    CUresult r = !st ? CUDA_ERROR_INVALID_HANDLE
               : into && !obj_find(into, OK_GRAPH) ? CUDA_ERROR_INVALID_VALUE
               : st->capture ? CUDA_ERROR_ILLEGAL_STATE : CUDA_SUCCESS;
    if (r == CUDA_SUCCESS)
        st->capture = into ? into : made;
    UNLOCK();
    if (r != CUDA_SUCCESS && made)
        cuGraphDestroy(made);
    return r;
}

SIM_EXPORT CUresult cuStreamBeginCapture_v2(CUstream s, CUstreamCaptureMode mode)
{
    if (mode != CU_STREAM_CAPTURE_MODE_GLOBAL && mode != CU_STREAM_CAPTURE_MODE_THREAD_LOCAL
        && mode != CU_STREAM_CAPTURE_MODE_RELAXED)
        return CUDA_ERROR_INVALID_VALUE;
    return capture_begin(s, NULL);
}
SIM_EXPORT CUresult cuStreamBeginCapture(CUstream s) { return capture_begin(s, NULL); }
SIM_EXPORT CUresult cuStreamBeginCapture_ptsz(CUstream s) { return capture_begin(ptsz_stream(s), NULL); }
SIM_EXPORT CUresult cuStreamBeginCapture_v2_ptsz(CUstream s, CUstreamCaptureMode mode)
{
    return cuStreamBeginCapture_v2(ptsz_stream(s), mode);
}
SIM_EXPORT CUresult cuStreamBeginCaptureToGraph(CUstream s, CUgraph g, const CUgraphNode *deps, const CUgraphEdgeData *edges,
                                                size_t ndeps, CUstreamCaptureMode mode)
{
    (void)deps, (void)edges, (void)ndeps, (void)mode;
    return g ? capture_begin(s, g) : CUDA_ERROR_INVALID_VALUE;
}
SIM_EXPORT CUresult cuStreamBeginCaptureToGraph_ptsz(CUstream s, CUgraph g, const CUgraphNode *deps,
                                                     const CUgraphEdgeData *edges, size_t ndeps, CUstreamCaptureMode mode)
{
    return cuStreamBeginCaptureToGraph(ptsz_stream(s), g, deps, edges, ndeps, mode);
}

SIM_EXPORT CUresult cuStreamEndCapture(CUstream s, CUgraph *pg)
{
    REQUIRE_INIT();
    if (!pg)
        return CUDA_ERROR_INVALID_VALUE;
    if (s == CU_STREAM_PER_THREAD) {
        if (!ptds_capture)
            return CUDA_ERROR_ILLEGAL_STATE;
        *pg = ptds_capture;
        ptds_capture = NULL;
        return CUDA_SUCCESS;
    }
    if (special_stream(s))
        return CUDA_ERROR_ILLEGAL_STATE;
    if (end_capture_delay_us) /* ending a capture builds its graph: takes time, widens races in tests */
        usleep((useconds_t)end_capture_delay_us);
    LOCK();
    struct sstream *st = obj_find(s, OK_STREAM);
    CUresult r = !st ? CUDA_ERROR_INVALID_HANDLE : !st->capture ? CUDA_ERROR_ILLEGAL_STATE : CUDA_SUCCESS;
    if (r == CUDA_SUCCESS) {
        *pg = st->capture;
        st->capture = NULL;
    }
    UNLOCK();
    return r;
}
SIM_EXPORT CUresult cuStreamEndCapture_ptsz(CUstream s, CUgraph *pg) { return cuStreamEndCapture(ptsz_stream(s), pg); }

SIM_EXPORT CUresult cuStreamIsCapturing(CUstream s, CUstreamCaptureStatus *status)
{
    REQUIRE_INIT();
    if (!status)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = stream_check(s);
    if (r == CUDA_SUCCESS)
        *status = capturing(s) ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
    return r;
}

SIM_EXPORT CUresult cuStreamGetCaptureInfo_v3(CUstream s, CUstreamCaptureStatus *status, cuuint64_t *id, CUgraph *graph,
                                              const CUgraphNode **deps, const CUgraphEdgeData **edges, size_t *ndeps)
{
    (void)id; (void)graph; (void)deps; (void)edges; (void)ndeps; /* valid only while capturing */
    return cuStreamIsCapturing(s, status);
}

SIM_EXPORT CUresult cuStreamGetCaptureInfo_v2(CUstream s, CUstreamCaptureStatus *status, cuuint64_t *id, CUgraph *graph,
                                              const CUgraphNode **deps, size_t *ndeps)
{
    return cuStreamGetCaptureInfo_v3(s, status, id, graph, deps, NULL, ndeps);
}

SIM_EXPORT CUresult cuStreamGetCaptureInfo(CUstream s, CUstreamCaptureStatus *status, cuuint64_t *id)
{
    return cuStreamGetCaptureInfo_v3(s, status, id, NULL, NULL, NULL, NULL);
}

SIM_EXPORT CUresult cuStreamIsCapturing_ptsz(CUstream s, CUstreamCaptureStatus *st)
{
    return cuStreamIsCapturing(ptsz_stream(s), st);
}
SIM_EXPORT CUresult cuStreamGetCaptureInfo_ptsz(CUstream s, CUstreamCaptureStatus *st, cuuint64_t *id)
{
    return cuStreamGetCaptureInfo(s, st, id);
}
SIM_EXPORT CUresult cuStreamGetCaptureInfo_v2_ptsz(CUstream s, CUstreamCaptureStatus *st, cuuint64_t *id, CUgraph *g,
                                                   const CUgraphNode **d, size_t *n)
{
    return cuStreamGetCaptureInfo_v2(s, st, id, g, d, n);
}
SIM_EXPORT CUresult cuStreamGetCaptureInfo_v3_ptsz(CUstream s, CUstreamCaptureStatus *st, cuuint64_t *id, CUgraph *g,
                                                   const CUgraphNode **d, const CUgraphEdgeData **e, size_t *n)
{
    return cuStreamGetCaptureInfo_v3(s, st, id, g, d, e, n);
}

SIM_EXPORT CUresult cuStreamSynchronize_ptsz(CUstream s) { return cuStreamSynchronize(s); }
SIM_EXPORT CUresult cuStreamQuery_ptsz(CUstream s) { return cuStreamQuery(s); }
SIM_EXPORT CUresult cuStreamWaitEvent_ptsz(CUstream s, CUevent e, unsigned int f) { return cuStreamWaitEvent(s, e, f); }
SIM_EXPORT CUresult cuStreamGetPriority_ptsz(CUstream s, int *p) { return cuStreamGetPriority(s, p); }
SIM_EXPORT CUresult cuStreamGetFlags_ptsz(CUstream s, unsigned int *f) { return cuStreamGetFlags(s, f); }
SIM_EXPORT CUresult cuStreamGetId_ptsz(CUstream s, unsigned long long *id) { return cuStreamGetId(s, id); }
SIM_EXPORT CUresult cuStreamGetCtx_ptsz(CUstream s, CUcontext *c) { return cuStreamGetCtx(s, c); }
SIM_EXPORT CUresult cuStreamGetCtx_v2_ptsz(CUstream s, CUcontext *c, CUgreenCtx *g) { return cuStreamGetCtx_v2(s, c, g); }
SIM_EXPORT CUresult cuStreamGetDevice_ptsz(CUstream s, CUdevice *d) { return cuStreamGetDevice(s, d); }
SIM_EXPORT CUresult cuStreamAddCallback_ptsz(CUstream s, CUstreamCallback cb, void *d, unsigned int f) { return cuStreamAddCallback(s, cb, d, f); }
SIM_EXPORT CUresult cuLaunchHostFunc_ptsz(CUstream s, CUhostFn fn, void *d) { return cuLaunchHostFunc(s, fn, d); }

SIM_EXPORT CUresult cuEventCreate(CUevent *pe, unsigned int flags)
{
    REQUIRE_CTX(cur_ctx());
    if (!pe || (flags & ~(unsigned)(CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS)))
        return CUDA_ERROR_INVALID_VALUE;
    if ((flags & CU_EVENT_INTERPROCESS) && !(flags & CU_EVENT_DISABLE_TIMING))
        return CUDA_ERROR_INVALID_VALUE;
    struct sevent *e = calloc(1, sizeof *e);
    if (!e)
        return CUDA_ERROR_OUT_OF_MEMORY;
    e->flags = flags;
    obj_add(&e->o, OK_EVENT);
    *pe = (CUevent)e;
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuEventRecordWithFlags(CUevent ev, CUstream s, unsigned int flags)
{
    REQUIRE_INIT();
    if (flags & ~(unsigned)CU_EVENT_RECORD_EXTERNAL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = stream_check(s);
    if (r != CUDA_SUCCESS)
        return r;
    LOCK();
    struct sevent *e = obj_find(ev, OK_EVENT);
    if (e) {
        e->recorded = 1;
        clock_gettime(CLOCK_MONOTONIC, &e->when);
    }
    UNLOCK();
    return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

SIM_EXPORT CUresult cuEventRecord(CUevent ev, CUstream s) { return cuEventRecordWithFlags(ev, s, 0); }
SIM_EXPORT CUresult cuEventRecord_ptsz(CUevent ev, CUstream s) { return cuEventRecordWithFlags(ev, s, 0); }
SIM_EXPORT CUresult cuEventRecordWithFlags_ptsz(CUevent ev, CUstream s, unsigned int f) { return cuEventRecordWithFlags(ev, s, f); }

SIM_EXPORT CUresult cuEventQuery(CUevent ev)
{
    REQUIRE_INIT();
    return obj_get(ev, OK_EVENT) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

SIM_EXPORT CUresult cuEventSynchronize(CUevent ev) { return cuEventQuery(ev); }

SIM_EXPORT CUresult cuEventDestroy_v2(CUevent ev)
{
    REQUIRE_INIT();
    struct sevent *e = obj_take(ev, OK_EVENT);
    if (!e)
        return CUDA_ERROR_INVALID_HANDLE;
    free(e);
    return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuEventDestroy(CUevent ev) { return cuEventDestroy_v2(ev); }

SIM_EXPORT CUresult cuEventElapsedTime_v2(float *ms, CUevent start, CUevent end)
{
    REQUIRE_INIT();
    if (!ms)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = CUDA_SUCCESS;
    LOCK();
    struct sevent *a = obj_find(start, OK_EVENT), *b = obj_find(end, OK_EVENT);
    if (!a || !b || !a->recorded || !b->recorded || ((a->flags | b->flags) & CU_EVENT_DISABLE_TIMING))
        r = CUDA_ERROR_INVALID_HANDLE;
    else
        *ms = (float)((double)(b->when.tv_sec - a->when.tv_sec) * 1e3 +
                      (double)(b->when.tv_nsec - a->when.tv_nsec) / 1e6);
    UNLOCK();
    return r;
}

SIM_EXPORT CUresult cuEventElapsedTime(float *ms, CUevent start, CUevent end) { return cuEventElapsedTime_v2(ms, start, end); }

/* ------------------------------------------------------------- the rest */

/* The names and texts of every CUresult of CUDA 13.0, as the real driver
 * words them; any other code is CUDA_ERROR_INVALID_VALUE with NULL, as it is
 * for the real one. */
#define E(code, text) { code, #code, text },
static const struct { CUresult e; const char *name, *text; } errors[] = {
    E(CUDA_SUCCESS, "no error")
    E(CUDA_ERROR_INVALID_VALUE, "invalid argument")
    E(CUDA_ERROR_OUT_OF_MEMORY, "out of memory")
    E(CUDA_ERROR_NOT_INITIALIZED, "initialization error")
    E(CUDA_ERROR_DEINITIALIZED, "driver shutting down")
    E(CUDA_ERROR_PROFILER_DISABLED, "profiler disabled while using external profiling tool")
    E(CUDA_ERROR_PROFILER_NOT_INITIALIZED, "profiler not initialized: call cudaProfilerInitialize()")
    E(CUDA_ERROR_PROFILER_ALREADY_STARTED, "profiler already started")
    E(CUDA_ERROR_PROFILER_ALREADY_STOPPED, "profiler already stopped")
    E(CUDA_ERROR_STUB_LIBRARY, "CUDA driver is a stub library")
    E(CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER, "API call requires a newer driver")
    E(CUDA_ERROR_DEVICE_UNAVAILABLE, "CUDA-capable device(s) is/are busy or unavailable")
    E(CUDA_ERROR_NO_DEVICE, "no CUDA-capable device is detected")
    E(CUDA_ERROR_INVALID_DEVICE, "invalid device ordinal")
    E(CUDA_ERROR_DEVICE_NOT_LICENSED, "device doesn't have valid Grid license")
    E(CUDA_ERROR_INVALID_IMAGE, "device kernel image is invalid")
    E(CUDA_ERROR_INVALID_CONTEXT, "invalid device context")
    E(CUDA_ERROR_CONTEXT_ALREADY_CURRENT, "context already current")
    E(CUDA_ERROR_MAP_FAILED, "mapping of buffer object failed")
    E(CUDA_ERROR_UNMAP_FAILED, "unmapping of buffer object failed")
    E(CUDA_ERROR_ARRAY_IS_MAPPED, "array is mapped")
    E(CUDA_ERROR_ALREADY_MAPPED, "resource already mapped")
    E(CUDA_ERROR_NO_BINARY_FOR_GPU, "no kernel image is available for execution on the device")
    E(CUDA_ERROR_ALREADY_ACQUIRED, "resource already acquired")
    E(CUDA_ERROR_NOT_MAPPED, "resource not mapped")
    E(CUDA_ERROR_NOT_MAPPED_AS_ARRAY, "resource not mapped as array")
    E(CUDA_ERROR_NOT_MAPPED_AS_POINTER, "resource not mapped as pointer")
    E(CUDA_ERROR_ECC_UNCORRECTABLE, "uncorrectable ECC error encountered")
    E(CUDA_ERROR_UNSUPPORTED_LIMIT, "limit is not supported on this architecture")
    E(CUDA_ERROR_CONTEXT_ALREADY_IN_USE, "exclusive-thread device already in use by a different thread")
    E(CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, "peer access is not supported between these two devices")
    E(CUDA_ERROR_INVALID_PTX, "a PTX JIT compilation failed")
    E(CUDA_ERROR_INVALID_GRAPHICS_CONTEXT, "invalid OpenGL or DirectX context")
    E(CUDA_ERROR_NVLINK_UNCORRECTABLE, "uncorrectable NVLink error detected during the execution")
    E(CUDA_ERROR_JIT_COMPILER_NOT_FOUND, "PTX JIT compiler library not found")
    E(CUDA_ERROR_UNSUPPORTED_PTX_VERSION, "the provided PTX was compiled with an unsupported toolchain.")
    E(CUDA_ERROR_JIT_COMPILATION_DISABLED, "PTX JIT compilation was disabled")
    E(CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY, "the provided execution affinity is not supported")
    E(CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC, "the provided PTX contains unsupported call to cudaDeviceSynchronize")
    E(CUDA_ERROR_CONTAINED, "an exception occurred on the device that is now contained by the GPU's error containment capability")
    E(CUDA_ERROR_INVALID_SOURCE, "device kernel image is invalid")
    E(CUDA_ERROR_FILE_NOT_FOUND, "file not found")
    E(CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND, "shared object symbol not found")
    E(CUDA_ERROR_SHARED_OBJECT_INIT_FAILED, "shared object initialization failed")
    E(CUDA_ERROR_OPERATING_SYSTEM, "OS call failed or operation not supported on this OS")
    E(CUDA_ERROR_INVALID_HANDLE, "invalid resource handle")
    E(CUDA_ERROR_ILLEGAL_STATE, "the operation cannot be performed in the present state")
    E(CUDA_ERROR_LOSSY_QUERY, "attempted introspection would be semantically lossy")
    E(CUDA_ERROR_NOT_FOUND, "named symbol not found")
    E(CUDA_ERROR_NOT_READY, "device not ready")
    E(CUDA_ERROR_ILLEGAL_ADDRESS, "an illegal memory access was encountered")
    E(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "too many resources requested for launch")
    E(CUDA_ERROR_LAUNCH_TIMEOUT, "the launch timed out and was terminated")
    E(CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING, "launch uses incompatible texturing mode")
    E(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, "peer access is already enabled")
    E(CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, "peer access has not been enabled")
    E(CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE, "cannot set while device is active in this process")
    E(CUDA_ERROR_CONTEXT_IS_DESTROYED, "context is destroyed")
    E(CUDA_ERROR_ASSERT, "device-side assert triggered")
    E(CUDA_ERROR_TOO_MANY_PEERS, "peer mapping resources exhausted")
    E(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, "part or all of the requested memory range is already mapped")
    E(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, "pointer does not correspond to a registered memory region")
    E(CUDA_ERROR_HARDWARE_STACK_ERROR, "hardware stack error")
    E(CUDA_ERROR_ILLEGAL_INSTRUCTION, "an illegal instruction was encountered")
    E(CUDA_ERROR_MISALIGNED_ADDRESS, "misaligned address")
    E(CUDA_ERROR_INVALID_ADDRESS_SPACE, "operation not supported on global/shared address space")
    E(CUDA_ERROR_INVALID_PC, "invalid program counter")
    E(CUDA_ERROR_LAUNCH_FAILED, "unspecified launch failure")
    E(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, "too many blocks in cooperative launch")
    E(CUDA_ERROR_TENSOR_MEMORY_LEAK, "tensor memory not completely freed")
    E(CUDA_ERROR_NOT_PERMITTED, "operation not permitted")
    E(CUDA_ERROR_NOT_SUPPORTED, "operation not supported")
    E(CUDA_ERROR_SYSTEM_NOT_READY, "system not yet initialized")
    E(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, "system has unsupported display driver / cuda driver combination")
    E(CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE, "forward compatibility was attempted on non supported HW")
    E(CUDA_ERROR_MPS_CONNECTION_FAILED, "MPS client failed to connect to the MPS control daemon or the MPS server")
    E(CUDA_ERROR_MPS_RPC_FAILURE, "the remote procedural call between the MPS server and the MPS client failed")
    E(CUDA_ERROR_MPS_SERVER_NOT_READY, "MPS server is not ready to accept new MPS client requests")
    E(CUDA_ERROR_MPS_MAX_CLIENTS_REACHED, "the hardware resources required to create MPS client have been exhausted")
    E(CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED, "the hardware resources required to support device connections have been exhausted")
    E(CUDA_ERROR_MPS_CLIENT_TERMINATED, "the MPS client has been terminated by the server")
    E(CUDA_ERROR_CDP_NOT_SUPPORTED, "the module is using CUDA Dynamic Parallelism, but the current configuration, like MPS, does not support it")
    E(CUDA_ERROR_CDP_VERSION_MISMATCH, "the module uses CUDA Dynamic Parallelism in a way that is not supported by this version of the driver")
    E(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "operation not permitted when stream is capturing")
    E(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, "operation failed due to a previous error during capture")
    E(CUDA_ERROR_STREAM_CAPTURE_MERGE, "operation would result in a merge of separate capture sequences")
    E(CUDA_ERROR_STREAM_CAPTURE_UNMATCHED, "capture was not ended in the same stream as it began")
    E(CUDA_ERROR_STREAM_CAPTURE_UNJOINED, "capturing stream has unjoined work")
    E(CUDA_ERROR_STREAM_CAPTURE_ISOLATION, "dependency created on uncaptured work in another stream")
    E(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, "operation would make the legacy stream depend on a capturing blocking stream")
    E(CUDA_ERROR_CAPTURED_EVENT, "operation not permitted on an event last recorded in a capturing stream")
    E(CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD, "attempt to terminate a thread-local capture sequence from another thread")
    E(CUDA_ERROR_TIMEOUT, "wait operation timed out")
    E(CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, "the graph update was not performed because it included changes which violated constraints specific to instantiated graph update")
    E(CUDA_ERROR_EXTERNAL_DEVICE, "an async error has occurred in external entity outside of CUDA")
    E(CUDA_ERROR_INVALID_CLUSTER_SIZE, "a kernel launch error has occurred due to cluster misconfiguration")
    E(CUDA_ERROR_FUNCTION_NOT_LOADED, "the function handle is not loaded when calling an API that requires a loaded function")
    E(CUDA_ERROR_INVALID_RESOURCE_TYPE, "one or more resources passed in are not valid resource types for the operation")
    E(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, "one or more resources are insufficient or non-applicable for the operation")
    E(CUDA_ERROR_KEY_ROTATION, "an error happened during the key rotation sequence")
    E(CUDA_ERROR_UNKNOWN, "unknown error")
};
#undef E

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
