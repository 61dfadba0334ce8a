/*
 * record.c - see record.h.
 *
 * Pools. Records come in two sizes (88 bytes, and 96 with the ninth word),
 * carved from chunks that grow from 4 KiB to 256 KiB and are never given
 * back, and reused through one free list per size. A pool is not locked:
 * each shard of the table has its own, used under the shard's lock, so a
 * record is made and dropped within the lock its table operation takes
 * anyway (no lock, atomic or shared cache line of its own). The exception
 * is a free settled without the lock (track.c, flights): its record goes to
 * the thread's spare or the pool's `returned` stack (below).
 *
 * A free record keeps its link where its uthash handle was (offset 32);
 * under AddressSanitizer the rest of it is poisoned.
 */
#define _GNU_SOURCE
#include "core/record.h"

#include "core/quota.h"

#include "base/log.h"

#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

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

#define FIRST_CHUNK (4u << 10)
#define LAST_CHUNK (256u << 10)
#define LINK_OFF offsetof(struct gmg_alloc, hh)

static const size_t class_size[2] = { sizeof(struct gmg_alloc), sizeof(struct gmg_alloc) + sizeof(uint64_t) };

static char **link_of(char *r) { return (char **)(void *)(r + LINK_OFF); }

/*
 * Spares. A free that settles without the shard's lock (track.c, flights)
 * owns its record and hands it back here: it becomes the calling thread's
 * spare of its size, which the thread's next get takes, whatever the
 * shard (an allocation and its free on one thread reuse one record and
 * take no lock, atomic or shared line for it). A second record goes on its
 * pool's `returned` stack. A thread that exits gives its spares to
 * `orphans`, which any get takes when its pool has nothing else.
 */
static __thread char *tl_spare[2] __attribute__((tls_model("initial-exec")));
static __thread int tl_spare_registered __attribute__((tls_model("initial-exec")));
static char *orphans[2];
static pthread_once_t spare_once = PTHREAD_ONCE_INIT;
static pthread_key_t spare_key;
static int have_spare_key;

/* Push a record on a lock-free stack (its link where the uthash handle
 * was, as on a free list; the rest poisoned under ASan). */
static void push(char **stack, char *r, int c)
{
    /* poisoned before it is published: a get may take it at once */
    POISON(r, LINK_OFF);
    POISON(r + LINK_OFF + sizeof(char *), class_size[c] - LINK_OFF - sizeof(char *));
    char *top = __atomic_load_n(stack, __ATOMIC_RELAXED);
    do
        *link_of(r) = top;
    while (!__atomic_compare_exchange_n(stack, &top, r, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED));
}

static void spares_exit(void *unused)
{
    (void)unused;
    for (int c = 0; c < 2; c++) {
        char *r = tl_spare[c];
        tl_spare[c] = NULL;
        if (r) {
            UNPOISON(r, class_size[c]);
            push(&orphans[c], r, c);
        }
    }
}

static void spare_key_make(void)
{
    have_spare_key = pthread_key_create(&spare_key, spares_exit) == 0;
}

void gmg_pool_give_back(struct gmg_pool *p, struct gmg_alloc *a)
{
    int c = a->has_aux;
    char *r = (char *)a;
    if (__builtin_expect(!tl_spare_registered, 0)) {
        /* once per thread: its spares must not be lost when it exits */
        tl_spare_registered = 1;
        pthread_once(&spare_once, spare_key_make);
        if (have_spare_key)
            pthread_setspecific(spare_key, &spare_key); /* any non-NULL value runs the destructor */
    }
    if (!tl_spare[c] && have_spare_key) {
        tl_spare[c] = r;
        POISON(r, class_size[c]);
        return;
    }
    push(&p->returned[c], r, c);
}

/* The list a stack held, taken whole (NULL if empty). */
static char *take_all(char **stack)
{
    if (!__atomic_load_n(stack, __ATOMIC_RELAXED))
        return NULL;
    return __atomic_exchange_n(stack, NULL, __ATOMIC_ACQUIRE);
}

struct gmg_alloc *gmg_pool_get(struct gmg_pool *p, int aux)
{
    int c = aux ? 1 : 0;
    size_t size = class_size[c];
    char *r = tl_spare[c];
    if (r) {
        tl_spare[c] = NULL;
        UNPOISON(r, size);
        struct gmg_alloc *a = (struct gmg_alloc *)(void *)r;
        a->has_aux = (uint8_t)c;
        return a;
    }
    r = p->free[c];
    if (!r && (r = take_all(&p->returned[c])) == NULL)
        r = take_all(&orphans[c]);
    if (r) {
        UNPOISON(r, size);
        p->free[c] = *link_of(r);
    } else {
        if ((size_t)(p->end - p->bump) < size) {
            size_t n = p->next_chunk ? p->next_chunk : FIRST_CHUNK;
            char *chunk = malloc(n);
            if (!chunk && n > FIRST_CHUNK) /* short of memory: a small chunk may still be had */
                chunk = malloc(n = FIRST_CHUNK);
            if (!chunk)
                return NULL;
            p->bump = chunk;
            p->end = chunk + n;
            p->next_chunk = n < LAST_CHUNK ? n * 2 : n;
        }
        r = p->bump;
        p->bump += size;
    }
    struct gmg_alloc *a = (struct gmg_alloc *)(void *)r;
    a->has_aux = (uint8_t)c;
    return a;
}

void gmg_pool_put(struct gmg_pool *p, struct gmg_alloc *a)
{
    int c = a->has_aux;
    char *r = (char *)a;
    *link_of(r) = p->free[c];
    p->free[c] = r;
    POISON(r, LINK_OFF);
    POISON(r + LINK_OFF + sizeof(char *), class_size[c] - LINK_OFF - sizeof(char *));
}

void gmg_gone_of(const struct gmg_alloc *a, struct gmg_gone *g)
{
    g->value = a->value;
    g->size = a->size;
    g->aux = a->has_aux ? a->aux[0] : 0;
    g->stack = a->stack;
    g->seq = a->seq;
    g->device = a->device;
    g->family = a->family;
    g->space = a->space;
    g->counted = a->counted;
}

/* ---------------------------------------------------------- contexts */

/* Open addressing, context handle -> index; the table is replaced whole
 * when it grows, and a slot is written value first, so that a child forked
 * while another thread was adding one finds it whole or absent.
 *
 * The first table is static: a program's first 32 contexts need no memory,
 * and out of memory later only stops the table growing. It then fills
 * up to one free slot (63 contexts); past that, a context gets index 0 and its records are
 * not reclaimed when it is torn down (they stay counted: never too few),
 * which the guard says once. */
struct ctxslot { uintptr_t ctx; uint32_t index; };
struct ctxtab {
    size_t cap;           /* a power of two */
    size_t n;
    struct ctxslot *slots;
};

#define CTX_FIRST 64
static struct ctxslot ctx_first_slots[CTX_FIRST];
static struct ctxtab ctx_first = { CTX_FIRST, 0, ctx_first_slots };
static pthread_mutex_t ctx_mu = PTHREAD_MUTEX_INITIALIZER;
static struct ctxtab *ctxtab = &ctx_first;
static uint32_t ctx_next = 1;

static size_t ctx_hash(uintptr_t ctx, size_t cap)
{
    return (size_t)(((uint64_t)ctx * 0x9E3779B97F4A7C15ull) >> 32) & (cap - 1);
}

/* The slot of ctx, or the free slot where it would go; NULL only if the
 * table were full, which the add never lets it be. */
static struct ctxslot *ctx_find(struct ctxtab *t, uintptr_t ctx)
{
    size_t i = ctx_hash(ctx, t->cap);
    for (size_t probes = 0; probes < t->cap; probes++, i = (i + 1) & (t->cap - 1))
        if (t->slots[i].ctx == ctx || t->slots[i].ctx == 0)
            return &t->slots[i];
    return NULL;
}

/* A table twice the size, with every slot of the old one; NULL when out of
 * memory. One allocation, slots after the header. */
static struct ctxtab *ctx_grown(const struct ctxtab *old)
{
    size_t cap = old->cap * 2;
    struct ctxtab *t = calloc(1, sizeof *t + cap * sizeof(struct ctxslot));
    if (!t)
        return NULL;
    t->cap = cap;
    t->slots = (struct ctxslot *)(t + 1);
    for (size_t i = 0; i < old->cap; i++)
        if (old->slots[i].ctx) {
            *ctx_find(t, old->slots[i].ctx) = old->slots[i];
            t->n++;
        }
    return t;
}

static int ctx_unindexed_said;
static uint64_t ctx_unindexed_n;

uint64_t gmg_ctx_unindexed(void)
{
    return __atomic_load_n(&ctx_unindexed_n, __ATOMIC_RELAXED);
}

static __attribute__((noinline, cold)) void ctx_unindexed_once(uintptr_t ctx, int wrapped)
{
    __atomic_fetch_add(&ctx_unindexed_n, 1, __ATOMIC_RELAXED);
    if (!__atomic_exchange_n(&ctx_unindexed_said, 1, __ATOMIC_RELAXED))
        gmg_error("%s: allocations in context %#lx (and any later new context) stay counted against the quota "
                  "when the context is destroyed",
                  wrapped ? "2^32 contexts indexed" : "out of memory for the guard's context table",
                  (unsigned long)ctx);
}

uint32_t gmg_ctx_index(uintptr_t ctx, int add)
{
    if (!ctx)
        return 0;
    uint32_t index = 0;
    int unindexed = 0;
    pthread_mutex_lock(&ctx_mu);
    struct ctxslot *s = ctx_find(ctxtab, ctx);
    if (s && s->ctx == ctx) {
        index = s->index;
    } else if (add) {
        if ((ctxtab->n + 1) * 2 > ctxtab->cap) {
            struct ctxtab *t = ctx_grown(ctxtab), *old = ctxtab;
            if (t) {
                __atomic_store_n(&ctxtab, t, __ATOMIC_RELEASE);
                if (old != &ctx_first)
                    free(old);
            }
        }
        s = ctxtab->n + 2 <= ctxtab->cap && ctx_next != 0 ? ctx_find(ctxtab, ctx) : NULL;
        if (s) { /* one slot stays free; n first, so that a child forked in between counts it */
            ctxtab->n++;
            s->index = ctx_next++;
            __atomic_store_n(&s->ctx, ctx, __ATOMIC_RELEASE);
            index = s->index;
        } else {
            unindexed = ctx_next == 0 ? 2 : 1;
        }
    }
    pthread_mutex_unlock(&ctx_mu);
    if (unindexed)
        ctx_unindexed_once(ctx, unindexed == 2);
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
    [GMG_FAM_GRAPH] = "cuGraphAddMemAllocNode",
    [GMG_FAM_VMM_HOST] = "cuMemCreate",
    [GMG_FAM_POOL_IMPORT] = "cuMemPoolImportPointer",
    [GMG_FAM_NVTX_REGION] = "nvtxMemRegionsRegister",
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
    return __atomic_load_n(&made_nodev, __ATOMIC_RELAXED) + gmg_quota_allocs(-1);
}

void gmg_record_unknown_free(void) { __atomic_fetch_add(&unknown_frees, 1, __ATOMIC_RELAXED); }
uint64_t gmg_record_unknown_frees(void) { return __atomic_load_n(&unknown_frees, __ATOMIC_RELAXED); }

void gmg_record_atfork_child(void)
{
    unknown_frees = 0;
    made_nodev = 0;
    orphans[0] = orphans[1] = NULL; /* the parent's; this thread's spares stay its own */
    pthread_mutex_init(&ctx_mu, NULL);
    ctx_unindexed_said = 0;
    ctx_unindexed_n = 0;
}
