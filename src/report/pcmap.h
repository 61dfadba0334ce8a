/*
 * pcmap.h - a map from a code address, in the module it was captured in,
 * to a 64-bit value, for one report's pass over stacks that share their
 * frames: what a frame comes to (its owner, its call-site digest) is
 * worked out once per address and module (report layer): libraries
 * loaded one after another at one address each have their own. Open
 * addressing, grown when half full; a map that cannot grow keeps what it
 * has, and the caller works the value out again.
 */
#ifndef GMG_REPORT_PCMAP_H
#define GMG_REPORT_PCMAP_H

#include <stddef.h>
#include <stdint.h>

struct gmg_pcmap {
    uintptr_t *pc;           /* 0: an empty slot */
    const void **mod;        /* the module (gmg_stack_module; NULL: unknown) */
    uint64_t *v;
    size_t n, cap;
};

/* 1 and *v when pc of module mod is in the map, else 0. */
int gmg_pcmap_get(const struct gmg_pcmap *m, uintptr_t pc, const void *mod, uint64_t *v);
/* Add pc of mod (pc not 0, the pair not in the map yet) with v; left out
 * when out of memory. */
void gmg_pcmap_put(struct gmg_pcmap *m, uintptr_t pc, const void *mod, uint64_t v);
void gmg_pcmap_free(struct gmg_pcmap *m);

#endif
