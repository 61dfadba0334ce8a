/*
 * sites.c - see sites.h.
 *
 * A site is found by a 64-bit hash of its frames as they read; stacks with
 * the same hash are compared frame by frame (the symbolizer caches each
 * address's names), so two sites never merge by a collision.
 */
#include "report/sites.h"

#include "base/log.h"
#include "core/stacks.h"
#include "report/pcmap.h"

#include <stdlib.h>
#include <string.h>

static uint64_t mix(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ c[i]) * 0x100000001b3ull;
    return h;
}

static uint64_t mix_str(uint64_t h, const char *s)
{
    if (s)
        h = mix(h, s, strlen(s));
    return mix(h, "\x1f", 1) ^ (s ? 0 : 0x5a5a);
}

/* The next frame of `s` at or after *i that a report shows, named; 0 at the end. */
static int next_frame(struct gmg_symbolizer *sym, const struct gmg_stack *s, uint32_t *i, struct gmg_frame_info *fi)
{
    for (; s && *i < s->depth; (*i)++)
        if (!gmg_stack_is_internal(s->frames[*i])) {
            gmg_symbolize(sym, s->frames[*i], gmg_stack_module(s, *i), fi);
            (*i)++;
            return 1;
        }
    return 0;
}

static int same_str(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

/* Do two frames read the same? */
static int same_frame(const struct gmg_frame_info *a, const struct gmg_frame_info *b)
{
    if (a->python != b->python || !same_str(a->function, b->function) || !same_str(a->file, b->file))
        return 0;
    if (a->python || a->file)
        return a->line == b->line && (a->python || same_str(a->module_path, b->module_path));
    return same_str(a->module_path, b->module_path) && a->offset == b->offset;
}

static uint64_t frame_hash(uint64_t h, const struct gmg_frame_info *f)
{
    h = mix(h, &f->python, sizeof f->python);
    h = mix_str(h, f->function);
    h = mix_str(h, f->file);
    if (f->python || f->file) {
        h = mix(h, &f->line, sizeof f->line);
        if (!f->python)
            h = mix_str(h, f->module_path);
    } else {
        h = mix_str(h, f->module_path);
        h = mix(h, &f->offset, sizeof f->offset);
    }
    return h;
}

/* A frame's digest: frame_hash of its names, once per address in a merge
 * (report/pcmap.h), since many stacks share their frames. */
static uint64_t frame_digest(struct gmg_symbolizer *sym, struct gmg_pcmap *c, const struct gmg_stack *s, uint32_t i)
{
    uintptr_t pc = s->frames[i];
    const struct gmg_module *mod = gmg_stack_module(s, i);
    uint64_t d;
    if (c && gmg_pcmap_get(c, pc, mod, &d))
        return d;
    struct gmg_frame_info fi;
    gmg_symbolize(sym, pc, mod, &fi);
    d = frame_hash(0xcbf29ce484222325ull, &fi);
    if (c)
        gmg_pcmap_put(c, pc, mod, d);
    return d;
}

/* The site's hash of a stack: its frames' digests, as they read; a stack
 * the depot cannot give back is a site of its own (its id in the hash). */
static uint64_t site_hash(struct gmg_symbolizer *sym, struct gmg_pcmap *c, uint32_t stack)
{
    const struct gmg_stack *s = gmg_stack_get(stack);
    uint64_t h = 0xcbf29ce484222325ull;
    if (!s)
        return mix(h ^ 0x9e3779b97f4a7c15ull, &stack, sizeof stack);
    for (uint32_t i = 0; i < s->depth; i++)
        if (!gmg_stack_is_internal(s->frames[i])) {
            uint64_t d = frame_digest(sym, c, s, i);
            h = mix(h, &d, sizeof d);
        }
    return h;
}

static int same_site(struct gmg_symbolizer *sym, uint32_t x, uint32_t y)
{
    if (x == y)
        return 1;
    const struct gmg_stack *a = gmg_stack_get(x), *b = gmg_stack_get(y);
    if (!a || !b)
        return 0;
    uint32_t i = 0, j = 0;
    for (;;) {
        struct gmg_frame_info fa, fb;
        int ha = next_frame(sym, a, &i, &fa), hb = next_frame(sym, b, &j, &fb);
        if (ha != hb)
            return 0;
        if (!ha)
            return 1;
        if (!same_frame(&fa, &fb))
            return 0;
    }
}

struct site { uint64_t hash; uint32_t stack; int used; };

/* The stack that stands for `stack`'s site in the open-addressed table v
 * (cap a power of two, never full): found, or `stack` itself, added. */
static uint32_t site_of(struct gmg_symbolizer *sym, struct gmg_pcmap *c, struct site *v, size_t cap, uint32_t stack,
                        int *added)
{
    uint64_t h = site_hash(sym, c, stack);
    for (size_t k = (size_t)(h >> 7) & (cap - 1);; k = (k + 1) & (cap - 1)) {
        if (!v[k].used) {
            v[k] = (struct site){ .hash = h, .stack = stack, .used = 1 };
            *added = 1;
            return stack;
        }
        if (v[k].hash == h && same_site(sym, v[k].stack, stack)) {
            *added = 0;
            return v[k].stack;
        }
    }
}

void gmg_sites_merge(struct gmg_symbolizer *sym, struct gmg_group *g, size_t *n)
{
    if (*n < 2)
        return;
    size_t cap = 64;
    while (cap < *n * 2)
        cap *= 2;
    struct site *v = calloc(cap, sizeof *v);
    if (!v)
        return; /* out of memory: grouped by stack, as recorded */
    int merged = 0;
    struct gmg_pcmap c = { 0 };
    for (size_t i = 0; i < *n; i++) {
        int added;
        uint32_t rep = site_of(sym, &c, v, cap, g[i].stack, &added);
        merged |= rep != g[i].stack;
        g[i].stack = rep;
    }
    free(v);
    gmg_pcmap_free(&c);
    if (!merged)
        return;
    qsort(g, *n, sizeof *g, gmg_group_by_key);
    size_t k = 0;
    for (size_t i = 0; i < *n; i++) {
        if (k && gmg_group_by_key(&g[k - 1], &g[i]) == 0) {
            g[k - 1].bytes += g[i].bytes;
            g[k - 1].count += g[i].count;
        } else {
            g[k++] = g[i];
        }
    }
    *n = k;
    qsort(g, k, sizeof *g, gmg_group_by_bytes);
}

int gmg_sites_unify(struct gmg_symbolizer *sym, struct gmg_group **lists, const size_t *counts, size_t nl,
                    uint32_t *stacks, size_t ns)
{
    size_t total = ns, cap = 64;
    for (size_t l = 0; l < nl; l++)
        total += counts[l];
    while (cap < total * 2)
        cap *= 2;
    struct site *v = calloc(cap, sizeof *v);
    if (!v)
        return -1;
    struct gmg_pcmap c = { 0 };
    int added;
    for (size_t l = 0; l < nl; l++)
        for (size_t i = 0; i < counts[l]; i++)
            lists[l][i].stack = site_of(sym, &c, v, cap, lists[l][i].stack, &added);
    for (size_t i = 0; i < ns; i++)
        stacks[i] = site_of(sym, &c, v, cap, stacks[i], &added);
    free(v);
    gmg_pcmap_free(&c);
    return 0;
}

#define EXPLAINED 4096

/* The sites explained: one set for the quota's refusals, one for the
 * driver's out of memory (a site may have one of each). */
static struct site explained[2][EXPLAINED];
static size_t nexplained[2];

int gmg_sites_first_refusal(uint32_t stack, int family, int driver)
{
    static int told;
    static uint64_t stackless[2]; /* families explained with no stack (GPUMEM_STACK_DEPTH=0) */
    int k = driver != 0;
    if (!stack) { /* no frames to tell sites apart: one per family, as the allocation path keys them */
        uint64_t bit = 1ull << ((unsigned)family & 63);
        int first = !(stackless[k] & bit);
        stackless[k] |= bit;
        return first;
    }
    if (nexplained[k] >= EXPLAINED / 2) { /* full: quiet rather than flood, as the allocation path's set */
        if (!told) {
            told = 1;
            gmg_error("%s at %d call sites were explained: those at further call sites are counted, not "
                      "explained (the report lists every live allocation)",
                      k ? "the driver's out-of-memory answers" : "the quota's refusals", EXPLAINED / 2);
        }
        return 0;
    }
    struct gmg_symbolizer *sym = gmg_symbolizer_get();
    int added = 0;
    site_of(sym, NULL, explained[k], EXPLAINED, stack, &added);
    gmg_symbolizer_put(sym);
    nexplained[k] += (size_t)added;
    return added;
}

/* Timeline marks, once per site and device: a site as above (with no
 * stack, its family), and the device. A site's stacks differ where the
 * compiler made several call addresses of one line, and after a library
 * was unloaded (the depot makes a stack captured then anew): the first
 * stack of a site on a device marks it, another of the same site on that
 * device does not, and one on another device does. */
#define MARKED 4096

struct mark {
    uint64_t hash;
    uint32_t stack;
    int device;
    int family; /* with no stack */
    int used;
};
static struct mark marked[2][MARKED];
static size_t nmarked[2];

int gmg_sites_first_mark(uint32_t stack, int family, int driver, int device)
{
    int k = driver != 0;
    if (nmarked[k] >= MARKED / 2)
        return 1; /* full: marked, and the timeline (which keeps far fewer) counts what it drops */
    struct gmg_symbolizer *sym = stack ? gmg_symbolizer_get() : NULL;
    uint64_t h = stack ? site_hash(sym, NULL, stack) : mix(0xcbf29ce484222325ull, &family, sizeof family);
    h = mix(h, &device, sizeof device);
    int first = 1;
    for (size_t i = (size_t)(h >> 7) & (MARKED - 1);; i = (i + 1) & (MARKED - 1)) {
        struct mark *m = &marked[k][i];
        if (!m->used) {
            *m = (struct mark){ .hash = h, .stack = stack, .device = device, .family = family, .used = 1 };
            nmarked[k]++;
            break;
        }
        if (m->hash == h && m->device == device && (m->stack == 0) == (stack == 0) &&
            (stack ? same_site(sym, m->stack, stack) : m->family == family)) {
            first = 0;
            break;
        }
    }
    if (sym)
        gmg_symbolizer_put(sym);
    return first;
}

void gmg_sites_atfork_child(void)
{
    /* the child's timeline starts empty (gmg_timeline_atfork_child): so do
     * its marks; the sites explained stay explained (the parent said so) */
    memset(marked, 0, sizeof marked);
    nmarked[0] = nmarked[1] = 0;
}
