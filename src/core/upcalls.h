/*
 * upcalls.h - what the lower layers ask of the layers above (core layer).
 *
 * Calls run downward only. Where a wrapper must reach the life cycle or the
 * report side (the first use of the driver; a refusal to explain), it calls
 * one of these, and they call what guard.c installed at start-up. Before
 * that, or when nothing is installed, each does nothing.
 */
#ifndef GMG_CORE_UPCALLS_H
#define GMG_CORE_UPCALLS_H

#include <stdint.h>

/* A refused allocation, with the numbers as they were when it was refused. */
struct gmg_refusal {
    int family;
    int device;
    uint64_t bytes;      /* what the call asked for                  */
    uint64_t limit;      /* the device's quota                       */
    uint64_t in_use;     /* counted against it at the refusal (the
                            group's bytes under GPUMEM_GROUP)         */
    uint64_t own;        /* this process's part of in_use            */
    uint32_t stack;      /* the refused call's own stack (depot id)  */
    int abort;           /* GPUMEM_ON_LIMIT=abort: the caller aborts */
    int driver;          /* the driver refused (out of memory), not the quota */
    int free_known;      /* driver: dev_free was read                */
    uint64_t dev_free;   /* driver: the device's free memory then    */
    uint64_t mono_ms;    /* when: CLOCK_MONOTONIC, in ms (the timeline's mark) */
    uint64_t order;      /* the order refusals were made in (several in one ms) */
};

struct gmg_upcalls {
    /* The process calls the driver through the guard: arm the dump
     * signal, report at exit. Called once. */
    void (*first_use)(void);
    /* Explain a refusal (once per call site; every time under abort),
     * returning once it is explained (bounded: the caller may hold locks).
     * Must not build a full report on the calling thread unless abort. */
    int (*refused)(const struct gmg_refusal *r); /* 0: not explained, nor will it be (too many at once) */
    /* A refusal first on this device at a call site not explained now
     * (explained before on another device, or past the cap on explained
     * sites): mark the device's timeline, no message. Must not wait. */
    void (*marked)(const struct gmg_refusal *r);
};

void gmg_upcalls_install(const struct gmg_upcalls *u);
/* Whether they are installed: the guard is at work in this process. A
 * copy that stays out (another copy loaded first, or loaded without
 * LD_PRELOAD, where the program's driver calls never reach it) installs
 * none, and takes nothing on (the NVTX memory API). */
int gmg_upcalls_installed(void);

void gmg_upcall_first_use(void);
int gmg_upcall_refused(const struct gmg_refusal *r); /* the upcall's answer; 1 without one */
void gmg_upcall_marked(const struct gmg_refusal *r);

#endif
