/*
 * real.h - the real driver (driver layer): what hooks.def generates, an id
 * per entry point, the table that the routes search, and the real driver
 * function behind each id, resolved through the guard's own handle on
 * libcuda.so.1. Every wrapper is declared from its
 * PFN typedef, so a wrapper whose signature drifts from the ABI it claims
 * does not compile.
 */
#ifndef GMG_DRIVER_REAL_H
#define GMG_DRIVER_REAL_H

#include "base/export.h"
#include "driver/cuda_api.h"

enum gmg_hook_id {
#define HOOK(sym, name, ver, sfx, fam) H_##sym,
#define CALL(sym, name, ver) H_##sym,
#include "driver/hooks.def"
#undef HOOK
    H_COUNT
};

#define HOOK(sym, name, ver, sfx, fam) typedef PFN_##name##_v##ver##sfx gmg_pfn_##sym;
#define CALL(sym, name, ver) typedef PFN_##name##_v##ver gmg_pfn_##sym;
#include "driver/hooks.def"
#undef HOOK

#define HOOK(sym, name, ver, sfx, fam) extern __typeof__(*(gmg_pfn_##sym)0) sym;
#include "driver/hooks.def"
#undef HOOK

struct gmg_hook {
    const char *symbol;   /* exported name, e.g. "cuMemAlloc_v2"          */
    const char *name;     /* cuGetProcAddress name, e.g. "cuMemAlloc"     */
    int version;          /* ABI threshold                                */
    int ptsz;             /* per-thread default stream variant            */
    const char *family;
    void *wrapper;        /* NULL for CALL entries                        */
};

extern const struct gmg_hook gmg_hooks[H_COUNT];

/* The real driver functions, resolved on first need. */
extern void *gmg_real[H_COUNT];
void *gmg_real_slow(enum gmg_hook_id id);
void gmg_resolve(void); /* open libcuda.so.1 and resolve every entry, once */
/* Whether libcuda.so.1 is loaded in the process (by the program or by us),
 * without loading it. */
int gmg_driver_loaded(void);
/* Whether p lies in the driver: the object our libcuda.so.1 handle opened
 * (dladdr; not for a signal handler). */
int gmg_driver_holds(const void *p);

static inline void *gmg_real_get(enum gmg_hook_id id)
{
    void *p = __atomic_load_n(&gmg_real[id], __ATOMIC_ACQUIRE);
    return p ? p : gmg_real_slow(id);
}

#define REAL(sym) ((gmg_pfn_##sym)gmg_real_get(H_##sym))

/* Calls the real function, or answers CUDA_ERROR_NOT_FOUND when the driver
 * lacks it. */
#define CALL_REAL(sym, ...) \
    (REAL(sym) ? REAL(sym)(__VA_ARGS__) : CUDA_ERROR_NOT_FOUND)


#endif
