/* pcmap.c - see pcmap.h. */
#include "report/pcmap.h"

#include <stdlib.h>

static size_t first(uintptr_t pc, const void *mod, size_t cap)
{
    uint64_t k = (uint64_t)pc ^ ((uint64_t)(uintptr_t)mod * 0xC2B2AE3D27D4EB4Full);
    return (size_t)((k * 0x9E3779B97F4A7C15ull) >> 20) & (cap - 1);
}

int gmg_pcmap_get(const struct gmg_pcmap *m, uintptr_t pc, const void *mod, uint64_t *v)
{
    if (!m->cap || !pc)
        return 0;
    for (size_t k = first(pc, mod, m->cap); m->pc[k]; k = (k + 1) & (m->cap - 1))
        if (m->pc[k] == pc && m->mod[k] == mod) {
            *v = m->v[k];
            return 1;
        }
    return 0;
}

static void place(struct gmg_pcmap *m, uintptr_t pc, const void *mod, uint64_t v)
{
    size_t k = first(pc, mod, m->cap);
    while (m->pc[k])
        k = (k + 1) & (m->cap - 1);
    m->pc[k] = pc;
    m->mod[k] = mod;
    m->v[k] = v;
}

void gmg_pcmap_put(struct gmg_pcmap *m, uintptr_t pc, const void *mod, uint64_t v)
{
    if (!pc)
        return;
    if ((m->n + 1) * 2 > m->cap) {
        struct gmg_pcmap g = { .cap = m->cap ? m->cap * 2 : 1024 };
        g.pc = calloc(g.cap, sizeof *g.pc);
        g.mod = malloc(g.cap * sizeof *g.mod);
        g.v = malloc(g.cap * sizeof *g.v);
        if (!g.pc || !g.mod || !g.v) {
            gmg_pcmap_free(&g);
            return;
        }
        for (size_t k = 0; k < m->cap; k++)
            if (m->pc[k])
                place(&g, m->pc[k], m->mod[k], m->v[k]);
        g.n = m->n;
        gmg_pcmap_free(m);
        *m = g;
    }
    place(m, pc, mod, v);
    m->n++;
}

void gmg_pcmap_free(struct gmg_pcmap *m)
{
    free(m->pc);
    free(m->mod);
    free(m->v);
    m->pc = NULL;
    m->mod = NULL;
    m->v = NULL;
    m->n = m->cap = 0;
}
