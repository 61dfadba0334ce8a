/*
 * hooks.h - what hooks.def generates: an id per entry point, the real
 * driver function behind each, and the table that cuGetProcAddress and dlsym
 * routing search. Every wrapper is declared from its PFN typedef, so a
 * wrapper whose signature drifts from the ABI it claims does not compile.
 */
#ifndef GMG_HOOKS_H
#define GMG_HOOKS_H

#include "cuda_api.h"

#define GMG_EXPORT __attribute__((visibility("default")))

enum gmg_hook_id {
#define HOOK(sym, name, ver, sfx, fam) H_##sym,
#define CALL(sym, name, ver) H_##sym,
#include "hooks.def"
#undef HOOK
    H_COUNT
};

#define HOOK(sym, name, ver, sfx, fam) typedef PFN_##name##_v##ver##sfx gmg_pfn_##sym;
#define CALL(sym, name, ver) typedef PFN_##name##_v##ver gmg_pfn_##sym;
#include "hooks.def"
#undef HOOK

#define HOOK(sym, name, ver, sfx, fam) extern __typeof__(*(gmg_pfn_##sym)0) sym;
#include "hooks.def"
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

/* Debug log of the first direct call of an exported wrapper. */
void gmg_note_direct(enum gmg_hook_id id);

#endif
