/* track.c - see track.h. */
#include "core/track.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define SHARDS 256

struct shard {
    pthread_mutex_t mu;
    struct gmg_alloc *head;
    size_t count;
} __attribute__((aligned(64)));

static struct shard shards[SHARDS] = {
    [0 ... SHARDS - 1] = { PTHREAD_MUTEX_INITIALIZER, NULL, 0 },
};

static pthread_mutex_t reclaimed_mu = PTHREAD_MUTEX_INITIALIZER;
static struct gmg_alloc **reclaimed;
static size_t reclaimed_n, reclaimed_cap;

static struct shard *shard_of(uint64_t value, uint64_t space)
{
    uint64_t h = (value ^ (space << 56)) * 0x9E3779B97F4A7C15ull;
    return &shards[h >> 56];
}

static struct gmg_key make_key(enum gmg_space space, uint64_t value)
{
    struct gmg_key k;
    memset(&k, 0, sizeof k);
    k.value = value;
    k.space = space;
    return k;
}

struct gmg_alloc *gmg_track_insert(struct gmg_alloc *a)
{
    struct shard *s = shard_of(a->key.value, a->key.space);
    struct gmg_alloc *old = NULL;
    pthread_mutex_lock(&s->mu);
    HASH_FIND(hh, s->head, &a->key, sizeof a->key, old);
    if (old) {
        HASH_DEL(s->head, old);
        __atomic_fetch_sub(&s->count, 1, __ATOMIC_RELAXED);
        if (old->freeing) {
            old->detached = 1; /* its freeing thread owns it */
            old = NULL;
        }
    }
    HASH_ADD(hh, s->head, key, sizeof a->key, a);
    __atomic_fetch_add(&s->count, 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&s->mu);
    return old;
}

struct gmg_alloc *gmg_track_remove(enum gmg_space space, uint64_t value)
{
    struct gmg_key k = make_key(space, value);
    struct shard *s = shard_of(value, space);
    struct gmg_alloc *a;
    pthread_mutex_lock(&s->mu);
    HASH_FIND(hh, s->head, &k, sizeof k, a);
    if (a) {
        HASH_DEL(s->head, a);
        __atomic_fetch_sub(&s->count, 1, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&s->mu);
    return a;
}

static struct gmg_alloc *find_locked(struct shard *s, enum gmg_space space, uint64_t value)
{
    struct gmg_key k = make_key(space, value);
    struct gmg_alloc *a;
    HASH_FIND(hh, s->head, &k, sizeof k, a);
    return a;
}

static void del_locked(struct shard *s, struct gmg_alloc *a)
{
    HASH_DEL(s->head, a);
    __atomic_fetch_sub(&s->count, 1, __ATOMIC_RELAXED);
}

struct gmg_alloc *gmg_track_free_begin(enum gmg_space space, uint64_t value, uint64_t *racing_seq)
{
    struct shard *s = shard_of(value, space);
    pthread_mutex_lock(&s->mu);
    struct gmg_alloc *a = find_locked(s, space, value);
    *racing_seq = a && a->freeing ? a->seq : 0;
    if (a && !a->freeing) {
        a->freeing = 1;
        a->freed_by_other = 0;
        a->torn_down = 0;
    } else {
        a = NULL;
    }
    pthread_mutex_unlock(&s->mu);
    return a;
}

struct gmg_alloc *gmg_track_free_end(struct gmg_alloc *a, int freed, int *reclaimed)
{
    struct shard *s = shard_of(a->key.value, a->key.space);
    struct gmg_alloc *drop = a;
    *reclaimed = 0;
    pthread_mutex_lock(&s->mu);
    if (a->detached) {
        /* already out of the table */
    } else if ((freed || a->freed_by_other) && a->key.space == GMG_SPACE_VMM && a->maps > 0) {
        a->freeing = 0; /* released while mapped: counts until the last unmap */
        a->released = 1;
        drop = NULL;
    } else if (freed || a->freed_by_other) {
        del_locked(s, a);
    } else if (a->torn_down) {
        del_locked(s, a); /* the teardown freed it, not the program */
        *reclaimed = 1;
    } else {
        a->freeing = 0; /* the driver kept it: live again */
        drop = NULL;
    }
    pthread_mutex_unlock(&s->mu);
    return drop;
}

struct gmg_alloc *gmg_track_free_racing(enum gmg_space space, uint64_t value, uint64_t seq)
{
    struct shard *s = shard_of(value, space);
    pthread_mutex_lock(&s->mu);
    struct gmg_alloc *a = find_locked(s, space, value);
    if (!a || a->seq != seq) {
        a = NULL; /* gone, or the key is a newer allocation's now */
    } else if (a->freeing) {
        a->freed_by_other = 1; /* the thread that began drops it */
        a = NULL;
    } else {
        del_locked(s, a); /* the first free failed and ours freed it */
    }
    pthread_mutex_unlock(&s->mu);
    return a;
}

/* Find a VMM handle's record under its shard's lock; `s` is set. */
static struct gmg_alloc *vmm_locked(uint64_t handle, struct shard **s)
{
    *s = shard_of(handle, GMG_SPACE_VMM);
    pthread_mutex_lock(&(*s)->mu);
    return find_locked(*s, GMG_SPACE_VMM, handle);
}

void gmg_track_vmm_mapped(uint64_t handle)
{
    struct shard *s;
    struct gmg_alloc *a = vmm_locked(handle, &s);
    if (a)
        a->maps++;
    pthread_mutex_unlock(&s->mu);
}

int gmg_track_vmm_is_mapped(uint64_t handle)
{
    struct shard *s;
    struct gmg_alloc *a = vmm_locked(handle, &s);
    int mapped = a && a->maps > 0;
    pthread_mutex_unlock(&s->mu);
    return mapped;
}

struct gmg_alloc *gmg_track_vmm_unmapped(uint64_t handle)
{
    struct shard *s;
    struct gmg_alloc *a = vmm_locked(handle, &s);
    if (a && a->maps > 0 && --a->maps == 0 && a->released && !a->freeing)
        del_locked(s, a);
    else
        a = NULL;
    pthread_mutex_unlock(&s->mu);
    return a;
}

struct gmg_alloc *gmg_track_vmm_released(uint64_t handle)
{
    struct shard *s;
    struct gmg_alloc *a = vmm_locked(handle, &s);
    if (a && !a->freeing && a->maps == 0) {
        del_locked(s, a); /* the last mapping went meanwhile */
    } else {
        if (a)
            a->released = 1;
        a = NULL;
    }
    pthread_mutex_unlock(&s->mu);
    return a;
}

int gmg_track_lookup(enum gmg_space space, uint64_t value, struct gmg_alloc *out)
{
    struct gmg_key k = make_key(space, value);
    struct shard *s = shard_of(value, space);
    struct gmg_alloc *a;
    pthread_mutex_lock(&s->mu);
    HASH_FIND(hh, s->head, &k, sizeof k, a);
    if (a && out)
        *out = *a;
    pthread_mutex_unlock(&s->mu);
    return a != NULL;
}

size_t gmg_track_remove_range(enum gmg_space space, uint64_t lo, uint64_t len,
                              void (*fn)(struct gmg_alloc *, void *), void *arg)
{
    size_t n = 0;
    for (int i = 0; i < SHARDS; i++) {
        struct shard *s = &shards[i];
        struct gmg_alloc *a, *tmp, *out = NULL;
        pthread_mutex_lock(&s->mu);
        HASH_ITER(hh, s->head, a, tmp) {
            if (a->key.space == space && a->key.value >= lo && a->key.value - lo < len && !a->freeing) {
                HASH_DEL(s->head, a);
                __atomic_fetch_sub(&s->count, 1, __ATOMIC_RELAXED);
                a->hh.next = out; /* chain removed records, call fn unlocked */
                out = a;
            }
        }
        pthread_mutex_unlock(&s->mu);
        while (out) {
            struct gmg_alloc *next = out->hh.next;
            fn(out, arg);
            out = next;
            n++;
        }
    }
    return n;
}

static int reclaimable(const struct gmg_alloc *a)
{
    switch (a->family) {
    case GMG_FAM_LINEAR: case GMG_FAM_PITCH: case GMG_FAM_MANAGED: case GMG_FAM_ASYNC:
    case GMG_FAM_ARRAY: case GMG_FAM_MIPMAP:
        return 1;
    default:
        return 0;
    }
}

static void reclaimed_push(struct gmg_alloc *a)
{
    pthread_mutex_lock(&reclaimed_mu);
    if (reclaimed_n == reclaimed_cap) {
        size_t cap = reclaimed_cap ? reclaimed_cap * 2 : 64;
        struct gmg_alloc **p = realloc(reclaimed, cap * sizeof *p);
        if (!p) {
            pthread_mutex_unlock(&reclaimed_mu);
            gmg_record_free(a);
            return;
        }
        reclaimed = p;
        reclaimed_cap = cap;
    }
    reclaimed[reclaimed_n++] = a;
    pthread_mutex_unlock(&reclaimed_mu);
}

void gmg_track_reclaimed_add(struct gmg_alloc *a)
{
    reclaimed_push(a);
}

size_t gmg_track_reclaim_ctx(uintptr_t ctx, void (*fn)(const struct gmg_alloc *, void *), void *arg)
{
    size_t n = 0;
    for (int i = 0; i < SHARDS; i++) {
        struct shard *s = &shards[i];
        struct gmg_alloc *a, *tmp, *out = NULL;
        pthread_mutex_lock(&s->mu);
        HASH_ITER(hh, s->head, a, tmp) {
            if (a->ctx == ctx && reclaimable(a) && a->freeing) {
                a->torn_down = 1; /* its freeing thread settles it */
            } else if (a->ctx == ctx && reclaimable(a)) {
                HASH_DEL(s->head, a);
                __atomic_fetch_sub(&s->count, 1, __ATOMIC_RELAXED);
                a->hh.next = out;
                out = a;
            }
        }
        pthread_mutex_unlock(&s->mu);
        while (out) {
            struct gmg_alloc *next = out->hh.next;
            if (fn)
                fn(out, arg);
            reclaimed_push(out);
            out = next;
            n++;
        }
    }
    return n;
}

struct gmg_alloc *gmg_track_snapshot(size_t *n)
{
    size_t cap = gmg_track_count() + 1024, k = 0;
    struct gmg_alloc *v = malloc(cap * sizeof *v);
    if (!v) {
        *n = 0;
        return NULL;
    }
    for (int i = 0; i < SHARDS; i++) {
        struct shard *s = &shards[i];
        pthread_mutex_lock(&s->mu);
        if (k + s->count > cap) {
            size_t ncap = (k + s->count) * 2;
            struct gmg_alloc *nv = realloc(v, ncap * sizeof *v);
            if (!nv) {
                pthread_mutex_unlock(&s->mu);
                break;
            }
            v = nv;
            cap = ncap;
        }
        for (struct gmg_alloc *a = s->head; a; a = a->hh.next)
            v[k++] = *a;
        pthread_mutex_unlock(&s->mu);
    }
    for (size_t i = 0; i < k; i++)
        memset(&v[i].hh, 0, sizeof v[i].hh);
    *n = k;
    return v;
}

struct gmg_alloc *gmg_track_reclaimed(size_t *n)
{
    pthread_mutex_lock(&reclaimed_mu);
    struct gmg_alloc *v = malloc((reclaimed_n + 1) * sizeof *v);
    size_t k = 0;
    if (v)
        for (; k < reclaimed_n; k++) {
            v[k] = *reclaimed[k];
            memset(&v[k].hh, 0, sizeof v[k].hh);
        }
    pthread_mutex_unlock(&reclaimed_mu);
    *n = k;
    return v;
}

size_t gmg_track_count(void)
{
    size_t n = 0;
    for (int i = 0; i < SHARDS; i++)
        n += __atomic_load_n(&shards[i].count, __ATOMIC_RELAXED);
    return n;
}

void gmg_track_atfork_child(void)
{
    /* Only the forking thread survives, and another thread may have been
     * inside any shard, half way through a uthash update. The child wants
     * an empty table anyway: it abandons the parent's records (copies the
     * child never touches, so they cost no memory) without walking them,
     * and starts every lock afresh. Nothing is locked across fork, so the
     * parent's fork never waits on the table. */
    for (int i = 0; i < SHARDS; i++) {
        pthread_mutex_init(&shards[i].mu, NULL);
        shards[i].head = NULL;
        shards[i].count = 0;
    }
    pthread_mutex_init(&reclaimed_mu, NULL);
    reclaimed = NULL;
    reclaimed_n = reclaimed_cap = 0;
}
