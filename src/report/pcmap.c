/* pcmap.c - see pcmap.h. */
#include "report/pcmap.h"

#include <stdlib.h>

static size_t first(uintptr_t pc, size_t cap)
{
    return (size_t)(((uint64_t)pc * 0x9E3779B97F4A7C15ull) >> 20) & (cap - 1);
}

int gmg_pcmap_get(const struct gmg_pcmap *m, uintptr_t pc, uint64_t *v)
{
    if (!m->cap || !pc)
        return 0;
    for (size_t k = first(pc, m->cap); m->pc[k]; k = (k + 1) & (m->cap - 1))
        if (m->pc[k] == pc) {
            *v = m->v[k];
            return 1;
        }
    return 0;
}

static void place(uintptr_t *pcs, uint64_t *vs, size_t cap, uintptr_t pc, uint64_t v)
{
    size_t k = first(pc, cap);
    while (pcs[k])
        k = (k + 1) & (cap - 1);
    pcs[k] = pc;
    vs[k] = v;
}

void gmg_pcmap_put(struct gmg_pcmap *m, uintptr_t pc, uint64_t v)
{
    if (!pc)
        return;
    if ((m->n + 1) * 2 > m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 1024;
        uintptr_t *pcs = calloc(cap, sizeof *pcs);
        uint64_t *vs = malloc(cap * sizeof *vs);
        if (!pcs || !vs) {
            free(pcs);
            free(vs);
            return;
        }
        for (size_t k = 0; k < m->cap; k++)
            if (m->pc[k])
                place(pcs, vs, cap, m->pc[k], m->v[k]);
        free(m->pc);
        free(m->v);
        m->pc = pcs;
        m->v = vs;
        m->cap = cap;
    }
    place(m->pc, m->v, m->cap, pc, v);
    m->n++;
}

void gmg_pcmap_free(struct gmg_pcmap *m)
{
    free(m->pc);
    free(m->v);
    m->pc = NULL;
    m->v = NULL;
    m->n = m->cap = 0;
}
