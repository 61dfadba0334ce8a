/*
 * peak.c - see peak.h.
 *
 * Each device has one word: its tracked bytes in the upper 48 bits, below
 * them one bit that says whether the word's owner may move it with plain
 * stores (BIASED, below), and the low 15 bits of its peak generation. Every move of a counted
 * record is one compare-and-swap on it, so that the moves of all threads
 * have one order, the word's, and each move knows the generation in force
 * at its place in that order. A generation is the number of peaks set so
 * far; the peak bytes are kept apart (`peak`).
 *
 * Setting a peak. A move that adds bytes and would take the total above
 * the peak it read takes the device's lock; under it, the peak read is the
 * true one (only holders of the lock change it), and if the move still sets
 * a new peak its compare-and-swap also bumps the generation in the word:
 * the move and the new generation are one step of the order. Others add
 * without the lock when total + bytes <= the peak they read: they read the
 * word (acquire) and then the peak, and the peak only grows, except at a
 * restart, which first stores 0 there, then bumps the generation in the
 * word, then stores the new peak; a move that read the word after that
 * bump reads 0 or the new peak, and goes to the lock. So a move that skips
 * the lock never goes above the true peak, and one that goes above it
 * always sets the next generation. Frees never set a peak. So the lock is
 * taken only while the device's memory climbs to a new high (a program's
 * first steps, a training job's ramp-up), by the threads climbing it.
 *
 * What was live at the peak (memray's high-water-mark scheme). Number the
 * peaks 1, 2, ...; a move's generation b is the number of peaks set before
 * it in the word's order (the move that sets peak k has b = k - 1). What
 * was live at peak k is exactly the moves with b < k. Each live total
 * (struct gmg_peak_slot) keeps its counted bytes, and `pbytes` = the sum of
 * the moves applied to it with b < `gen`, where `gen` is the largest b
 * applied (gmg_peak_slot_apply, under the total's own lock, so moves of one
 * total are applied one at a time, though not necessarily in the word's
 * order: a thread may be overtaken between its compare-and-swap and its
 * total):
 *   - b > gen: every move applied so far has b' <= gen < b, so all of them
 *     are before the peak: pbytes = bytes, gen = b (the lazy catch-up);
 *   - b < gen: a move from before that peak, applied late: it is part of
 *     pbytes as much as of bytes;
 *   - b == gen: after the peak: bytes only.
 * A reader that holds the device's lock (no peak is set meanwhile) and
 * reads the latest generation G takes, per total, pbytes when gen == G and
 * bytes when gen < G (no move with b >= G was applied: none after the
 * peak). Moves whose compare-and-swap came before the peak but whose total
 * is not yet changed are the only ones missing: a report made while no
 * allocation or free is half done is exact, and the totals sum to the peak.
 * A sum that is not the peak therefore says a move is half done, and
 * gmg_peak_read_settled walks again until it is (bounded). The converse is
 * not proof: an allocation and a free of equal size, both half done at
 * once, cancel out in the sum while each total is off by their size.
 * The 15 bits in the word are widened with `gen64`, stored after each bump
 * under the lock: a move reads it after its compare-and-swap, and fewer
 * than 16384 peaks come between the two.
 */
#include "core/peak.h"

#include "base/bias.h"
#include "base/limit_parse.h"
#include "base/lock.h"
#ifdef GMG_NO_PEAK
#include "core/quota.h"
#endif

#include <pthread.h>
#include <time.h>

/* The word, which every move writes, on a line of its own; what a move
 * only reads (and what changes only with a new peak) on the next, which
 * therefore stays in every CPU's cache while threads on several CPUs move
 * the word. */
struct pk {
    uint64_t word;              /* bytes << 16 | BIASED or not | generation & GEN_MASK */
    gmg_bias_t bias;            /* its owner moves the word with plain stores (below) */
    uint32_t regains;           /* how often the bias was given back (below) */
    uint64_t peak __attribute__((aligned(64))); /* tracked bytes at the latest peak; 0 while a restart is under way */
    uint64_t gen64;             /* the generation, whole */
    uint64_t run;               /* the run's highest peak (a restart keeps it) */
    uint64_t run_ms;            /* when it was reached: CLOCK_MONOTONIC, milliseconds */
    uint64_t untracked;         /* counted bytes the table could not take: in use for good */
    pthread_mutex_t mu;         /* setting a peak; reading one */
} __attribute__((aligned(64)));

static struct pk pk[GMG_MAX_DEVICES];

__attribute__((constructor)) static void peak_init(void)
{
    for (int i = 0; i < GMG_MAX_DEVICES; i++)
        pthread_mutex_init(&pk[i].mu, NULL);
}

#define GEN_MASK 0x7fffull
#define BIASED 0x8000ull

static inline uint64_t widen(const struct pk *p, uint64_t word)
{
    uint64_t g = __atomic_load_n(&p->gen64, __ATOMIC_ACQUIRE);
    uint64_t d = ((word & GEN_MASK) - g) & GEN_MASK; /* the 15-bit difference, */
    return g + (uint64_t)((int64_t)(d << 49) >> 49); /* signed */
}

/*
 * The word's owner (base/bias.h: most programs allocate from one thread)
 * moves it with a plain load and store, where every other thread uses a
 * compare-and-swap. While the owner is inside its bias, with BIASED set in
 * the word, nobody else writes the word: every compare-and-swap expects a
 * value without BIASED (word_cas), and fails; its thread then revokes the
 * bias, whose revocation clears BIASED once the owner is out and before
 * the bias reads revoked. So the owner's moves take their place in the
 * word's order as the compare-and-swap's would, and the argument above
 * holds unchanged. Only an owner inside its bias sets BIASED (with a
 * compare-and-swap of its move: threads that have not seen it own the
 * word may still be swapping): while BIASED is set the bias is the
 * owner's or being revoked.
 *
 * Nothing but the word tells a thread that it is not the owner: so a bias
 * revoked can be given back. A thread whose compare-and-swaps on the value
 * its last move left keep succeeding at the first try (it found the word
 * as that move left it) claims the bias back after REGAIN << regains such
 * moves after a first: a program whose allocating thread changed (a loader
 * thread made the live set) gets back the plain stores.
 */
#define REGAIN 1024u

static void word_unbias(void *arg)
{
    __atomic_fetch_and(&((struct pk *)arg)->word, ~BIASED, __ATOMIC_ACQ_REL);
}

/* The word's bias is revoked here only, never by gmg_bias_revoke: a
 * revocation that left BIASED set would fail every swap for ever. */
static __attribute__((noinline, cold)) void word_revoke(struct pk *p)
{
    gmg_bias_revoke_slow_then(&p->bias, word_unbias, p);
}

/* A compare-and-swap of the word by a thread not inside its bias: 1 done;
 * 0 not, *w the word now (a biased word is first revoked, never swapped:
 * its owner may be between its load and its store). */
static inline int word_cas(struct pk *p, uint64_t *w, uint64_t nw)
{
    if (__builtin_expect(!(*w & BIASED), 1))
        return __atomic_compare_exchange_n(&p->word, w, nw, 1, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    word_revoke(p);
    *w = __atomic_load_n(&p->word, __ATOMIC_ACQUIRE);
    return 0;
}

/* The owner's move, inside its bias: a plain store where BIASED is set,
 * else the compare-and-swap that sets it. 1 done; 0 not, *w the word now. */
static inline int owner_store(struct pk *p, uint64_t *w, uint64_t nw)
{
    if (__builtin_expect(*w & BIASED, 1)) {
        __atomic_store_n(&p->word, nw | BIASED, __ATOMIC_RELEASE);
        return 1;
    }
    return __atomic_compare_exchange_n(&p->word, w, nw | BIASED, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

/* A move that may set a peak, under the lock; the word's owner enters its
 * bias after taking the lock (a revoker may hold it while it waits for the
 * owner to leave the bias). */
static __attribute__((noinline)) uint64_t move_locked(struct pk *p, uint64_t bytes)
{
    pthread_mutex_lock(&p->mu);
    uint8_t *inside = gmg_bias_enter_at(&p->bias);
    uint64_t peak = __atomic_load_n(&p->peak, __ATOMIC_RELAXED);
    uint64_t g = __atomic_load_n(&p->gen64, __ATOMIC_RELAXED);
    uint64_t w = __atomic_load_n(&p->word, __ATOMIC_ACQUIRE), b;
    for (;;) {
        uint64_t total = (w >> 16) + bytes;
        if (total > peak) {
            uint64_t nw = total << 16 | ((g + 1) & GEN_MASK);
            if (inside ? owner_store(p, &w, nw) : word_cas(p, &w, nw)) {
                __atomic_store_n(&p->gen64, g + 1, __ATOMIC_RELEASE);
                __atomic_store_n(&p->peak, total, __ATOMIC_RELEASE);
                if (total > __atomic_load_n(&p->run, __ATOMIC_RELAXED)) { /* under the lock: its one writer */
                    struct timespec ts; /* (a vDSO read, only as the run's peak rises) */
                    clock_gettime(CLOCK_MONOTONIC, &ts);
                    __atomic_store_n(&p->run_ms, (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u,
                                     __ATOMIC_RELAXED);
                    __atomic_store_n(&p->run, total, __ATOMIC_RELEASE);
                }
                b = g;
                break;
            }
        } else if (inside ? owner_store(p, &w, w + (bytes << 16)) : word_cas(p, &w, w + (bytes << 16))) {
            b = widen(p, w);
            break;
        }
    }
    if (inside)
        gmg_bias_leave_flag(inside);
    pthread_mutex_unlock(&p->mu);
    return b;
}

/* The word as the thread's last move on device `dev` left it. An
 * allocation tries its compare-and-swap on that first: where no other
 * thread moved the word since (one thread allocating), it is right; where
 * threads on other CPUs did, the failed attempt brings the line and its
 * value in one step, where a load and then a compare-and-swap take two
 * (the load fetches the line shared, the swap must then take it again).
 * It is tried only when its generation is the one in force: gen64, read
 * before the peak, gives it (a peak or a restart under way moves the
 * word's generation before gen64 follows, and a swap on the older
 * generation then fails). So a swap that succeeds proves the word was that
 * value in the generation whose peak, or a smaller one, was read (gen64
 * was read a moment before, so not 32768 generations ago): as for a value
 * loaded (the argument above). Whatever value is tried, then, a stale one
 * (a move 32768 peaks ago, a signal handler's move on another device
 * between the two fields' stores) only costs a failed swap. */
static __thread struct {
    uint64_t word;
    int dev;
    uint32_t run; /* moves in a row whose swap on `word` succeeded at once */
} last __attribute__((tls_model("initial-exec")));

/* The owner's move (see above). A move that may set a peak leaves the bias
 * and takes the lock, as any other. -1 when the caller is not the owner,
 * or its move found the word moved by a thread that has not seen it own
 * it (the compare-and-swap's way, then, this once). */
static inline __attribute__((always_inline)) int owner_move(struct pk *p, uint64_t bytes, int sign, uint64_t *gen)
{
    uint8_t *inside = gmg_bias_enter_at(&p->bias);
    if (!inside)
        return -1;
    /* an acquire, as a compare-and-swap's load: before BIASED is set, other
     * threads' swaps (a restart's among them) are still the word's moves */
    uint64_t w = __atomic_load_n(&p->word, __ATOMIC_ACQUIRE);
    if (sign > 0 && (w >> 16) + bytes > __atomic_load_n(&p->peak, __ATOMIC_ACQUIRE)) {
        gmg_bias_leave_flag(inside);
        *gen = move_locked(p, bytes);
        return 0;
    }
    if (!owner_store(p, &w, sign > 0 ? w + (bytes << 16) : w - (bytes << 16))) {
        gmg_bias_leave_flag(inside);
        return -1;
    }
    gmg_bias_leave_flag(inside);
    *gen = widen(p, w);
    return 0;
}

/* A non-owner's move that succeeded (`first`: at the first try, on the
 * value its last move left): counts toward the bias given back. */
static inline void note_swap(struct pk *p, int dev, uint64_t nw, int first)
{
    last.word = nw;
    last.dev = dev;
    if (!first) {
        last.run = 0;
    } else if (__builtin_expect(++last.run >= gmg_bias_regain_after(__atomic_load_n(&p->regains, __ATOMIC_RELAXED),
                                                                     REGAIN), 0)) {
        last.run = 0;
        /* an owner that has not moved the word since it was given it (its
         * thread went quiet, or ended) never set BIASED, and nobody else
         * would revoke it */
        if (!gmg_bias_revoked(&p->bias))
            word_revoke(p);
        if (gmg_bias_reclaim(&p->bias))
            __atomic_fetch_add(&p->regains, 1, __ATOMIC_RELAXED);
    }
}

/* Inlined into each slot mover: on every counted allocation and free. */
static inline __attribute__((always_inline)) uint64_t peak_move(int dev, uint64_t bytes, int sign)
{
    struct pk *p = &pk[dev];
    uint64_t gen;
    if (__builtin_expect(owner_move(p, bytes, sign, &gen) == 0, 1))
        return gen;
    int first = last.dev == dev;
    uint64_t w = last.word;
    if (sign < 0) { /* a free: no condition */
        if (!first)
            w = __atomic_load_n(&p->word, __ATOMIC_ACQUIRE);
        while (!word_cas(p, &w, w - (bytes << 16)))
            first = 0;
        note_swap(p, dev, w - (bytes << 16), first);
        return widen(p, w);
    }
    uint64_t g = __atomic_load_n(&p->gen64, __ATOMIC_ACQUIRE);
    if (!first || ((w ^ g) & GEN_MASK)) {
        w = __atomic_load_n(&p->word, __ATOMIC_ACQUIRE);
        first = 0;
    }
    for (;;) {
        if ((w >> 16) + bytes > __atomic_load_n(&p->peak, __ATOMIC_ACQUIRE)) {
            uint64_t now = __atomic_load_n(&p->word, __ATOMIC_ACQUIRE);
            if (now != w) { /* the value tried was the thread's last, not the word's */
                w = now;
                first = 0;
                continue;
            }
            last.dev = -1;
            return move_locked(p, bytes);
        }
        if (word_cas(p, &w, w + (bytes << 16))) {
            note_swap(p, dev, w + (bytes << 16), first);
            return widen(p, w);
        }
        first = 0;
    }
}

/* 1: the lock was held by another thread when first tried. */
static inline int slot_lock(struct gmg_peak_slot *s)
{
    if (__builtin_expect(!__atomic_exchange_n(&s->lock, 1, __ATOMIC_ACQUIRE), 1))
        return 0;
    do
        while (__atomic_load_n(&s->lock, __ATOMIC_RELAXED))
            gmg_cpu_relax();
    while (__atomic_exchange_n(&s->lock, 1, __ATOMIC_ACQUIRE));
    return 1;
}
static inline void slot_unlock(struct gmg_peak_slot *s) { __atomic_store_n(&s->lock, 0, __ATOMIC_RELEASE); }

/* The device's word first (it may wait for the device's lock), then the
 * slot's lock, held for a few stores: a reader holding the device's lock
 * takes slots' locks, never the other way round. */
/* Built with -DGMG_PEAK_TEST_HOOKS (tests/unit/test_peak.c only): a
 * function the test sets runs between a move's word and its slot, where
 * another thread may overtake it. */
#ifdef GMG_PEAK_TEST_HOOKS
void (*gmg_peak_test_hook)(void);
unsigned gmg_peak_test_regains(int dev);
unsigned gmg_peak_test_regains(int dev) { return __atomic_load_n(&pk[dev].regains, __ATOMIC_RELAXED); }
#define TEST_HOOK() do { if (gmg_peak_test_hook) gmg_peak_test_hook(); } while (0)
#else
#define TEST_HOOK() ((void)0)
#endif

/* A move of generation `gen` applied to the slot, under its lock. */
static inline void slot_apply(struct gmg_peak_slot *s, uint64_t gen, uint64_t bytes, int sign)
{
    if (gen > s->gen) { /* a peak since: everything applied so far was live at it */
        s->pbytes = s->bytes;
        s->pcount = s->count;
        s->gen = gen;
    } else if (gen < s->gen) { /* a move from before that peak, applied late: part of it */
        s->pbytes = sign > 0 ? s->pbytes + bytes : s->pbytes - bytes;
        s->pcount = sign > 0 ? s->pcount + 1 : s->pcount - 1;
    }
    s->bytes = sign > 0 ? s->bytes + bytes : s->bytes - bytes;
    s->count = sign > 0 ? s->count + 1 : s->count - 1;
}

void gmg_peak_slot_move(struct gmg_peak_slot *s, int dev, uint64_t bytes, int sign)
{
    uint64_t gen = peak_move(dev, bytes, sign);
    TEST_HOOK();
    slot_lock(s);
    slot_apply(s, gen, bytes, sign);
    slot_unlock(s);
}

/*
 * Serial slots: their moves never run at once (track.c moves stack 0's
 * totals under the shard's lock), so a sequence count stands in for the
 * slot's lock, odd while a move is under way. The writer stores the count,
 * then each field, then the count again, every store a release: a reader
 * that sees a field's new value sees the odd count after it. The reader
 * loads the count, every field and the count again, every load an acquire,
 * and takes the fields only when both counts are the same even number. No
 * atomic read-modify-write (on x86, plain moves): two fewer a pair with
 * stacks off: 18 ns a pair on an Intel Xeon, 4 on an AMD EPYC
 * (docs/benchmarks.md).
 */
static inline uint64_t ld(const uint64_t *v) { return __atomic_load_n(v, __ATOMIC_ACQUIRE); }
static inline void st(uint64_t *v, uint64_t x) { __atomic_store_n(v, x, __ATOMIC_RELEASE); }

void gmg_peak_slot_move_serial(struct gmg_peak_slot *s, int dev, uint64_t bytes, int sign)
{
    uint64_t gen = peak_move(dev, bytes, sign);
    TEST_HOOK();
    uint32_t q = __atomic_load_n(&s->lock, __ATOMIC_RELAXED);
    __atomic_store_n(&s->lock, q + 1, __ATOMIC_RELAXED);
    uint64_t sg = __atomic_load_n(&s->gen, __ATOMIC_RELAXED);
    uint64_t b = __atomic_load_n(&s->bytes, __ATOMIC_RELAXED), c = __atomic_load_n(&s->count, __ATOMIC_RELAXED);
    if (gen > sg) { /* as slot_apply */
        st(&s->pbytes, b);
        st(&s->pcount, c);
        st(&s->gen, gen);
    } else if (gen < sg) {
        uint64_t pb = __atomic_load_n(&s->pbytes, __ATOMIC_RELAXED), pc = __atomic_load_n(&s->pcount, __ATOMIC_RELAXED);
        st(&s->pbytes, sign > 0 ? pb + bytes : pb - bytes);
        st(&s->pcount, sign > 0 ? pc + 1 : pc - 1);
    }
    st(&s->bytes, sign > 0 ? b + bytes : b - bytes);
    st(&s->count, sign > 0 ? c + 1 : c - 1);
    __atomic_store_n(&s->lock, q + 2, __ATOMIC_RELEASE);
}

void gmg_peak_slot_at_serial(const struct gmg_peak_slot *s, uint64_t peak_gen, uint64_t *bytes, uint64_t *count)
{
    for (;;) {
        uint32_t q = __atomic_load_n(&s->lock, __ATOMIC_ACQUIRE);
        uint64_t gen = ld(&s->gen), b = ld(&s->bytes), c = ld(&s->count), pb = ld(&s->pbytes), pc = ld(&s->pcount);
        if (!(q & 1) && __atomic_load_n(&s->lock, __ATOMIC_ACQUIRE) == q) {
            *bytes = gen < peak_gen ? b : pb;
            *count = gen < peak_gen ? c : pc;
            return;
        }
        gmg_cpu_relax(); /* a move is under way: a few stores */
    }
}

int gmg_peak_slot_move_with(struct gmg_peak_slot *s, int dev, uint64_t bytes, int sign, int counted,
                            uint64_t *total, uint64_t *count)
{
    uint64_t gen = counted ? peak_move(dev, bytes, sign) : 0;
    if (counted)
        TEST_HOOK();
    int waited = slot_lock(s);
    if (counted)
        slot_apply(s, gen, bytes, sign);
    /* written only under this lock: plain loads, stores readers may read at any time */
    uint64_t t = __atomic_load_n(total, __ATOMIC_RELAXED), c = __atomic_load_n(count, __ATOMIC_RELAXED);
    __atomic_store_n(total, sign > 0 ? t + bytes : t - bytes, __ATOMIC_RELAXED);
    __atomic_store_n(count, sign > 0 ? c + 1 : c - 1, __ATOMIC_RELAXED);
    slot_unlock(s);
    return waited;
}

int gmg_peak_slot_move_biased(struct gmg_peak_slot *s, gmg_bias_t *b, int dev, uint64_t bytes, int sign, int counted,
                              uint64_t *total, uint64_t *count)
{
    /* the word first, outside the bias: it may wait for the device's lock,
     * which a reader holds while it revokes the bias */
    uint64_t gen = counted ? peak_move(dev, bytes, sign) : 0;
    if (counted)
        TEST_HOOK();
    int waited = 0;
    uint8_t *inside = gmg_bias_take_flag(b);
    if (!inside)
        waited = slot_lock(s);
    if (counted)
        slot_apply(s, gen, bytes, sign);
    uint64_t t = __atomic_load_n(total, __ATOMIC_RELAXED), c = __atomic_load_n(count, __ATOMIC_RELAXED);
    __atomic_store_n(total, sign > 0 ? t + bytes : t - bytes, __ATOMIC_RELAXED);
    __atomic_store_n(count, sign > 0 ? c + 1 : c - 1, __ATOMIC_RELAXED);
    if (inside)
        gmg_bias_leave_flag(inside);
    else
        slot_unlock(s);
    return waited;
}

void gmg_peak_slot_hold(struct gmg_peak_slot *s) { slot_lock(s); }
void gmg_peak_slot_release(struct gmg_peak_slot *s) { slot_unlock(s); }

void gmg_peak_slot_at(struct gmg_peak_slot *s, uint64_t peak_gen, uint64_t *bytes, uint64_t *count)
{
    slot_lock(s);
    *bytes = s->gen < peak_gen ? s->bytes : s->pbytes;
    *count = s->gen < peak_gen ? s->count : s->pcount;
    slot_unlock(s);
}

void gmg_peak_lock(int dev) { pthread_mutex_lock(&pk[dev].mu); }
void gmg_peak_unlock(int dev) { pthread_mutex_unlock(&pk[dev].mu); }

void gmg_peak_get(int dev, uint64_t *bytes, uint64_t *gen)
{
    *bytes = __atomic_load_n(&pk[dev].peak, __ATOMIC_ACQUIRE);
    *gen = __atomic_load_n(&pk[dev].gen64, __ATOMIC_ACQUIRE);
}

/* A move half done shows as a sum that is not the peak, either way: an
 * allocation whose word moved but not yet its total is missing from it, a
 * free in the same state is still in it. Such a gap is a few instructions
 * long, unless the mover's thread is preempted there: the walk is made
 * again, a nap apart, for at most SETTLE_NS (meanwhile only moves that
 * would set a new peak wait, for the lock). */
#define SETTLE_NS 20000000L
#define SETTLE_NAP_NS 20000L

int gmg_peak_read_settled(int dev, uint64_t *bytes, uint64_t *gen, uint64_t (*walk)(uint64_t gen, void *arg),
                          void *arg)
{
    gmg_peak_get(dev, bytes, gen);
    if (!*gen)
        return 1; /* no peak yet: nothing was live at one */
    struct timespec start, now, nap = { 0, SETTLE_NAP_NS };
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        uint64_t sum = walk(*gen, arg);
        if (sum == *bytes || sum == GMG_PEAK_SUM_UNKNOWN)
            return 1;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if ((now.tv_sec - start.tv_sec) * 1000000000L + (now.tv_nsec - start.tv_nsec) >= SETTLE_NS)
            return 0;
        nanosleep(&nap, NULL);
    }
}

void gmg_peak_restart(int dev)
{
    struct pk *p = &pk[dev];
    /* an owner that has moved the word since it got the bias (BIASED set,
     * idle or not) is revoked before the peak reads 0, not in that window
     * (readers without the lock, gmg_at_peak_window_bytes, see the 0); one
     * that sets BIASED meanwhile is revoked by word_cas below */
    if (__atomic_load_n(&p->word, __ATOMIC_ACQUIRE) & BIASED)
        word_revoke(p);
    uint64_t g = __atomic_load_n(&p->gen64, __ATOMIC_RELAXED);
    __atomic_store_n(&p->peak, 0, __ATOMIC_SEQ_CST); /* adders go to the lock meanwhile */
    uint64_t w = __atomic_load_n(&p->word, __ATOMIC_ACQUIRE);
    while (!word_cas(p, &w, (w & ~GEN_MASK) | ((g + 1) & GEN_MASK))) /* swapped only without BIASED */
        ;
    __atomic_store_n(&p->gen64, g + 1, __ATOMIC_RELEASE);
    __atomic_store_n(&p->peak, w >> 16, __ATOMIC_RELEASE);
}

#ifndef GMG_NO_PEAK
uint64_t gmg_peak_run(int dev)
{
    return dev >= 0 && dev < GMG_MAX_DEVICES ? __atomic_load_n(&pk[dev].run, __ATOMIC_ACQUIRE) : 0;
}

uint64_t gmg_peak_in_use(int dev)
{
    if (dev < 0 || dev >= GMG_MAX_DEVICES)
        return 0;
    return gmg_peak_tracked(dev) + __atomic_load_n(&pk[dev].untracked, __ATOMIC_RELAXED);
}

uint64_t gmg_peak_run_ms(int dev)
{
    return dev >= 0 && dev < GMG_MAX_DEVICES ? __atomic_load_n(&pk[dev].run_ms, __ATOMIC_RELAXED) : 0;
}

uint64_t gmg_peak_tracked(int dev)
{
    if (dev < 0 || dev >= GMG_MAX_DEVICES)
        return 0;
    return __atomic_load_n(&pk[dev].word, __ATOMIC_ACQUIRE) >> 16;
}
#else /* scripts/bench.sh's copy without peak tracking (nothing moves the words): the quota's figures */
uint64_t gmg_peak_run(int dev) { return gmg_quota_peak(dev); }
uint64_t gmg_peak_run_ms(int dev) { (void)dev; return 0; }
uint64_t gmg_peak_in_use(int dev) { return gmg_quota_used(dev); }
uint64_t gmg_peak_tracked(int dev) { return gmg_quota_used(dev); }
#endif

void gmg_peak_note_untracked(int dev, uint64_t bytes)
{
    if (dev >= 0 && dev < GMG_MAX_DEVICES && bytes)
        __atomic_fetch_add(&pk[dev].untracked, bytes, __ATOMIC_RELAXED);
}

void gmg_peak_atfork_child(void)
{
    for (int i = 0; i < GMG_MAX_DEVICES; i++) {
        pk[i].word = 0;
        pk[i].peak = 0;
        pk[i].gen64 = 0;
        pk[i].run = 0;
        pk[i].run_ms = 0;
        pk[i].untracked = 0;
        pk[i].regains = 0;
        gmg_bias_forget(&pk[i].bias);
        pthread_mutex_init(&pk[i].mu, NULL);
    }
}
