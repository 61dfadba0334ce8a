/* record.c - see record.h. */
#define _GNU_SOURCE
#include "core/record.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

static uint64_t seq;
static uint64_t unknown_frees;
static __thread uint32_t tl_tid;

static const char *const family_names[GMG_FAM_COUNT] = {
    [GMG_FAM_LINEAR] = "cuMemAlloc",
    [GMG_FAM_PITCH] = "cuMemAllocPitch",
    [GMG_FAM_MANAGED] = "cuMemAllocManaged",
    [GMG_FAM_ASYNC] = "cuMemAllocAsync",
    [GMG_FAM_VMM] = "cuMemCreate",
    [GMG_FAM_VMM_MAP] = "cuMemMap",
    [GMG_FAM_VA] = "cuMemAddressReserve",
    [GMG_FAM_ARRAY] = "cuArrayCreate",
    [GMG_FAM_MIPMAP] = "cuMipmappedArrayCreate",
    [GMG_FAM_HOST] = "cuMemHostAlloc",
    [GMG_FAM_HOST_REGISTER] = "cuMemHostRegister",
    [GMG_FAM_IPC] = "cuIpcOpenMemHandle",
};

const char *gmg_family_name(int family)
{
    return family >= 0 && family < GMG_FAM_COUNT ? family_names[family] : "?";
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct gmg_alloc *gmg_record_new(void)
{
    struct gmg_alloc *a = malloc(sizeof *a);
    if (!a)
        return NULL;
    memset(a, 0, offsetof(struct gmg_alloc, hh));
    a->seq = __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED);
    a->time_ns = now_ns();
    if (!tl_tid)
        tl_tid = (uint32_t)syscall(SYS_gettid);
    a->tid = tl_tid;
    return a;
}

void gmg_record_free(struct gmg_alloc *a) { free(a); }

void gmg_record_unknown_free(void) { __atomic_fetch_add(&unknown_frees, 1, __ATOMIC_RELAXED); }
uint64_t gmg_record_unknown_frees(void) { return __atomic_load_n(&unknown_frees, __ATOMIC_RELAXED); }
uint64_t gmg_record_total(void) { return __atomic_load_n(&seq, __ATOMIC_RELAXED); }

void gmg_record_atfork_child(void)
{
    seq = 0;
    unknown_frees = 0;
}
