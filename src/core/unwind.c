/*
 * unwind.c - see unwind.h.
 *
 * A rule is what libunwind's own fast trace (x86_64/Gtrace.c) calls a
 * standard frame: CFA = rsp or rbp + offset, the return address at CFA-8,
 * rbp unchanged or saved at CFA + offset; the caller's rsp is the CFA.
 * Or the last frame (the return address column undefined: _start,
 * clone3). Anything else, or anything this parser does not know, is
 * OTHER, and the whole walk goes to libunwind. The rules are read with the
 * same row selection as libunwind's (the instruction before a return
 * address, the row whose location is at or below it), so a walk answered
 * here is the walk libunwind would make, frame for frame; the tests run
 * both on the same calls and compare (GMG_UNWIND_CHECK, core/stacks.c).
 *
 * heaptrack keeps libunwind's unw_backtrace, whose per-thread cache holds
 * the same rules; bytehound reads .eh_frame itself and caches per return
 * address. This does the latter, without libunwind's fixed price per walk
 * (a register context, a cursor of a few hundred bytes, a check per read).
 */
#define _GNU_SOURCE
#include "core/unwind.h"

#include "core/pyframes.h"
#include "core/stacks.h"
#include "core/walkstack.h"

#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <link.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

enum { EMPTY, STD_RSP, STD_RBP, LAST, OTHER, FP_STD /* STD_RBP, CFA = rbp + 16, rbp saved at CFA - 16 */ };
#define RBP_KEPT INT16_MIN

struct rule {
    uintptr_t pc;        /* the return address (0: empty)          */
    int32_t cfa_off;
    int16_t rbp_off;     /* where rbp was saved, from the CFA; RBP_KEPT */
    uint8_t kind;
};

/* A cached rule: the return address (user space: below 2^56) with the
 * kind in the top byte, so that a frame-pointer frame is recognised by
 * one compare; its offsets beside it. */
#define KIND_SHIFT 56
#define PC_MASK ((UINT64_C(1) << KIND_SHIFT) - 1)
struct offs {
    int32_t cfa_off;
    int16_t rbp_off;
};

#define CACHE_BITS 11
#define CACHE (1u << CACHE_BITS)

/* Frame-pointer frames by their place in the walk: fp_at[k] is a return
 * address that was a frame-pointer frame's at the k-th frame kept by some
 * walk since the rules were learnt (the rules' generation: cleared with
 * them). A loop allocating from one call site walks the same return
 * addresses at the same places each time, and such a frame is then known
 * by one compare with no hashing. Only a fact about the address is kept,
 * so a place shared by other addresses only misses: the set lookup
 * decides then, as for any frame. The last FP_SKIP are the places of the
 * guard's own frames, walked first. */
#define FP_AT (GMG_MAX_STACK_DEPTH + 16) /* the most any caller asks for: the check mode's depth + 8 */
#define FP_SKIP 8

/* The thread's last walk, to be given again without walking (memo_walk):
 * a walk is a function of where it starts (this function's own stack and
 * frame pointers), the rules of the return addresses it meets (fixed while
 * the rules' generation is), its bounds and its arguments, and the stack
 * words it reads. All of those are kept: the words as (address, value)
 * pairs, in the order read. When a walk starts where the last one did,
 * with the same arguments, and every one of those words still holds its
 * value, each of its steps would read and do what it did then: the same
 * frames, exactly. The words are read at addresses known in advance, all
 * at once, rather than one frame pointer after another. A walk of more
 * than MEMO_FRAMES frames, or one that went to libunwind, is not kept.
 * A walk that does not match is noted only every MEMO_RETRY misses: two
 * call sites taking turns then find one of them kept (half of the walks
 * given) rather than each replacing the other (none), and a loop that
 * moves to a new call site has it kept from its MEMO_RETRY-th walk. */
#define MEMO_FRAMES 64
#define MEMO_RETRY 4
#define MEMO_WORDS (4 * (MEMO_FRAMES + FP_SKIP)) /* two words read a step at most, each an address and a value */
struct walkmemo {
    unsigned seq;        /* odd while written: a walk in a signal handler then neither reads nor writes it */
    int valid;
    unsigned misses;     /* walks since the memo last matched or was written (a heuristic only) */
    uintptr_t sp, fp;    /* where the walk started */
    uintptr_t skip_lo, skip_hi;
    unsigned gen;        /* the rules' generation it was walked with */
    int max, stop, ninterp, n;
    uint32_t nw;         /* words in w: address, value, address, value ... */
    uintptr_t w[MEMO_WORDS];
    void *out[MEMO_FRAMES];
};

struct tcache {
    uintptr_t lo, hi;    /* the thread's stack                    */
    int bounds;          /* 1 known, -1 none to be had            */
    unsigned gen;        /* `forgets` when the rules were learnt  */
    uint64_t key[CACHE]; /* two ways per set; 0: empty            */
    struct offs off[CACHE];
    uintptr_t fp_at[FP_AT + FP_SKIP];
    struct walkmemo memo;
};

static unsigned forgets; /* libraries unloaded: rules learnt before are void */

void gmg_unwind_forget(void)
{
    unw_flush_cache(unw_local_addr_space, 0, 0);
    __atomic_add_fetch(&forgets, 1, __ATOMIC_RELEASE);
}

unsigned gmg_unwind_generation(void)
{
    return __atomic_load_n(&forgets, __ATOMIC_ACQUIRE);
}

static __thread struct tcache *tl __attribute__((tls_model("initial-exec")));
static pthread_key_t tl_key;
static pthread_once_t tl_once = PTHREAD_ONCE_INIT;

static void tl_free(void *p)
{
    tl = NULL; /* a later walk on this thread (another key's destructor) makes another */
    free(p);
}

static void tl_key_make(void) { (void)pthread_key_create(&tl_key, tl_free); }

/* The thread's cache made, its stack's bounds asked (*arg: the cache, or
 * NULL). */
static void cache_make(void *arg)
{
    struct tcache *c = calloc(1, sizeof *c);
    *(struct tcache **)arg = c;
    if (!c)
        return;
    pthread_attr_t a;
    void *addr;
    size_t size;
    c->bounds = -1;
    if (pthread_getattr_np(pthread_self(), &a) == 0) {
        if (pthread_attr_getstack(&a, &addr, &size) == 0 && addr && size) {
            c->lo = (uintptr_t)addr;
            c->hi = (uintptr_t)addr + size;
            c->bounds = 1;
        }
        pthread_attr_destroy(&a);
    }
}

static struct tcache *my_cache(void)
{
    struct tcache *c = tl;
    if (__builtin_expect(c != NULL, 1))
        return c;
    pthread_once(&tl_once, tl_key_make);
    /* On the walk stack for the main thread, whose bounds come from reading
     * /proc/self/maps, and for the process's first cache: libc's first
     * calloc through its own PLT is a lazy binding that saves every vector
     * register (2.7 KiB with AVX-512). Either is more than a coroutine's
     * 4 KiB stack has left. Other threads make theirs in place (their
     * bounds are in their descriptor): no walk stack mapped for a thread
     * that never needs one. In place too where the walk stack is in use (a
     * handler interrupted a walk). */
    static int made_one;
    int far = getpid() == (pid_t)syscall(SYS_gettid) || !__atomic_load_n(&made_one, __ATOMIC_ACQUIRE);
    if (far && gmg_walkstack_take(0)) {
        gmg_walkstack_run(cache_make, &c);
        gmg_walkstack_give_back();
    } else {
        cache_make(&c);
    }
    if (!c)
        return NULL;
    __atomic_store_n(&made_one, 1, __ATOMIC_RELEASE);
    tl = c;
    (void)pthread_setspecific(tl_key, c); /* freed when the thread ends */
    return c;
}

int gmg_unwind_stack_bounds(uintptr_t *lo, uintptr_t *hi)
{
    struct tcache *c = my_cache();
    if (!c || c->bounds < 0)
        return 0;
    *lo = c->lo;
    *hi = c->hi;
    return 1;
}

/* ---- reading DWARF call frame information -------------------------------- */

struct rd {
    const uint8_t *p, *end;
    int bad;
};

static uint64_t u8(struct rd *r)
{
    if (r->p >= r->end) {
        r->bad = 1;
        return 0;
    }
    return *r->p++;
}

static uint64_t fixed(struct rd *r, int n)
{
    if (r->end - r->p < n) {
        r->bad = 1;
        return 0;
    }
    uint64_t v = 0;
    memcpy(&v, r->p, (size_t)n); /* little endian */
    r->p += n;
    return v;
}

static uint64_t uleb(struct rd *r)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        uint64_t b = u8(r);
        v |= (b & 0x7f) << shift;
        if (!(b & 0x80))
            return v;
    }
    r->bad = 1;
    return 0;
}

static int64_t sleb(struct rd *r)
{
    int64_t v = 0;
    int shift = 0;
    uint64_t b;
    do {
        if (shift >= 64) {
            r->bad = 1;
            return 0;
        }
        b = u8(r);
        v |= (int64_t)((b & 0x7f) << shift);
        shift += 7;
    } while (b & 0x80);
    if (shift < 64 && (b & 0x40))
        v |= -((int64_t)1 << shift);
    return v;
}

/* A pointer in encoding enc (DW_EH_PE_*); datarel: the base of datarel
 * (the .eh_frame_hdr), 0 if none. Indirect and the rarer bases: bad. */
static uintptr_t encoded(struct rd *r, uint8_t enc, uintptr_t datarel)
{
    const uint8_t *at = r->p;
    uint64_t v;
    switch (enc & 0x0f) {
    case 0x00: v = fixed(r, 8); break;
    case 0x01: v = uleb(r); break;
    case 0x02: v = fixed(r, 2); break;
    case 0x03: v = fixed(r, 4); break;
    case 0x04: v = fixed(r, 8); break;
    case 0x09: v = (uint64_t)sleb(r); break;
    case 0x0a: v = (uint64_t)(int64_t)(int16_t)fixed(r, 2); break;
    case 0x0b: v = (uint64_t)(int64_t)(int32_t)fixed(r, 4); break;
    case 0x0c: v = fixed(r, 8); break;
    default: r->bad = 1; return 0;
    }
    switch (enc & 0x70) {
    case 0x00: break;
    case 0x10: v += (uintptr_t)at; break;
    case 0x30:
        if (!datarel)
            r->bad = 1;
        v += datarel;
        break;
    default: r->bad = 1; break;
    }
    if (enc & 0x80)
        r->bad = 1;
    return (uintptr_t)v;
}

/* A register's rule, for the three that matter: rbp (6), rsp (7), the
 * return address (16). */
enum { R_SAME, R_OFF, R_UNDEF, R_OTHER };
struct reg { uint8_t how; int64_t off; };
struct row {
    int cfa_reg;         /* -1: an expression */
    int64_t cfa_off;
    struct reg rbp, rsp, ra;
};

#define STATES 8

static struct reg *reg_of(struct row *w, uint64_t n)
{
    return n == 6 ? &w->rbp : n == 7 ? &w->rsp : n == 16 ? &w->ra : NULL;
}

/* Run call frame instructions from loc until the row that covers target;
 * init: the CIE's row (for DW_CFA_restore), NULL while running the CIE's
 * own. 0, or -1 for anything not understood. */
static int run(struct rd *r, struct row *w, const struct row *init, uintptr_t loc, uintptr_t target,
               uint64_t code_align, int64_t data_align, uint8_t fde_enc)
{
    struct row saved[STATES];
    int nsaved = 0;
    while (r->p < r->end && !r->bad) {
        uint8_t op = (uint8_t)u8(r);
        uint64_t reg, delta = 0;
        struct reg *g;
        int adv = 0;
        switch (op >> 6) {
        case 1: delta = (op & 0x3f) * code_align; adv = 1; break;
        case 2:
            if ((g = reg_of(w, op & 0x3f))) {
                g->how = R_OFF;
                g->off = (int64_t)uleb(r) * data_align;
            } else {
                (void)uleb(r);
            }
            continue;
        case 3:
            if ((g = reg_of(w, op & 0x3f)))
                *g = init ? *reg_of((struct row *)init, op & 0x3f) : (struct reg){ R_SAME, 0 };
            continue;
        default: break;
        }
        if (!adv) {
            switch (op) {
            case 0x00: continue; /* nop */
            case 0x01: { uintptr_t to = encoded(r, fde_enc, 0); if (to < loc) return -1; delta = to - loc; adv = 1; break; }
            case 0x02: delta = fixed(r, 1) * code_align; adv = 1; break;
            case 0x03: delta = fixed(r, 2) * code_align; adv = 1; break;
            case 0x04: delta = fixed(r, 4) * code_align; adv = 1; break;
            case 0x05: /* offset_extended */
                reg = uleb(r);
                if ((g = reg_of(w, reg))) { g->how = R_OFF; g->off = (int64_t)uleb(r) * data_align; }
                else (void)uleb(r);
                continue;
            case 0x06: /* restore_extended */
                reg = uleb(r);
                if ((g = reg_of(w, reg)))
                    *g = init ? *reg_of((struct row *)init, reg) : (struct reg){ R_SAME, 0 };
                continue;
            case 0x07: /* undefined */
                if ((g = reg_of(w, uleb(r)))) { g->how = R_UNDEF; g->off = 0; }
                continue;
            case 0x08: /* same_value */
                if ((g = reg_of(w, uleb(r)))) { g->how = R_SAME; g->off = 0; }
                continue;
            case 0x09: /* register */
                reg = uleb(r);
                (void)uleb(r);
                if ((g = reg_of(w, reg))) g->how = R_OTHER;
                continue;
            case 0x0a:
                if (nsaved == STATES) return -1;
                saved[nsaved++] = *w;
                continue;
            case 0x0b:
                if (nsaved == 0) return -1;
                *w = saved[--nsaved]; /* the CFA with the rest, as GCC's epilogues need */
                continue;
            case 0x0c: w->cfa_reg = (int)uleb(r); w->cfa_off = (int64_t)uleb(r); continue;
            case 0x0d: w->cfa_reg = (int)uleb(r); continue;
            case 0x0e: w->cfa_off = (int64_t)uleb(r); continue;
            case 0x0f: { uint64_t n = uleb(r); if ((uint64_t)(r->end - r->p) < n) return -1; r->p += n; w->cfa_reg = -1; continue; }
            case 0x10: case 0x16: { /* expression, val_expression */
                reg = uleb(r);
                uint64_t n = uleb(r);
                if ((uint64_t)(r->end - r->p) < n) return -1;
                r->p += n;
                if ((g = reg_of(w, reg))) g->how = R_OTHER;
                continue;
            }
            case 0x11: /* offset_extended_sf */
                reg = uleb(r);
                if ((g = reg_of(w, reg))) { g->how = R_OFF; g->off = sleb(r) * data_align; }
                else (void)sleb(r);
                continue;
            case 0x12: w->cfa_reg = (int)uleb(r); w->cfa_off = sleb(r) * data_align; continue;
            case 0x13: w->cfa_off = sleb(r) * data_align; continue;
            case 0x14: case 0x15: /* val_offset(_sf) */
                reg = uleb(r);
                if (op == 0x14) (void)uleb(r); else (void)sleb(r);
                if ((g = reg_of(w, reg))) g->how = R_OTHER;
                continue;
            case 0x2e: (void)uleb(r); continue; /* GNU_args_size */
            case 0x2f: /* GNU_negative_offset_extended */
                reg = uleb(r);
                if ((g = reg_of(w, reg))) { g->how = R_OFF; g->off = -(int64_t)uleb(r) * data_align; }
                else (void)uleb(r);
                continue;
            default: return -1;
            }
        }
        /* an advance: the rows so far cover [.., loc + delta) */
        if (!init)
            return -1; /* a CIE does not advance */
        if (loc + delta > target)
            return 0;
        loc += delta;
    }
    return r->bad ? -1 : 0;
}

/* The rule for the frame whose return address is ra (the call is at
 * ra - 1); kind OTHER when there is none to be had here. 1 when ra lies in
 * a loaded module (the rule may be cached); 0 when it does not. *found
 * (when not NULL): whether the module's .eh_frame has an entry for the
 * code at ra - 1, whatever its rule. */
static int learn_found(uintptr_t ra, struct rule *out, int *found)
{
    out->kind = OTHER;
#ifdef DLFO_STRUCT_HAS_EH_DBASE
    uintptr_t target = ra - 1;
    struct dl_find_object fo;
    if (_dl_find_object((void *)target, &fo) != 0)
        return 0;
    if (ra > (uintptr_t)fo.dlfo_map_end)
        return 0;
    const uint8_t *hdr = fo.dlfo_eh_frame;
    if (!hdr)
        return 1;
    if (hdr[0] != 1 || hdr[3] != 0x3b) /* version 1; table: datarel sdata4 */
        return 1;
    struct rd r = { hdr + 4, hdr + 4 + 32, 0 };
    (void)encoded(&r, hdr[1], (uintptr_t)hdr);
    uint64_t count = encoded(&r, hdr[2], (uintptr_t)hdr);
    if (r.bad || count == 0 || count > (1u << 26))
        return 1;
    const int32_t *tab = (const int32_t *)r.p;
    /* the last entry whose start is at or below target */
    uint64_t lo = 0, hi = count;
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if ((uintptr_t)hdr + (intptr_t)tab[2 * mid] <= target)
            lo = mid;
        else
            hi = mid;
    }
    if ((uintptr_t)hdr + (intptr_t)tab[2 * lo] > target)
        return 1;
    const uint8_t *fde = hdr + (intptr_t)tab[2 * lo + 1];

    uint32_t flen;
    memcpy(&flen, fde, 4);
    if (flen == 0 || flen == 0xffffffffu)
        return 1;
    const uint8_t *fend = fde + 4 + flen;
    int32_t cie_back;
    memcpy(&cie_back, fde + 4, 4);
    if (cie_back <= 0)
        return 1;
    const uint8_t *cie = fde + 4 - cie_back;
    uint32_t clen, cid;
    memcpy(&clen, cie, 4);
    memcpy(&cid, cie + 4, 4);
    if (clen == 0 || clen == 0xffffffffu || cid != 0)
        return 1;
    struct rd c = { cie + 8, cie + 4 + clen, 0 };
    uint64_t version = u8(&c);
    if (version != 1 && version != 3)
        return 1;
    const char *aug = (const char *)c.p;
    size_t alen = strnlen(aug, (size_t)(c.end - c.p));
    if (alen >= (size_t)(c.end - c.p) || alen > 8)
        return 1;
    c.p += alen + 1;
    uint64_t code_align = uleb(&c);
    int64_t data_align = sleb(&c);
    uint64_t ra_reg = version == 1 ? u8(&c) : uleb(&c);
    uint8_t fde_enc = 0;
    int zed = 0, signal_frame = 0;
    if (aug[0] == 'z') {
        zed = 1;
        uint64_t n = uleb(&c);
        const uint8_t *after = c.p + n;
        if (c.bad || n > (uint64_t)(c.end - c.p))
            return 1;
        for (const char *a = aug + 1; *a; a++) {
            if (*a == 'R') {
                fde_enc = (uint8_t)u8(&c);
            } else if (*a == 'L') {
                (void)u8(&c);
            } else if (*a == 'P') {
                uint8_t pe = (uint8_t)u8(&c);
                (void)encoded(&c, pe & 0x7f, 0);
            } else if (*a == 'S') {
                signal_frame = 1; /* a signal frame: libunwind's to walk */
            } else {
                if (found) /* an entry there is, which this cannot read: libunwind can */
                    *found = 1;
                return 1;
            }
        }
        c.p = after;
    } else if (aug[0]) {
        return 1;
    }
    if (c.bad || ra_reg != 16)
        return 1;

    struct rd f = { fde + 8, fend, 0 };
    uintptr_t begin = encoded(&f, fde_enc, 0);
    uintptr_t range = encoded(&f, fde_enc & 0x0f, 0);
    if (f.bad || target < begin || target - begin >= range)
        return 1;
    if (found)
        *found = 1;
    if (signal_frame)
        return 1;
    if (zed) {
        uint64_t n = uleb(&f);
        if (f.bad || n > (uint64_t)(f.end - f.p))
            return 1;
        f.p += n;
    }

    struct row w = { .cfa_reg = 7, .cfa_off = 8, .rbp = { R_SAME, 0 }, .rsp = { R_SAME, 0 }, .ra = { R_SAME, 0 } };
    if (run(&c, &w, NULL, begin, target, code_align, data_align, fde_enc) < 0)
        return 1;
    struct row init = w;
    if (run(&f, &w, &init, begin, target, code_align, data_align, fde_enc) < 0)
        return 1;

    if (w.ra.how == R_UNDEF) {
        out->kind = LAST;
    } else if ((w.cfa_reg == 6 || w.cfa_reg == 7) && w.cfa_off > -(1 << 28) && w.cfa_off < (1 << 28) &&
               w.ra.how == R_OFF && w.ra.off == -8 &&
               (w.rbp.how == R_SAME || w.rbp.how == R_UNDEF ||
                (w.rbp.how == R_OFF && w.rbp.off > -(1 << 14) && w.rbp.off < (1 << 14) && w.rbp.off != -1)) &&
               (w.rsp.how == R_SAME || w.rsp.how == R_UNDEF || w.rsp.how == R_OFF)) {
        out->kind = w.cfa_reg == 7 ? STD_RSP : STD_RBP;
        out->cfa_off = (int32_t)w.cfa_off;
        out->rbp_off = w.rbp.how == R_OFF ? (int16_t)w.rbp.off : RBP_KEPT;
        if (out->kind == STD_RBP && out->cfa_off == 16 && out->rbp_off == -16)
            out->kind = FP_STD;
    }
    return 1;
#else
    (void)ra;
    (void)found;
    return 0;
#endif
}

static int learn(uintptr_t ra, struct rule *out) { return learn_found(ra, out, NULL); }

int gmg_unwind_described(uintptr_t pc)
{
    struct rule r;
    int found = 0;
    (void)learn_found(pc + 1, &r, &found);
    return found;
}

/* ---- the walk ------------------------------------------------------------ */

typedef uint64_t loose64 __attribute__((aligned(1), may_alias));

static inline __attribute__((always_inline, no_sanitize_address)) uint64_t word(uintptr_t at)
{
    return *(const loose64 *)at;
}

static inline size_t set_of(uintptr_t pc)
{
    return (size_t)(pc ^ (pc >> 10)) & (CACHE - 2);
}

/* The rule for return address pc, learnt now and cached (the newest of a
 * set first, the older of the two goes); 0 when pc lies in no module. */
static __attribute__((noinline)) int learn_cached(struct tcache *c, uintptr_t pc, struct rule *out)
{
    if (pc > PC_MASK || !learn(pc, out))
        return 0;
    size_t i = set_of(pc);
    c->key[i + 1] = c->key[i];
    c->off[i + 1] = c->off[i];
    c->key[i] = pc | (uint64_t)out->kind << KIND_SHIFT;
    c->off[i] = (struct offs){ out->cfa_off, out->rbp_off };
    return 1;
}

/* Whether pc's cached rule is a frame-pointer frame's; then it is kept at
 * its place in the walk (`at`). */
static inline __attribute__((always_inline)) int fp_frame(const struct tcache *c, uintptr_t pc, uintptr_t *at)
{
    size_t i = set_of(pc);
    uint64_t fpk = pc | (uint64_t)FP_STD << KIND_SHIFT;
    if (c->key[i] != fpk && c->key[i + 1] != fpk)
        return 0;
    *at = pc;
    return 1;
}

/* A stack word the walk read, noted at *rec (its address, then its
 * value) for the memo, unless *rec is NULL. */
static inline __attribute__((always_inline)) void note(uintptr_t **rec, uintptr_t addr, uintptr_t value)
{
    uintptr_t *w = *rec;
    if (w) {
        w[0] = addr;
        w[1] = value;
        *rec = w + 2;
    }
}

/* One step out of the frame whose return address is *pc: 0, with the
 * caller's pc, sp and fp; 1 at the end of the stack; -1 for libunwind.
 * `at` is the step's place in fp_at; each word read is noted (note). */
static inline __attribute__((always_inline, no_sanitize_address)) int step(struct tcache *c, uintptr_t *at,
                                                                          uintptr_t *pc, uintptr_t *sp,
                                                                          uintptr_t *fp, uintptr_t hi,
                                                                          uintptr_t hi16, uintptr_t **rec)
{
    uintptr_t ra, cfa;
    if (__builtin_expect(*at == *pc, 1) || __builtin_expect(fp_frame(c, *pc, at), 1)) {
        /* a frame-pointer frame: the next frame pointer is one load away,
         * and nothing else of the rule is waited for; every word read lies
         * in [sp, hi), and each frame is above the last (the frame pointer
         * at or above the stack pointer, as in every frame that keeps one:
         * a stricter test than the rule's, so a frame it refuses goes to
         * libunwind, never a wrong one through) */
        if (*fp < *sp || *fp > hi16) /* two compares; hi16 = hi - 16 */
            return -1;
        uintptr_t f = *fp;
        cfa = f + 16;
        ra = word(f + 8);
        *fp = word(f);
        note(rec, f + 8, ra);
        note(rec, f, *fp);
    } else {
        struct rule e;
        size_t i = set_of(*pc);
        /* the key read again after its offsets: a signal handler's walk
         * may have learnt a rule into this set in between (and moved the
         * entries), and a rule is never half of one and half of another */
        uint64_t k0 = c->key[i], k1 = c->key[i + 1];
        int learnt = 0;
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        if ((k0 & PC_MASK) == *pc) {
            e.kind = (uint8_t)(k0 >> KIND_SHIFT);
            e.cfa_off = c->off[i].cfa_off;
            e.rbp_off = c->off[i].rbp_off;
        } else if ((k1 & PC_MASK) == *pc) {
            e.kind = (uint8_t)(k1 >> KIND_SHIFT);
            e.cfa_off = c->off[i + 1].cfa_off;
            e.rbp_off = c->off[i + 1].rbp_off;
        } else if (!(learnt = learn_cached(c, *pc, &e))) {
            return -1;
        }
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        if (!learnt && (c->key[i] != k0 || c->key[i + 1] != k1) && !learn(*pc, &e))
            return -1;
        if (e.kind == OTHER)
            return -1;
        if (e.kind == LAST)
            return 1;
        if (e.kind == FP_STD) {
            e.cfa_off = 16;
            e.rbp_off = -16;
        }
        cfa = (e.kind == STD_RSP ? *sp : *fp) + (intptr_t)e.cfa_off;
        if (cfa < *sp + 8 || cfa > hi)
            return -1;
        ra = word(cfa - 8);
        note(rec, cfa - 8, ra);
        if (e.rbp_off != RBP_KEPT) {
            uintptr_t at = cfa + (intptr_t)e.rbp_off;
            if (at < *sp || at > hi - 8)
                return -1;
            *fp = word(at);
            note(rec, at, *fp);
        } else {
            note(rec, cfa - 8, ra); /* every step two words: the memo checks a step at a time */
        }
    }
    *sp = cfa;
    if (__builtin_expect(ra - 0x4000 > PC_MASK - 0x4000, 0))
        return ra < 0x4000 ? 1 : -1; /* the end; or no user-space address (libunwind's to judge) */
    *pc = ra;
    return 0;
}

/* The last walk's frames again, when this one starts where it did with
 * the same arguments and every word it read holds its value (struct
 * walkmemo): their number, or -1 (walk). */
static __attribute__((no_sanitize_address)) int memo_walk(const struct walkmemo *m, void **buf, int max, int stop,
                                                          uintptr_t sp, uintptr_t fp, int ninterp,
                                                          uintptr_t skip_lo, uintptr_t skip_hi, unsigned gen,
                                                          unsigned *memo_seq)
{
    unsigned seq = m->seq;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if ((seq & 1) || !m->valid || m->sp != sp || m->fp != fp || m->max != max || m->stop != stop ||
        m->ninterp != ninterp || m->skip_lo != skip_lo || m->skip_hi != skip_hi || m->gen != gen)
        return -1;
    int n = m->n;
    if (n > max)
        return -1; /* (a signal handler's walk is writing it) */
    /* loads known in advance, none waiting for another. A step at a time
     * (its two words), in the order walked, ending at the first step that
     * differs: the words a step reads lie where the steps before it say,
     * so up to that step this reads what a walk would, and never a word a
     * walk from here would not (one left over from a stack since unmapped) */
    for (uint32_t i = 0; i < m->nw; i += 4)
        if ((word(m->w[i]) ^ m->w[i + 1]) | (word(m->w[i + 2]) ^ m->w[i + 3]))
            return -1;
    memcpy(buf, m->out, (size_t)n * sizeof *buf);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (m->seq != seq)
        return -1; /* a signal handler's walk wrote it meanwhile */
    *memo_seq = seq; /* even, and 2 or more once written */
    return n;
}

__attribute__((noinline, no_sanitize_address)) int gmg_unwind(void **buf, int max, int stop_at_interp,
                                                              uintptr_t skip_lo, uintptr_t skip_hi, unsigned *memo_seq)
{
    *memo_seq = 0;
    struct tcache *c = my_cache();
    if (!c || c->bounds < 0)
        return -1;
    unsigned gen = __atomic_load_n(&forgets, __ATOMIC_ACQUIRE);
    if (__builtin_expect(gen != c->gen, 0)) {
        memset(c->key, 0, sizeof c->key);
        memset(c->fp_at, 0, sizeof c->fp_at);
        c->memo.valid = 0;
        c->gen = gen;
    }
    uintptr_t pc, sp, fp;
    /* where this function stands: the instruction after the lea, and the
     * registers there (the row of the call frame information covering it
     * describes this very frame) */
    __asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2" : "=r"(pc), "=r"(sp), "=r"(fp));
    if (sp < c->lo || sp >= c->hi)
        return -1; /* not on the thread's own stack */
    if (max > FP_AT)
        max = FP_AT; /* (no caller wants more) */
    struct walkmemo *m = &c->memo;
    int ninterp = stop_at_interp ? gmg_py_interp_count() : 0, r;
    int memo = max > 0 && max <= MEMO_FRAMES;
    if (memo && (r = memo_walk(m, buf, max, stop_at_interp, sp, fp, ninterp, skip_lo, skip_hi, gen, memo_seq)) >= 0) {
        m->misses = 0;
        return r;
    }
    /* this walk is noted in the memo when there is none, or at the
     * MEMO_RETRY-th miss, unless a walk interrupted by this signal handler
     * is writing it (odd) */
    unsigned seq = m->seq;
    uintptr_t *rec = NULL;
    memo = memo && !(seq & 1) && (!m->valid || ++m->misses >= MEMO_RETRY);
    if (memo) {
        m->misses = 0;
        m->seq = seq + 1;
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        m->valid = 0;
        m->sp = sp;
        m->fp = fp;
        rec = m->w;
    }
    uintptr_t hi = c->hi, hi16 = hi - 16;
    int n = 0, k = 0;
    do { /* the caller's own frames, first, are left out */
        if ((r = step(c, &c->fp_at[FP_AT + k], &pc, &sp, &fp, hi, hi16, &rec)))
            goto done;
        if (++k == FP_SKIP) { /* deeper than ever seen: not noted */
            k = FP_SKIP - 1;
            rec = NULL;
        }
    } while (pc - skip_lo < skip_hi - skip_lo);
    if (max <= 0) {
        r = 0;
        goto done;
    }
    buf[n++] = (void *)pc;
    if (stop_at_interp) {
        while (n < max && !gmg_py_is_interpreter(pc)) {
            if ((r = step(c, &c->fp_at[n], &pc, &sp, &fp, hi, hi16, &rec)))
                goto done;
            buf[n++] = (void *)pc;
        }
    } else {
        while (n < max) {
            if ((r = step(c, &c->fp_at[n], &pc, &sp, &fp, hi, hi16, &rec)))
                goto done;
            buf[n++] = (void *)pc;
        }
    }
    r = 0;
done:
    if (r >= 0)
        r = n;
    if (memo) {
        if (rec && r >= 0) {
            m->nw = (uint32_t)(rec - m->w);
            m->max = max;
            m->stop = stop_at_interp;
            m->ninterp = ninterp;
            m->skip_lo = skip_lo;
            m->skip_hi = skip_hi;
            m->gen = gen;
            m->n = n;
            memcpy(m->out, buf, (size_t)n * sizeof *buf);
            m->valid = 1;
        }
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        m->seq = seq + 2;
    }
    return r;
}
