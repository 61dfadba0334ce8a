/*
 * record.c - see record.h.
 *
 * The slab. Records come in two sizes (88 bytes, and 96 with the ninth
 * word), carved from 1 MiB chunks that are never given back. Each thread
 * keeps, per size, two magazines of up to BATCH free records (a loaded one
 * and a spare, as in Bonwick's magazines): an allocation pops from the
 * loaded one and a free pushes onto it, with no lock and no shared cache
 * line. Only when both are empty (allocating) or full (freeing) does a
 * thread take the size's pool lock, to trade a whole magazine with the
 * pool or carve a new one from the chunk. A record freed by another thread
 * than the one that made it goes to the freeing thread's magazine. A
 * thread's magazines go back to the pool when it exits (a TSD destructor).
 *
 * A free record keeps its links where its uthash handle was (offset 32):
 * the next record of its magazine, and for the first record of a magazine
 * in the pool, the next magazine and its count. Under AddressSanitizer the
 * rest of a free record is poisoned.
 */
#define _GNU_SOURCE
#include "core/record.h"

#include "core/quota.h"

#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#if defined(__SANITIZE_ADDRESS__)
#define GMG_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GMG_ASAN 1
#endif
#endif
#ifdef GMG_ASAN
#include <sanitizer/asan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#define BATCH 64
#define CHUNK_BYTES (1u << 20)
#define LINK_OFF offsetof(struct gmg_alloc, hh)

static const size_t class_size[2] = { sizeof(struct gmg_alloc), sizeof(struct gmg_alloc) + sizeof(uint64_t) };

struct link {             /* what a free record holds at LINK_OFF */
    char *next;           /* in its magazine                       */
    char *next_mag;       /* first record of a magazine in the pool */
    unsigned long n;      /* that magazine's count                 */
};
_Static_assert(offsetof(struct gmg_alloc, hh) + sizeof(struct link) <= sizeof(struct gmg_alloc), "links fit");

static struct link *link_of(char *r) { return (struct link *)(void *)(r + LINK_OFF); }

/* Poison a free record but its links. */
static void poison_free(char *r, size_t size)
{
    POISON(r, LINK_OFF);
    POISON(r + LINK_OFF + sizeof(struct link), size - LINK_OFF - sizeof(struct link));
    (void)r;
    (void)size;
}

struct mag {
    char *head;
    unsigned n;
};

struct tcache {
    struct mag loaded[2], spare[2];
    int registered;
};

static __thread struct tcache tl __attribute__((tls_model("initial-exec")));

struct pool {
    pthread_mutex_t mu;
    char *mags;           /* magazines given back, by their first record */
    char *bump, *end;     /* the chunk being carved                      */
} __attribute__((aligned(64)));

static struct pool pools[2] = { { PTHREAD_MUTEX_INITIALIZER, NULL, NULL, NULL },
                                { PTHREAD_MUTEX_INITIALIZER, NULL, NULL, NULL } };

static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static pthread_key_t exit_key;
static int have_key;

/* A magazine back to the pool (any count). */
static void give_back(int c, struct mag *m)
{
    if (!m->n)
        return;
    struct pool *p = &pools[c];
    pthread_mutex_lock(&p->mu);
    link_of(m->head)->next_mag = p->mags;
    link_of(m->head)->n = m->n;
    p->mags = m->head;
    pthread_mutex_unlock(&p->mu);
    m->head = NULL;
    m->n = 0;
}

static void thread_exit(void *unused)
{
    (void)unused;
    for (int c = 0; c < 2; c++) {
        give_back(c, &tl.loaded[c]);
        give_back(c, &tl.spare[c]);
    }
    tl.registered = 0;
}

static void make_key(void)
{
    have_key = pthread_key_create(&exit_key, thread_exit) == 0;
}

/* Load an empty magazine: a magazine from the pool, or BATCH records carved
 * from the chunk. */
static void refill(int c, struct mag *m)
{
    if (!tl.registered) {
        pthread_once(&key_once, make_key);
        if (have_key && pthread_setspecific(exit_key, (void *)1) == 0)
            tl.registered = 1;
    }
    struct pool *p = &pools[c];
    size_t size = class_size[c];
    pthread_mutex_lock(&p->mu);
    if (p->mags) {
        m->head = p->mags;
        m->n = (unsigned)link_of(m->head)->n;
        p->mags = link_of(m->head)->next_mag;
        pthread_mutex_unlock(&p->mu);
        return;
    }
    if ((size_t)(p->end - p->bump) < size * BATCH) {
        void *chunk = mmap(NULL, CHUNK_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (chunk == MAP_FAILED) {
            pthread_mutex_unlock(&p->mu);
            return;
        }
        p->bump = chunk;
        p->end = (char *)chunk + CHUNK_BYTES;
    }
    char *first = p->bump;
    p->bump += size * BATCH;
    pthread_mutex_unlock(&p->mu);
    for (unsigned i = 0; i < BATCH; i++) {
        char *r = first + i * size;
        link_of(r)->next = i + 1 < BATCH ? r + size : NULL;
        poison_free(r, size);
    }
    m->head = first;
    m->n = BATCH;
}

struct gmg_alloc *gmg_record_new(int aux)
{
    int c = aux ? 1 : 0;
    struct mag *m = &tl.loaded[c];
    if (!m->n) {
        if (tl.spare[c].n) {
            struct mag t = *m;
            *m = tl.spare[c];
            tl.spare[c] = t;
        } else {
            refill(c, m);
            if (!m->n)
                return NULL;
        }
    }
    char *r = m->head;
    size_t size = class_size[c];
    UNPOISON(r, size);
    m->head = link_of(r)->next;
    m->n--;
    memset(r, 0, size);
    struct gmg_alloc *a = (struct gmg_alloc *)(void *)r;
    a->has_aux = (uint8_t)c;
    return a;
}

void gmg_record_free(struct gmg_alloc *a)
{
    if (!a)
        return;
    int c = a->has_aux;
    struct mag *m = &tl.loaded[c];
    if (m->n >= BATCH) {
        if (tl.spare[c].n)
            give_back(c, &tl.spare[c]);
        tl.spare[c] = *m;
        m->head = NULL;
        m->n = 0;
    }
    char *r = (char *)a;
    link_of(r)->next = m->head;
    m->head = r;
    m->n++;
    poison_free(r, class_size[c]);
}

/* ---------------------------------------------------------- contexts */

/* Open addressing, context handle -> index; the table is replaced whole
 * when it grows, and a slot is written value first, so that a child forked
 * while another thread was adding one finds it whole or absent. */
struct ctxtab {
    size_t cap;           /* a power of two */
    size_t n;
    struct ctxslot { uintptr_t ctx; uint32_t index; } slots[];
};

static pthread_mutex_t ctx_mu = PTHREAD_MUTEX_INITIALIZER;
static struct ctxtab *ctxtab;
static uint32_t ctx_next = 1;

static size_t ctx_hash(uintptr_t ctx, size_t cap)
{
    return (size_t)(((uint64_t)ctx * 0x9E3779B97F4A7C15ull) >> 32) & (cap - 1);
}

static struct ctxslot *ctx_find(struct ctxtab *t, uintptr_t ctx)
{
    for (size_t i = ctx_hash(ctx, t->cap);; i = (i + 1) & (t->cap - 1))
        if (t->slots[i].ctx == ctx || t->slots[i].ctx == 0)
            return &t->slots[i];
}

uint32_t gmg_ctx_index(uintptr_t ctx, int add)
{
    if (!ctx)
        return 0;
    uint32_t index = 0;
    pthread_mutex_lock(&ctx_mu);
    struct ctxslot *s = ctxtab ? ctx_find(ctxtab, ctx) : NULL;
    if (s && s->ctx == ctx) {
        index = s->index;
    } else if (add && ctx_next != 0) {
        if (!ctxtab || (ctxtab->n + 1) * 2 > ctxtab->cap) {
            size_t cap = ctxtab ? ctxtab->cap * 2 : 64;
            struct ctxtab *t = calloc(1, sizeof *t + cap * sizeof t->slots[0]);
            if (t) {
                t->cap = cap;
                for (size_t i = 0; ctxtab && i < ctxtab->cap; i++)
                    if (ctxtab->slots[i].ctx) {
                        *ctx_find(t, ctxtab->slots[i].ctx) = ctxtab->slots[i];
                        t->n++;
                    }
                struct ctxtab *old = ctxtab;
                __atomic_store_n(&ctxtab, t, __ATOMIC_RELEASE);
                free(old);
            }
        }
        if (ctxtab && (ctxtab->n + 1) * 2 <= ctxtab->cap) {
            s = ctx_find(ctxtab, ctx);
            s->index = ctx_next++;
            __atomic_store_n(&s->ctx, ctx, __ATOMIC_RELEASE);
            ctxtab->n++;
            index = s->index;
        }
    }
    pthread_mutex_unlock(&ctx_mu);
    return index;
}

/* ---------------------------------------------------------- counters */

static uint64_t unknown_frees;
static uint64_t made_nodev;   /* records with no device the quota knows */

static const char *const family_names[GMG_FAM_COUNT] = {
    [GMG_FAM_LINEAR] = "cuMemAlloc",
    [GMG_FAM_PITCH] = "cuMemAllocPitch",
    [GMG_FAM_MANAGED] = "cuMemAllocManaged",
    [GMG_FAM_ASYNC] = "cuMemAllocAsync",
    [GMG_FAM_VMM] = "cuMemCreate",
    [GMG_FAM_VMM_MAP] = "cuMemMap",
    [GMG_FAM_VA] = "cuMemAddressReserve",
    [GMG_FAM_ARRAY] = "cuArrayCreate",
    [GMG_FAM_MIPMAP] = "cuMipmappedArrayCreate",
    [GMG_FAM_HOST] = "cuMemHostAlloc",
    [GMG_FAM_HOST_REGISTER] = "cuMemHostRegister",
    [GMG_FAM_IPC] = "cuIpcOpenMemHandle",
};

const char *gmg_family_name(int family)
{
    return family >= 0 && family < GMG_FAM_COUNT ? family_names[family] : "?";
}

void gmg_record_made(int dev)
{
    if (dev >= 0 && dev < GMG_MAX_DEVICES)
        gmg_quota_count_alloc(dev);
    else
        __atomic_fetch_add(&made_nodev, 1, __ATOMIC_RELAXED);
}

uint64_t gmg_record_total(void)
{
    uint64_t n = __atomic_load_n(&made_nodev, __ATOMIC_RELAXED);
    for (int d = 0; d < GMG_MAX_DEVICES; d++)
        n += gmg_quota_allocs(d);
    return n;
}

void gmg_record_unknown_free(void) { __atomic_fetch_add(&unknown_frees, 1, __ATOMIC_RELAXED); }
uint64_t gmg_record_unknown_frees(void) { return __atomic_load_n(&unknown_frees, __ATOMIC_RELAXED); }

void gmg_record_atfork_child(void)
{
    unknown_frees = 0;
    made_nodev = 0;
    /* Another thread may have been inside a pool: its magazines and the
     * chunk in carving are abandoned (pages the child never touches cost
     * it nothing). This thread's own magazines are whole: it was not in
     * here when it forked. */
    for (int c = 0; c < 2; c++) {
        pthread_mutex_init(&pools[c].mu, NULL);
        pools[c].mags = NULL;
        pools[c].bump = pools[c].end = NULL;
    }
    pthread_mutex_init(&ctx_mu, NULL);
}
