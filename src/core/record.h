/*
 * record.h - one allocation as the guard remembers it (core layer): what a
 * key means, the API families, the record itself, and the process-wide
 * counters records are numbered by. Records are made here, before any table
 * lock is taken, and freed by whoever removed them from the table.
 */
#ifndef GMG_CORE_RECORD_H
#define GMG_CORE_RECORD_H

#include <stdint.h>
#include <uthash.h>

/* What a key means: the same number can be a device pointer and a handle. */
enum gmg_space {
    GMG_SPACE_DEVPTR = 1,  /* linear, pitch, managed, async, IPC mappings */
    GMG_SPACE_VMM,         /* cuMemCreate handles                         */
    GMG_SPACE_MAP,         /* cuMemMap ranges                             */
    GMG_SPACE_VA,          /* cuMemAddressReserve ranges                  */
    GMG_SPACE_ARRAY,       /* CUarray and CUmipmappedArray                */
    GMG_SPACE_HOST,        /* pinned host memory                          */
};

enum gmg_family {
    GMG_FAM_LINEAR, GMG_FAM_PITCH, GMG_FAM_MANAGED, GMG_FAM_ASYNC, GMG_FAM_VMM,
    GMG_FAM_VMM_MAP, GMG_FAM_VA, GMG_FAM_ARRAY, GMG_FAM_MIPMAP, GMG_FAM_HOST,
    GMG_FAM_HOST_REGISTER, GMG_FAM_IPC, GMG_FAM_COUNT
};

struct gmg_key {
    uint64_t value;
    uint64_t space;
};

struct gmg_alloc {
    struct gmg_key key;
    uint64_t size;        /* bytes: counted against the quota if `counted` */
    uint64_t requested;   /* bytes the caller asked for                    */
    uint64_t seq;         /* allocation order, process-wide                */
    uint64_t time_ns;     /* CLOCK_MONOTONIC at allocation                 */
    uintptr_t ctx;        /* the context current at allocation             */
    uint32_t stack;       /* stack depot id, 0 when stacks are off         */
    uint32_t tid;
    int16_t device;       /* -1 when unknown                               */
    uint8_t family;
    uint8_t counted;      /* 1: its size is reserved in the quota          */
    UT_hash_handle hh;
};

const char *gmg_family_name(int family);   /* e.g. "cuMemAlloc" */

/* A new record, numbered, time-stamped and marked with the calling thread;
 * the caller fills the rest. NULL when out of memory. */
struct gmg_alloc *gmg_record_new(void);
void gmg_record_free(struct gmg_alloc *a);

/* A free of a pointer the guard never saw (it is passed to the driver). */
void gmg_record_unknown_free(void);
uint64_t gmg_record_unknown_frees(void);

/* How many records were ever made: the last sequence number. */
uint64_t gmg_record_total(void);

#endif
