/*
 * stacks.c - see stacks.h.
 *
 * The depot is a fixed array of buckets, each a chain that only grows at
 * its head: a lookup reads it without a lock, and only a new stack takes
 * the bucket's small lock (allocated before, linked under it, published
 * whole). An id -> stack index made of fixed chunks lets readers never see
 * it move.
 *
 * Live totals: per stack id, the bytes and count of the live allocations
 * made from it, per (device, family); an inline slot and a chain for the
 * rare stack that allocates on several devices or through several APIs.
 * They sit in their own chunks, apart from the stacks, so that a forked
 * child drops them (its table starts empty) without writing to a page of
 * the depot.
 */
#define _GNU_SOURCE
#include "core/stacks.h"
#include "core/walkstack.h"

#include "core/livetotals.h"
#include "core/pyframes.h"
#include "core/unwind.h"
#include "core/walkgate.h"

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#define BUCKETS 4096
#define LOCKS 64
#define CHUNK_BITS 12
#define CHUNKS 4096 /* up to 16M distinct stacks */

#define MAX_MODULES 4096

int gmg_stack_depth = 32;
/* GMG_UNWIND_CHECK=1 (tests): every capture also walks its stack with
 * both walkers (core/unwind.c's and libunwind's) and compares them; a
 * difference is printed, and the counts at exit. */
static int check_mode;
/* GMG_STACK_STATS=1 (tests): captures counted, and those given the
 * thread's last capture again (struct last_capture), printed at exit. */
static int stats_mode;
static unsigned long stat_made, stat_given; /* ids made from the frames; ids given again */
static struct gmg_module modules[MAX_MODULES]; /* [0] unused: "unknown" */
static unsigned nmodules = 1;
static pthread_mutex_t modules_mu = PTHREAD_MUTEX_INITIALIZER;
static struct gmg_stack *buckets[BUCKETS];
static pthread_mutex_t locks[LOCKS] = { [0 ... LOCKS - 1] = PTHREAD_MUTEX_INITIALIZER };
static struct gmg_stack **chunks[CHUNKS];
static uint32_t next_id = 1;
static uintptr_t self_lo, self_hi;

static int find_self(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    if (info->dlpi_addr != (uintptr_t)arg)
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            self_lo = info->dlpi_addr + ph->p_vaddr;
            self_hi = self_lo + ph->p_memsz;
            return 1;
        }
    }
    return 0;
}

void gmg_stacks_set_depth(int depth)
{
    __atomic_store_n(&gmg_stack_depth, depth < 0 ? 0 : depth > GMG_MAX_STACK_DEPTH ? GMG_MAX_STACK_DEPTH : depth,
                     __ATOMIC_RELAXED);
    const char *chk = getenv("GMG_UNWIND_CHECK");
    check_mode = chk && chk[0] == '1';
    const char *stats = getenv("GMG_STACK_STATS");
    stats_mode = stats && stats[0] == '1';
    gmg_py_set_stats(stats_mode);
    Dl_info di;
    if (dladdr((void *)gmg_stacks_set_depth, &di) && di.dli_fbase)
        dl_iterate_phdr(find_self, di.dli_fbase);
}

int gmg_stack_is_internal(uintptr_t pc)
{
    return pc >= self_lo && pc < self_hi;
}

/* Four lanes, each a chain of its own: the frames of one stack are hashed
 * in about a quarter of the time one chain takes. */
#define MIX(h, w) ((h) = (((h) ^ (w)) * 0x100000001b3ull), (h) ^= (h) >> 29)
static uint64_t hash_frames(const uintptr_t *f, uint32_t n)
{
    uint64_t a = 0xcbf29ce484222325ull ^ n, b = 0x84222325cbf29ce4ull, c = 0x9e3779b97f4a7c15ull,
             d = 0xc2b2ae3d27d4eb4full;
    uint32_t i = 0;
    for (; i + 4 <= n; i += 4) {
        MIX(a, f[i]);
        MIX(b, f[i + 1]);
        MIX(c, f[i + 2]);
        MIX(d, f[i + 3]);
    }
    for (; i < n; i++)
        MIX(a, f[i]);
    uint64_t x = a ^ (b * 0xff51afd7ed558ccdull) ^ (c * 0xc4ceb9fe1a85ec53ull) ^ (d * 0x9e3779b97f4a7c15ull);
    return x ^ (x >> 31);
}

static struct gmg_stack *find(struct gmg_stack *s, uint64_t h, const uintptr_t *f, uint32_t n)
{
    for (; s; s = s->next)
        if (s->hash == h && s->depth == n && memcmp(s->frames, f, n * sizeof *f) == 0)
            return s;
    return NULL;
}

/* The number of the module holding pc, recorded on first sight; 0 when
 * unknown. _dl_find_object (glibc 2.35+) is lock-free and allocation-free;
 * only a module seen for the first time takes modules_mu and copies its
 * path. */
#ifdef DLFO_STRUCT_HAS_EH_DBASE
/* The object found, and its build ID once read (read only when needed). */
struct found {
    struct dl_find_object fo;
    const char *name;
    uintptr_t bias;
    int id_read;
    size_t idlen;
    uint8_t id[GMG_BUILD_ID_MAX];
};

static void read_id(struct found *f)
{
    if (!f->id_read)
        f->idlen = gmg_build_id((uintptr_t)f->fo.dlfo_map_start, (uintptr_t)f->fo.dlfo_map_end, f->bias, f->id);
    f->id_read = 1;
}

/* Is m the object found? Its link_map, extent and path, and its build ID
 * (a rebuilt library may have been loaded again from the same path, at the
 * same addresses; whether one was unloaded meanwhile cannot be known here
 * for sure: a dlclose that does not come through the guard's is seen late).
 * Read once per call, only when the rest matches: a new stack's frames. */
static int same_module(const struct gmg_module *m, struct found *f)
{
    if (m->map != f->fo.dlfo_link_map || m->start != (uintptr_t)f->fo.dlfo_map_start ||
        m->end != (uintptr_t)f->fo.dlfo_map_end || strcmp(m->path, f->name) != 0)
        return 0;
    read_id(f);
    return gmg_module_build_is(m, f->id, f->idlen);
}
#endif

static uint16_t module_of(uintptr_t pc)
{
#ifdef DLFO_STRUCT_HAS_EH_DBASE
    struct found f;
    if (_dl_find_object((void *)(pc - 1), &f.fo) != 0)
        return 0;
    /* glibc reuses both a closed library's link_map and its addresses for
     * the next one: the path and extent tell them apart, and the build ID
     * a library rebuilt and loaded again from the same path (the frame's
     * code keeps the object mapped while it is read) */
    const struct link_map *lm = f.fo.dlfo_link_map;
    f.name = lm && lm->l_name ? lm->l_name : "";
    f.bias = lm ? (uintptr_t)lm->l_addr : 0;
    f.id_read = 0;
    unsigned n = __atomic_load_n(&nmodules, __ATOMIC_ACQUIRE);
    for (unsigned i = 1; i < n; i++)
        if (same_module(&modules[i], &f))
            return (uint16_t)i;
    char *path = strdup(f.name);
    read_id(&f);
    uint16_t id = 0;
    pthread_mutex_lock(&modules_mu);
    for (unsigned i = 1; i < nmodules && !id; i++)
        if (same_module(&modules[i], &f))
            id = (uint16_t)i;
    if (!id && path && nmodules < MAX_MODULES) {
        struct gmg_module *m = &modules[nmodules];
        m->map = f.fo.dlfo_link_map;
        m->start = (uintptr_t)f.fo.dlfo_map_start;
        m->end = (uintptr_t)f.fo.dlfo_map_end;
        m->bias = f.bias;
        m->path = path;
        memcpy(m->build_id, f.id, f.idlen);
        m->build_id_len = (uint8_t)f.idlen;
        path = NULL;
        id = (uint16_t)nmodules;
        __atomic_store_n(&nmodules, nmodules + 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&modules_mu);
    free(path);
    return id;
#else
    (void)pc;
    return 0;
#endif
}

const struct gmg_module *gmg_stack_module(const struct gmg_stack *s, uint32_t i)
{
    if (!s || i >= s->depth)
        return NULL;
    const uint16_t *mods = (const uint16_t *)(s->frames + s->depth);
    return mods[i] ? &modules[mods[i]] : NULL;
}

/* Stacks that could not be kept (out of memory, or the depot full): their
 * allocations get stack 0, and reports say they are incomplete. */
static uint64_t stacks_lost;

static __attribute__((noinline, cold)) uint32_t lost_one(void)
{
    __atomic_fetch_add(&stacks_lost, 1, __ATOMIC_RELAXED);
    return 0;
}

uint64_t gmg_stack_lost(void)
{
    return __atomic_load_n(&stacks_lost, __ATOMIC_RELAXED);
}

/*
 * The calling thread's last stack and its id. A loop that allocates from one
 * call site (a training step, a pool refilling) interns the same frames over
 * and over: one comparison with the last stack costs less than hashing them
 * and comparing them with the bucket's (docs/benchmarks.md). An id names its
 * frames for the life of the process (and across fork), so frames and the
 * unloading generation are all a hit needs. `id` is 0 while the memo is
 * rewritten: a signal handler that interns a stack on this thread meanwhile
 * finds no hit, and one that rewrites it under a comparison is caught by
 * the id read again after it.
 */
#define MEMO_MAX 64 /* frames; a deeper stack is interned without the memo */
struct memo {
    uint32_t id, depth;
    unsigned gen;
    uintptr_t frames[MEMO_MAX];
};
static __thread struct memo *tl_memo __attribute__((tls_model("initial-exec")));
static pthread_key_t memo_key;
static pthread_once_t memo_once = PTHREAD_ONCE_INIT;
static int memo_keyed;

static void memo_free(void *m)
{
    tl_memo = NULL;
    free(m);
}
static void memo_key_make(void) { memo_keyed = pthread_key_create(&memo_key, memo_free) == 0; }

static inline uint32_t memo_hit(const uintptr_t *frames, uint32_t depth, unsigned gen)
{
    const struct memo *m = tl_memo;
    if (!m || m->depth != depth || m->gen != gen)
        return 0;
    uint32_t id = m->id;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (!id || memcmp(m->frames, frames, depth * sizeof *frames) != 0)
        return 0;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    return m->id == id ? id : 0;
}

static __attribute__((noinline)) void memo_keep(const uintptr_t *frames, uint32_t depth, unsigned gen, uint32_t id)
{
    struct memo *m = tl_memo;
    if (depth > MEMO_MAX || !id)
        return;
    if (!m) { /* once per thread; freed when it ends */
        pthread_once(&memo_once, memo_key_make);
        if (!memo_keyed || !(m = calloc(1, sizeof *m)))
            return;
        if (pthread_setspecific(memo_key, m) != 0) {
            free(m);
            return;
        }
        tl_memo = m;
    }
    m->id = 0;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    memcpy(m->frames, frames, depth * sizeof *frames);
    m->depth = depth;
    m->gen = gen;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    m->id = id;
}

static uint32_t intern(const uintptr_t *frames, uint32_t depth, unsigned gen);

uint32_t gmg_stack_intern(const uintptr_t *frames, uint32_t depth)
{
    if (depth == 0)
        return 0;
    unsigned gen = gmg_unwind_generation();
    uint32_t id = memo_hit(frames, depth, gen);
    if (id)
        return id;
    id = intern(frames, depth, gen);
    memo_keep(frames, depth, gen, id);
    return id;
}

static uint32_t intern(const uintptr_t *frames, uint32_t depth, unsigned gen)
{
    /* a stack captured after a library was unloaded is another stack, even
     * where its addresses are the same: the modules it names may not be */
    uint64_t h = hash_frames(frames, depth) ^ (uint64_t)gen * 0x9e3779b97f4a7c15ull;
    size_t b = h % BUCKETS;
    pthread_mutex_t *mu = &locks[b % LOCKS];

    /* chains only grow at their head, published whole: read without a lock */
    struct gmg_stack *s = find(__atomic_load_n(&buckets[b], __ATOMIC_ACQUIRE), h, frames, depth);
    if (s)
        return s->id;

    struct gmg_stack *fresh = malloc(sizeof *fresh + depth * (sizeof(uintptr_t) + sizeof(uint16_t)));
    if (!fresh)
        return lost_one();
    fresh->hash = h;
    fresh->depth = depth;
    memcpy(fresh->frames, frames, depth * sizeof *frames);
    uint16_t *mods = (uint16_t *)(fresh->frames + depth);
    for (uint32_t i = 0; i < depth; i++)
        mods[i] = gmg_is_pyframe(frames[i]) ? 0 : module_of(frames[i]);

    pthread_mutex_lock(mu);
    s = find(buckets[b], h, frames, depth);
    if (!s) {
        uint32_t id = __atomic_fetch_add(&next_id, 1, __ATOMIC_RELAXED);
        uint32_t c = id >> CHUNK_BITS;
        if (c >= CHUNKS) {
            pthread_mutex_unlock(mu);
            free(fresh);
            return lost_one();
        }
        struct gmg_stack **chunk = __atomic_load_n(&chunks[c], __ATOMIC_ACQUIRE);
        if (!chunk) {
            struct gmg_stack **nc = calloc(1u << CHUNK_BITS, sizeof *nc);
            struct gmg_stack **expected = NULL;
            if (!nc) {
                pthread_mutex_unlock(mu);
                free(fresh);
                return lost_one();
            }
            if (!__atomic_compare_exchange_n(&chunks[c], &expected, nc, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
                free(nc);
            chunk = __atomic_load_n(&chunks[c], __ATOMIC_ACQUIRE);
        }
        fresh->id = id;
        fresh->next = buckets[b];
        __atomic_store_n(&chunk[id & ((1u << CHUNK_BITS) - 1)], fresh, __ATOMIC_RELEASE);
        __atomic_store_n(&buckets[b], fresh, __ATOMIC_RELEASE);
        s = fresh;
        fresh = NULL;
    }
    pthread_mutex_unlock(mu);
    free(fresh);
    return s->id;
}

static unsigned long check_fast, check_slow, check_diff;

static int skip_internal(void **b, int n)
{
    int k = 0;
    while (k < n && gmg_stack_is_internal((uintptr_t)b[k]))
        k++;
    return k;
}

/* libunwind's walk takes about 16 KiB of stack below the guard's frame (its
 * cursor and context, its first lazy bindings): it runs on the thread's
 * walk stack (core/walkstack.h). Only where that stack is in use (a signal
 * handler interrupted a walk) does it run in place, and then not on a stack
 * with less left than this (an alternate signal stack of SIGSTKSZ, a
 * thread of 16 KiB), into a guard page or, worse, into memory below, nor on
 * a stack whose room cannot be known (a coroutine's); on the walk stack
 * itself, where the handler runs, with what is left of it. */
#define SLOW_WALK_ROOM (32u << 10)

/* Whether the stack this runs on has too little room below for
 * libunwind's walk in place, or room that cannot be known. */
static int too_little_room(void)
{
    uintptr_t sp = (uintptr_t)__builtin_frame_address(0), lo, hi;
    stack_t ss; /* first: an alternate stack may lie inside the thread's (a local array of main's) */
    if (sigaltstack(NULL, &ss) == 0 && (ss.ss_flags & SS_ONSTACK) && sp >= (uintptr_t)ss.ss_sp &&
        sp - (uintptr_t)ss.ss_sp < ss.ss_size)
        return sp - (uintptr_t)ss.ss_sp < SLOW_WALK_ROOM;
    if (gmg_unwind_stack_bounds(&lo, &hi) && sp >= lo && sp < hi)
        return sp - lo < SLOW_WALK_ROOM;
    long room = gmg_walkstack_room(sp); /* a handler that interrupted a walk, on the walk stack */
    return room < (long)SLOW_WALK_ROOM;
}

/* libunwind's walk from a context taken in slow_walk, step by step (no
 * trace cache: unw_backtrace's per-thread cache keeps the rules of a
 * return address for good, and a library mapped where an unloaded one was
 * would inherit them). A frame whose code has no unwind information (a
 * JIT's, a library built without unwind tables) ends the stack: libunwind
 * would go on by its frame pointer, a guess, and a stack is the frames
 * that were there. */
struct slow {
    unw_context_t uc;
    void **buf;
    int max, n;
};

_Static_assert(sizeof(struct slow) <= 4096, "the walk stack keeps at most 4 KiB at its top for its taker");

/* Is the code at pc the kernel's way back from a signal handler, x86-64
 * Linux's rt_sigreturn trampoline (glibc's __restore_rt: mov $15, %rax;
 * syscall)? Read only where unwind information covers all of it, code of
 * a loaded module. */
static int is_sigreturn(uintptr_t pc)
{
#if defined(__x86_64__)
    static const unsigned char code[9] = { 0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05 };
    return gmg_unwind_described(pc) && gmg_unwind_described(pc + sizeof code - 1) &&
           memcmp((const void *)pc, code, sizeof code) == 0;
#else
    (void)pc;
    return 0;
#endif
}

static void slow_steps(void *arg)
{
    struct slow *w = arg;
    unw_cursor_t cur;
    unw_word_t ip;
    if (unw_init_local(&cur, &w->uc) != 0)
        return;
    int after_trampoline = 0;
    while (w->n < w->max && unw_step(&cur) > 0 && unw_get_reg(&cur, UNW_REG_IP, &ip) == 0) {
        if (ip < 0x4000)
            break; /* the end (a return address of 0 above a hand-started stack's entry), as the fast walk ends */
        w->buf[w->n++] = (void *)(uintptr_t)ip;
        /* the frame a signal interrupted: ip is the instruction interrupted,
         * not a return address, so the code at ip itself is looked at (a
         * function's first, after padding with no unwind information). It
         * is the frame after the signal's trampoline, which libunwind marks
         * (1.6: the step out of it leaves the cursor marked; as documented,
         * the trampoline's own frame is) and whose code says so */
        int interrupted = after_trampoline || unw_is_signal_frame(&cur) > 0;
        if (!gmg_unwind_described(interrupted ? ip : ip - 1))
            break;
        after_trampoline = is_sigreturn(ip);
    }
}

/* The same walk on the program's own stack, where it has room. */
static __attribute__((noinline)) int slow_walk_in_place(void **buf, int max)
{
    struct slow w = { .buf = buf, .max = max, .n = 0 };
    if (unw_getcontext(&w.uc) == 0)
        slow_steps(&w);
    return w.n;
}

/* libunwind's walk, as gmg_unwind gives it from the caller (and the
 * guard's own frames, which the caller skips). Its context and cursor live
 * on the walk stack, so that the program's stack gives it no more than
 * this frame. No walk (0, the stack counted as not kept) where it can run
 * neither there nor in place. */
static __attribute__((noinline)) int slow_walk(void **buf, int max)
{
    if (!gmg_walkgate_enter()) /* not while another thread forks */
        return 0;
    int n = 0;
    struct slow *w = gmg_walkstack_take(sizeof *w);
    if (w) {
        *w = (struct slow){ .buf = buf, .max = max, .n = 0 };
        if (unw_getcontext(&w->uc) == 0)
            gmg_walkstack_run(slow_steps, w);
        n = w->n;
        gmg_walkstack_give_back();
    } else if (too_little_room()) {
        lost_one();
    } else {
        n = slow_walk_in_place(buf, max);
    }
    gmg_walkgate_leave();
    return n;
}

/* One fast walk against libunwind's: counted, any difference printed. */
static __attribute__((noinline, cold)) void check_one(void **a, int na, void **b, int nb, int max)
{
    if (na < 0) {
        __atomic_fetch_add(&check_slow, 1, __ATOMIC_RELAXED);
        return;
    }
    __atomic_fetch_add(&check_fast, 1, __ATOMIC_RELAXED);
    /* the fast walk leaves out the guard's frames before it counts; where
     * one of the two stopped at max, the other may go on */
    int sa = skip_internal(a, na), sb = skip_internal(b, nb);
    int la = na - sa, lb = nb - sb;
    int same = la == lb || (la > lb ? nb == max : na == max);
    for (int i = 0; same && i < la && i < lb; i++)
        same = a[sa + i] == b[sb + i];
    if (same)
        return;
    __atomic_fetch_add(&check_diff, 1, __ATOMIC_RELAXED);
    char line[8192];
    int o = snprintf(line, sizeof line, "gpumemguard: unwind check: the fast walk differs from libunwind's:\n  fast:");
    for (int i = sa; i < na && o < (int)sizeof line - 40; i++)
        o += snprintf(line + o, sizeof line - (size_t)o, " %p", a[i]);
    o += snprintf(line + o, sizeof line - (size_t)o, "\n  libunwind:");
    for (int i = sb; i < nb && o < (int)sizeof line - 40; i++)
        o += snprintf(line + o, sizeof line - (size_t)o, " %p", b[i]);
    o += snprintf(line + o, sizeof line - (size_t)o, "\n");
    if (write(2, line, (size_t)o) < 0)
        return;
}

/* Each walk is made twice from one call site: the second starts where the
 * first did, so it is the memo's (core/unwind.c) whenever the stack's
 * words are as the first left them, and both must be libunwind's. */
static __attribute__((noinline, cold)) void check_walk(int max)
{
    void *a[2][GMG_MAX_STACK_DEPTH + 8], *b[GMG_MAX_STACK_DEPTH + 9];
    int na[2];
    unsigned seq;
    for (int pass = 0; pass < 2; pass++)
        na[pass] = gmg_unwind(a[pass], max, 0, self_lo, self_hi, &seq);
    int nb = slow_walk(b, max);
    for (int pass = 0; pass < 2; pass++)
        check_one(a[pass], na[pass], b, nb, max);
}

static __attribute__((destructor)) void test_summaries(void)
{
    char line[200];
    int o;
    if (stats_mode) {
        unsigned long given = __atomic_load_n(&stat_given, __ATOMIC_RELAXED);
        o = snprintf(line, sizeof line,
                     "gpumemguard: stacks: %lu captures, %lu given the thread's last capture; %lu call sites' totals "
                     "split by CPU; unwind rules forgotten %u times\n",
                     __atomic_load_n(&stat_made, __ATOMIC_RELAXED) + given, given,
                     gmg_live_split(), gmg_unwind_generation());
        if (write(2, line, (size_t)o) < 0)
            return;
        o = snprintf(line, sizeof line,
                     "gpumemguard: stacks: %lu Python walks given again without reading a name (no code object "
                     "freed since)\n", gmg_py_given_unread());
        if (write(2, line, (size_t)o) < 0)
            return;
    }
    if (!check_mode)
        return;
    o = snprintf(line, sizeof line, "gpumemguard: unwind check: %lu walks compared, %lu differ, %lu left to libunwind\n",
                 check_fast, check_diff, check_slow);
    if (write(2, line, (size_t)o) < 0)
        return;
}

/* The caller's native return addresses into buf, the guard's own first
 * ones left out, at most want of them (want + 8 and the guard's own
 * frames for the caller to skip, by libunwind): by the fast walker when
 * it can, else by libunwind. */
static inline int walk(void **buf, int want, int stop_at_interp, unsigned *memo_seq)
{
    int n = gmg_unwind(buf, want, stop_at_interp, self_lo, self_hi, memo_seq);
    return n >= 0 ? n : slow_walk(buf, want + 8);
}

/*
 * The thread's last capture whose walks were both given again from their
 * memos (the native walk's, and the Python frames' when there were any),
 * with the stack id it came to. The id is a function of the frames, the
 * depth and the unwind generation alone (the address ranges that tell the
 * guard's own frames and the interpreter's apart are in the native memo's
 * key), and equal memo numbers say the frames are the same: a capture that
 * finds both numbers, the depth and the generation as they were is given
 * the id at once, without the passes that make an id from the frames
 * (about 150 of a Python pair's 2,200 instructions). Every capture that
 * does not find both memos clears it, so it only ever stands for the
 * thread's previous capture. A sequence count, odd while it is written,
 * keeps a capture in a signal handler from reading it half written.
 */
struct last_capture {
    unsigned seq;
    unsigned native;   /* the native memo's number: nonzero when set */
    uint32_t py;       /* the Python memo's number, 0 without Python frames */
    int want;
    unsigned gen;
    uint32_t id;
};
static __thread struct last_capture tl_last __attribute__((tls_model("initial-exec")));

static inline uint32_t last_capture_is(unsigned native, uint32_t py, int want, unsigned gen)
{
    struct last_capture *l = &tl_last;
    unsigned seq = l->seq;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    uint32_t id = (seq & 1) || !native || l->native != native || l->py != py || l->want != want || l->gen != gen
                      ? 0 : l->id;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    return l->seq == seq ? id : 0;
}

static inline void last_capture_set(unsigned native, uint32_t py, int want, unsigned gen, uint32_t id)
{
    struct last_capture *l = &tl_last;
    unsigned seq = l->seq;
    if (seq & 1)
        return; /* a signal handler's capture: the interrupted one is writing it */
    l->seq = seq + 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    l->native = native;
    l->py = py;
    l->want = want;
    l->gen = gen;
    l->id = id;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    l->seq = seq + 2;
}

/* The combined stack: the calling thread's Python frames (innermost
 * first, at most the depth), then its native frames (the same), down to
 * the interpreter's own when there are Python frames. */
__attribute__((noinline)) uint32_t gmg_stack_capture_walk(void)
{
    int want = __atomic_load_n(&gmg_stack_depth, __ATOMIC_RELAXED);
    if (want == 0)
        return 0;
    if (__builtin_expect(check_mode, 0))
        check_walk(want + 8);
    /* sized by the depth asked for, not the most there may be (256): a
     * handler on a small alternate stack, or a small thread, must not lose
     * 4 KiB to frames no one asked for. Python frames (at most want), then
     * native ones (at most want + 9: libunwind's walk gives 8 more to skip
     * and its own) */
    uintptr_t all[2 * want + 9];
    uint32_t py_memo;
    uint32_t np = gmg_py_capture(all, (uint32_t)want, &py_memo);
    void **buf = (void **)(all + np);
    /* With Python frames, the walk ends at the first return address into
     * the interpreter: the eval loop's frames, and what called it, are
     * what the Python frames stand for (and they differ from call to call
     * as the interpreter specialises, splitting one site). */
    unsigned native_memo;
    int n = walk(buf, want, np != 0, &native_memo);
    /* both memos given again (or no Python frames at all), outside the
     * check mode, whose walks write the native memo in between */
    int memos = native_memo && (py_memo || np == 0) && !check_mode;
    unsigned gen = gmg_unwind_generation();
    uint32_t last = memos ? last_capture_is(native_memo, py_memo, want, gen) : 0;
    if (last) {
        if (__builtin_expect(stats_mode, 0))
            __atomic_fetch_add(&stat_given, 1, __ATOMIC_RELAXED);
        return last;
    }
    if (__builtin_expect(stats_mode, 0))
        __atomic_fetch_add(&stat_made, 1, __ATOMIC_RELAXED);
    int skip = skip_internal(buf, n);
    int keep = n - skip;
    if (np) {
        int k = 0;
        while (k < keep && !gmg_py_is_interpreter((uintptr_t)buf[skip + k]))
            k++;
        keep = k;
    }
    if (keep > want)
        keep = want;
    if (skip)
        memmove(buf, buf + skip, (size_t)keep * sizeof *buf);
    uint32_t id = np + (uint32_t)keep ? gmg_stack_intern(all, np + (uint32_t)keep) : 0;
    if (!id && np == 0 && n <= 0) /* no frame at all (the walk shut out by a fork, or short of memory): not kept */
        return lost_one();
    last_capture_set(memos && id ? native_memo : 0, py_memo, want, gen, id);
    return id;
}

const struct gmg_stack *gmg_stack_get(uint32_t id)
{
    if (id == 0 || (id >> CHUNK_BITS) >= CHUNKS)
        return NULL;
    struct gmg_stack **chunk = __atomic_load_n(&chunks[id >> CHUNK_BITS], __ATOMIC_ACQUIRE);
    return chunk ? __atomic_load_n(&chunk[id & ((1u << CHUNK_BITS) - 1)], __ATOMIC_ACQUIRE) : NULL;
}

uint32_t gmg_stack_count(void)
{
    return __atomic_load_n(&next_id, __ATOMIC_RELAXED) - 1;
}

void gmg_stacks_atfork_child(void)
{
    /* The depot stays (ids are stable across fork). A thread that was
     * interning at fork time left at worst a stack reachable by id but not
     * yet by its bucket (it is interned again, harmlessly) or not at all;
     * its lock is started afresh rather than held across fork, so that the
     * parent's fork never waits on the depot. */
    for (int i = 0; i < LOCKS; i++)
        pthread_mutex_init(&locks[i], NULL);
    pthread_mutex_init(&modules_mu, NULL);
    gmg_live_atfork_child();
}
