/* heaps.c - see heaps.h. A small array of heaps, grown under its lock; a
 * handle is a slot's number + 1 and a generation, so that a stale or
 * garbage handle is told from a live one without following a pointer. */
#define _GNU_SOURCE
#include "core/heaps.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct slot {
    struct gmg_heap_info h;
    uint32_t gen;             /* odd while live */
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct slot *slots;
static uint32_t nslots, cap;
static unsigned live;

#define MAX_SLOTS (1u << 20)

static struct slot *find(uintptr_t handle)
{
    uint32_t i = (uint32_t)(handle & 0xfffff), gen = (uint32_t)(handle >> 20);
    if (!i || i > nslots || !(gen & 1))
        return NULL;
    struct slot *s = &slots[i - 1];
    return s->gen == gen ? s : NULL;
}

uintptr_t gmg_heap_add(const struct gmg_heap_info *h)
{
    pthread_mutex_lock(&mu);
    uint32_t i = 0;
    while (i < nslots && (slots[i].gen & 1))
        i++;
    if (i == nslots) {
        if (nslots == cap) {
            uint32_t c = cap ? cap * 2 : 16;
            struct slot *v = c <= MAX_SLOTS ? realloc(slots, c * sizeof *v) : NULL;
            if (!v) {
                pthread_mutex_unlock(&mu);
                return 0;
            }
            memset(v + cap, 0, (c - cap) * sizeof *v);
            slots = v;
            cap = c;
        }
        nslots++;
    }
    slots[i].h = *h;
    slots[i].gen = (slots[i].gen + 1) & 0xfff; /* odd: live; 12 bits, within a 32-bit handle */
    if (!(slots[i].gen & 1))
        slots[i].gen = 1;
    uintptr_t handle = (uintptr_t)slots[i].gen << 20 | (i + 1);
    __atomic_add_fetch(&live, 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&mu);
    return handle;
}

int gmg_heap_get(uintptr_t handle, struct gmg_heap_info *out)
{
    pthread_mutex_lock(&mu);
    struct slot *s = find(handle);
    if (s)
        *out = s->h;
    pthread_mutex_unlock(&mu);
    return s != NULL;
}

int gmg_heap_remove(uintptr_t handle)
{
    pthread_mutex_lock(&mu);
    struct slot *s = find(handle);
    if (s) {
        s->gen++; /* even: free */
        __atomic_sub_fetch(&live, 1, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&mu);
    return s != NULL;
}

void gmg_heap_regions_add(uintptr_t handle, uint64_t ptr, int64_t delta)
{
    pthread_mutex_lock(&mu);
    struct slot *s = handle ? find(handle) : NULL;
    for (uint32_t i = 0; !handle && !s && i < nslots; i++)
        if ((slots[i].gen & 1) && ptr - slots[i].h.lo < slots[i].h.size)
            s = &slots[i];
    if (s) {
        if (delta < 0 && (uint64_t)-delta > s->h.region_bytes)
            s->h.region_bytes = 0;
        else
            s->h.region_bytes += (uint64_t)delta;
    }
    pthread_mutex_unlock(&mu);
}

void gmg_heap_regions_clear(uintptr_t handle)
{
    pthread_mutex_lock(&mu);
    for (uint32_t i = 0; i < nslots; i++)
        if ((slots[i].gen & 1) && (!handle || &slots[i] == find(handle)))
            slots[i].h.region_bytes = 0;
    pthread_mutex_unlock(&mu);
}

unsigned gmg_heaps_live(void)
{
    return __atomic_load_n(&live, __ATOMIC_RELAXED);
}

void gmg_heaps_each(void (*fn)(const struct gmg_heap_info *, void *), void *arg)
{
    pthread_mutex_lock(&mu);
    for (uint32_t i = 0; i < nslots; i++)
        if (slots[i].gen & 1)
            fn(&slots[i].h, arg);
    pthread_mutex_unlock(&mu);
}

/* Names are few (one per heap a program names) and kept for ever, so that
 * a report holding one never sees it freed. Equal names share a copy. */
struct name {
    struct name *next;
    char s[];
};
static struct name *names;

const char *gmg_heap_name(const char *s, unsigned maxlen)
{
    size_t n = strnlen(s, maxlen);
    pthread_mutex_lock(&mu);
    for (struct name *p = names; p; p = p->next)
        if (strlen(p->s) == n && memcmp(p->s, s, n) == 0) {
            pthread_mutex_unlock(&mu);
            return p->s;
        }
    struct name *p = malloc(sizeof *p + n + 1);
    if (p) {
        memcpy(p->s, s, n);
        p->s[n] = 0;
        p->next = names;
        names = p;
    }
    pthread_mutex_unlock(&mu);
    return p ? p->s : NULL;
}

void gmg_heaps_atfork_child(void)
{
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    mu = fresh;
    /* the child's table is empty (core/track.h): so are its heaps */
    for (uint32_t i = 0; i < nslots; i++)
        if (slots[i].gen & 1)
            slots[i].gen++;
    live = 0;
}
