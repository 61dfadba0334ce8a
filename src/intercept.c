/* intercept.c - see intercept.h. */
#define _GNU_SOURCE
#include "intercept.h"

#include "config.h"
#include "hooks.h"
#include "log.h"
#include "quota.h"
#include "refusal.h"
#include "stacks.h"

#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

static uint64_t seq;
static uint64_t unknown_frees;
static unsigned ctx_generation;

static __thread uintptr_t tl_ctx;
static __thread int tl_dev = -1;
static __thread unsigned tl_gen;
static __thread uint32_t tl_tid;

void gmg_contexts_changed(void)
{
    __atomic_fetch_add(&ctx_generation, 1, __ATOMIC_RELEASE);
}

int gmg_current_device(uintptr_t *ctx)
{
    CUcontext c = NULL;
    *ctx = 0;
    gmg_pfn_cuCtxGetCurrent get = REAL(cuCtxGetCurrent);
    if (!get || get(&c) != CUDA_SUCCESS || !c)
        return -1;
    *ctx = (uintptr_t)c;
    unsigned gen = __atomic_load_n(&ctx_generation, __ATOMIC_ACQUIRE);
    if ((uintptr_t)c == tl_ctx && gen == tl_gen)
        return tl_dev;
    CUdevice d = -1;
    gmg_pfn_cuCtxGetDevice getdev = REAL(cuCtxGetDevice);
    if (!getdev || getdev(&d) != CUDA_SUCCESS)
        return -1;
    tl_ctx = (uintptr_t)c;
    tl_dev = d;
    tl_gen = gen;
    return d;
}

CUresult gmg_begin(struct gmg_op *op, int family, int dev, uint64_t bytes, int counted)
{
    op->family = family;
    op->ctx = 0;
    if (dev < 0)
        dev = gmg_current_device(&op->ctx);
    else
        gmg_current_device(&op->ctx);
    op->dev = dev;
    op->counted = counted && dev >= 0;
    op->reserved = 0;
    op->stack = gmg_stack_capture();
    if (!op->counted)
        return CUDA_SUCCESS;
    int over = 0;
    if (!gmg_quota_reserve(dev, bytes, &over)) {
        op->counted = 0;
        return gmg_refuse(op, bytes);
    }
    if (over)
        gmg_warn_over(op, bytes);
    op->reserved = bytes;
    return CUDA_SUCCESS;
}

int gmg_adjust(struct gmg_op *op, uint64_t bytes)
{
    if (!op->counted || bytes == op->reserved)
        return 1;
    if (bytes < op->reserved) {
        gmg_quota_release(op->dev, op->reserved - bytes);
    } else {
        int over = 0;
        if (!gmg_quota_reserve(op->dev, bytes - op->reserved, &over))
            return 0;
        if (over)
            gmg_warn_over(op, bytes);
    }
    op->reserved = bytes;
    return 1;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void gmg_drop_record(struct gmg_alloc *a, void *unused)
{
    (void)unused;
    if (a->counted)
        gmg_quota_release(a->device, a->size);
    free(a);
}

void gmg_end(struct gmg_op *op, CUresult r, enum gmg_space space, uint64_t key, uint64_t size, uint64_t requested)
{
    if (r != CUDA_SUCCESS) {
        if (op->counted)
            gmg_quota_release(op->dev, op->reserved);
        return;
    }
    struct gmg_alloc *a = malloc(sizeof *a);
    if (!a)
        return; /* untracked: its reservation stays, so the quota still holds */
    a->key.value = key;
    a->key.space = space;
    a->size = op->counted ? op->reserved : size;
    a->requested = requested;
    a->seq = __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED);
    a->time_ns = now_ns();
    a->ctx = op->ctx;
    a->stack = op->stack;
    if (!tl_tid)
        tl_tid = (uint32_t)syscall(SYS_gettid);
    a->tid = tl_tid;
    a->device = (int16_t)op->dev;
    a->family = (uint8_t)op->family;
    a->counted = (uint8_t)op->counted;
    struct gmg_alloc *stale = gmg_track_insert(a);
    if (stale)
        gmg_drop_record(stale, NULL);
}

struct gmg_alloc *gmg_free_take(enum gmg_space space, uint64_t key)
{
    return gmg_track_remove(space, key);
}

void gmg_free_done(struct gmg_alloc *a, CUresult r, uint64_t key)
{
    if (!a) {
        if (key)
            __atomic_fetch_add(&unknown_frees, 1, __ATOMIC_RELAXED);
        return;
    }
    if (r != CUDA_SUCCESS) {
        struct gmg_alloc *stale = gmg_track_insert(a); /* the driver kept it */
        if (stale)
            gmg_drop_record(stale, NULL);
        return;
    }
    gmg_drop_record(a, NULL);
}

uint64_t gmg_unknown_frees(void) { return __atomic_load_n(&unknown_frees, __ATOMIC_RELAXED); }
uint64_t gmg_total_allocs(void) { return __atomic_load_n(&seq, __ATOMIC_RELAXED); }
