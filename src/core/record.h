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
    GMG_SPACE_DEVPTR_V1,   /* legacy 32-bit pointers: value = ptr | (device + 1) << 32,
                              since two devices can hand out the same 32 bits */
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
    uint64_t requested;   /* bytes the caller asked for; for a cuMemMap
                             mapping, the physical handle it maps         */
    uint64_t seq;         /* allocation order, process-wide                */
    uint64_t time_ns;     /* CLOCK_MONOTONIC at allocation                 */
    uintptr_t ctx;        /* the context current at allocation             */
    uint32_t stack;       /* stack depot id, 0 when stacks are off         */
    uint32_t tid;
    int16_t device;       /* -1 when unknown                               */
    uint8_t family;
    uint8_t counted : 1;  /* its size is reserved in the quota             */
    uint8_t released : 1; /* VMM handle released by the program while still
                             mapped: it counts until the last unmap        */
    uint8_t freeing : 1;  /* a free is in flight; the freeing thread owns it */
    uint8_t freed_by_other : 1; /* a racing free of the same key succeeded */
    uint8_t detached : 1; /* taken out of the table while being freed (the
                             address was reused); the freeing thread drops it */
    uint8_t torn_down : 1; /* its context was torn down while it was being
                             freed: if the free fails, it was reclaimed    */
    uint32_t maps;        /* VMM handle: live cuMemMap mappings of it      */
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

/* fork child: its counters start at zero (the table starts empty). */
void gmg_record_atfork_child(void);

#endif
