/*
 * bias.h - owner-biased exclusion (base layer): a shared object that the
 * one thread using it may change with plain loads and stores, where a
 * lock or an atomic read-modify-write would cost 7-10 ns each, until
 * another thread needs it; from then on everyone goes through the
 * object's lock or atomic operations as before, until the object is given
 * back to one thread (below). Most programs allocate
 * from one thread: for them the table's shards, the device's peak word and
 * the call sites' totals are such objects (docs/benchmarks.md).
 *
 * An object's bias names its owner, the first thread that entered it (a
 * token of the thread's, never 0 or GMG_BIAS_NONE, and never one another
 * thread of the process had: past 2^28 - 4 threads, new ones own nothing
 * and take every object's lock), or 0 before that, or
 * GMG_BIAS_NONE once revoked. The owner enters by storing busy = 1 and
 * then reading the bias again: still its own, it is inside; it leaves by
 * storing busy = 0 (a release). A thread that needs the object otherwise
 * revokes the bias first: it stores GMG_BIAS_REVOKING, makes every running
 * thread of the process pass a full memory barrier (membarrier(2),
 * MEMBARRIER_CMD_PRIVATE_EXPEDITED), waits for busy to be 0, and stores
 * GMG_BIAS_NONE (a release); other threads that find it revoking wait for
 * that. Where the barrier fell in the owner's instructions, either the
 * owner's read of the bias came after it and saw it revoking (it leaves and
 * takes the lock), or its busy = 1 came before it and the revoker sees it
 * and waits for the owner to leave: never both inside (Dekker's exclusion,
 * the owner's half of the fence run for it by the revoker). Revocation
 * costs a system call.
 *
 * A revoked object is given back (regained) to a thread that has since
 * used it alone for a while: the program's threads took turns (a loader
 * thread made the live set, the training thread allocates from then on).
 * A lock-based object's taker counts, under the lock, the takes in a row
 * that were its own (gmg_bias_note_take), and after GMG_BIAS_REGAIN of
 * them claims the bias back (gmg_bias_reclaim): every taker of the lock
 * therefore checks, under it, that the object is still revoked, and else
 * lets the lock go and revokes it again. The device's peak word, which has
 * no lock, is given back in its own way (core/peak.c). Each regain of an
 * object doubles the run its next one needs, up to 1,024 times the first,
 * and an object has 16 owners at most (the tenures below): after the
 * fifteenth regain it stays revoked.
 *
 * Without membarrier (a kernel before 4.14, a seccomp filter refusing it),
 * and before start-up (gmg_bias_start), no bias is given: an object is
 * revoked the first time it is entered.
 *
 * A signal handler that enters an object its thread was interrupted
 * inside, or entering (busy stored, the bias not yet read again), is
 * refused (busy is already 1), and revoking it waits for the thread it
 * interrupted (as does another revoker already under way, which the handler
 * then waits for): it hangs, as it would on a lock its thread held.
 * For the device's peak word that is new (its compare-and-swap never
 * waited). The guard's objects are entered only from allocation calls,
 * which the driver does not allow in signal handlers either. Waits nap by
 * the raw system call, never at a cancellation point.
 *
 * A forked child keeps no bias (gmg_bias_forget): its objects' owners may
 * be threads it does not have.
 */
#ifndef GMG_BASE_BIAS_H
#define GMG_BASE_BIAS_H

#include <stddef.h>
#include <stdint.h>

/* The owner word: the tenure (how often the object was given back) in its
 * top 4 bits, and who: 0 no owner yet (tenure 0 only), GMG_BIAS_NONE
 * revoked, GMG_BIAS_REVOKING being revoked (the owner may still be
 * inside), else the owner's token. Each tenure has a busy flag of its own:
 * a thread that read itself the owner, and is then held up before it marks
 * itself inside, may store to its tenure's flag after the object was
 * revoked and given to another thread; it must not touch the new owner's
 * (its undoing store of 0 would let a revoker past the owner inside). A
 * tenure's flag is written by that tenure's owner only. */
#define GMG_BIAS_TENURES 16
typedef struct {
    uint32_t owner;
    uint8_t busy[GMG_BIAS_TENURES];
} gmg_bias_t;
#define GMG_BIAS_WHO 0x0fffffffu
#define GMG_BIAS_NONE 0x0fffffffu
#define GMG_BIAS_REVOKING 0x0ffffffeu
/* The token of every thread past the last one (2^28 - 4 threads made):
 * tokens are never given twice, and a thread of this one never owns. */
#define GMG_BIAS_NOBODY 0x0ffffffdu
static inline uint32_t gmg_bias_who(uint32_t o) { return o & GMG_BIAS_WHO; }
static inline uint32_t gmg_bias_tenure(uint32_t o) { return o >> 28; }
static inline uint32_t gmg_bias_word(uint32_t tenure, uint32_t who) { return tenure << 28 | who; }

extern __thread uint32_t gmg_bias_token_tl __attribute__((tls_model("initial-exec")));
uint32_t gmg_bias_token_new(void);
int gmg_bias_claim(gmg_bias_t *b, uint32_t me);
void gmg_bias_revoke_slow(gmg_bias_t *b);
/* The same, `out(arg)` run once the owner is out and before the object is
 * marked revoked (the peak word clears its mark of the bias there). */
void gmg_bias_revoke_slow_then(gmg_bias_t *b, void (*out)(void *), void *arg);

static inline uint32_t gmg_bias_me(void)
{
    uint32_t me = gmg_bias_token_tl;
    return __builtin_expect(me != 0, 1) ? me : gmg_bias_token_new();
}

/* Whether a bias can be given in this process: asks the kernel for the
 * barrier, once, at start-up (before it, and where refused, none is). */
void gmg_bias_start(void);

/* The owner's entry, the bias read as `o`: its tenure's busy flag, inside
 * (leave with gmg_bias_leave_flag, or gmg_bias_leave); NULL not the owner
 * (or a signal handler of the owner's, inside already). An object with no
 * owner yet becomes the caller's. */
static inline uint8_t *gmg_bias_enter_flag(gmg_bias_t *b, uint32_t o)
{
    uint32_t me = gmg_bias_me();
    if (__builtin_expect(gmg_bias_who(o) != me, 0)) {
        if (o != 0 || !gmg_bias_claim(b, me))
            return NULL;
        o = me; /* tenure 0 */
    }
    uint8_t *busy = &b->busy[gmg_bias_tenure(o)];
    if (__builtin_expect(__atomic_load_n(busy, __ATOMIC_RELAXED) != 0, 0))
        return NULL; /* inside already: a signal handler of the owner's */
    __atomic_store_n(busy, 1, __ATOMIC_RELAXED);
    /* the compiler keeps the read below after the store; the CPU may not,
     * which the revoker's barrier (above) answers for */
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (__builtin_expect(__atomic_load_n(&b->owner, __ATOMIC_RELAXED) == o, 1))
        return busy;
    __atomic_store_n(busy, 0, __ATOMIC_RELEASE);
    return NULL;
}

static inline int gmg_bias_enter_seen(gmg_bias_t *b, uint32_t o) { return gmg_bias_enter_flag(b, o) != NULL; }

static inline void gmg_bias_leave_flag(uint8_t *busy) { __atomic_store_n(busy, 0, __ATOMIC_RELEASE); }

/* 1: the calling thread owns the object and is inside it (leave with
 * gmg_bias_leave); 0: it is not, and must use the object's lock or atomic
 * operations, after gmg_bias_revoke. */
static inline int gmg_bias_enter(gmg_bias_t *b)
{
    return gmg_bias_enter_seen(b, __atomic_load_n(&b->owner, __ATOMIC_RELAXED));
}
static inline uint8_t *gmg_bias_enter_at(gmg_bias_t *b)
{
    return gmg_bias_enter_flag(b, __atomic_load_n(&b->owner, __ATOMIC_RELAXED));
}

/* (While the owner is inside, the word keeps its tenure: revokers wait.) */
static inline void gmg_bias_leave(gmg_bias_t *b)
{
    __atomic_store_n(&b->busy[gmg_bias_tenure(__atomic_load_n(&b->owner, __ATOMIC_RELAXED))], 0, __ATOMIC_RELEASE);
}

/* The object is no one's, and its owner is not inside it: the caller may
 * use its lock or atomic operations. One load once revoked. */
static inline void gmg_bias_revoke(gmg_bias_t *b)
{
    if (__builtin_expect(gmg_bias_who(__atomic_load_n(&b->owner, __ATOMIC_ACQUIRE)) != GMG_BIAS_NONE, 0))
        gmg_bias_revoke_slow(b);
}

/* gmg_bias_enter, and where it says no, gmg_bias_revoke: inside by the
 * bias (gmg_bias_take: 1; _take_flag: the flag to leave by), or revoked
 * (0, NULL: the caller takes the lock, then checks gmg_bias_revoked under
 * it). A revoked object, the usual state of a program's objects
 * while two of its threads use them, costs one load and compare. */
static inline uint8_t *gmg_bias_take_flag(gmg_bias_t *b)
{
    uint32_t o = __atomic_load_n(&b->owner, __ATOMIC_ACQUIRE);
    if (gmg_bias_who(o) == GMG_BIAS_NONE)
        return NULL;
    uint8_t *busy = gmg_bias_enter_flag(b, o);
    if (__builtin_expect(busy != NULL, 1))
        return busy;
    gmg_bias_revoke_slow(b);
    return NULL;
}
static inline int gmg_bias_take(gmg_bias_t *b) { return gmg_bias_take_flag(b) != NULL; }

/* Under the object's lock, taken after gmg_bias_take said 0: 1, the object
 * is still revoked (the lock is the caller's); 0, its bias was given back
 * meanwhile (the caller lets the lock go, and takes it again). */
static inline int gmg_bias_revoked(const gmg_bias_t *b)
{
    /* an acquire: the revocation read here may be a later one than the lock's
     * last holder saw, after an owner's plain stores, which the revoker's
     * acquire of busy = 0 and release of the revocation pass on */
    return gmg_bias_who(__atomic_load_n(&b->owner, __ATOMIC_ACQUIRE)) == GMG_BIAS_NONE;
}

/* Giving a revoked object back. 1: the bias is now the caller's (it was
 * revoked, a bias may be given, and the object has had fewer than
 * GMG_BIAS_TENURES owners); it enters as its owner from its next use, its
 * present one, if any, finishing the way it began. */
int gmg_bias_reclaim(gmg_bias_t *b);

/* A lock-based object's regain count: kept beside it, written under its
 * lock. */
typedef struct {
    uint32_t taker;   /* the last taker's token */
    uint32_t run;     /* its takes in a row, less one */
    uint32_t regains; /* how often the bias was given back */
} gmg_bias_turns_t;
#define GMG_BIAS_REGAIN 16u

/* The takes in a row an object's next regain needs, after `regains`: the
 * first's doubled each time, up to 1,024 times (with at most
 * GMG_BIAS_TENURES - 1 regains in all). */
#define GMG_BIAS_REGAIN_DOUBLINGS 10u
static inline uint64_t gmg_bias_regain_after(uint32_t regains, uint32_t base)
{
    return (uint64_t)base << (regains < GMG_BIAS_REGAIN_DOUBLINGS ? regains : GMG_BIAS_REGAIN_DOUBLINGS);
}

/* Called by each taker of a revoked object, under its lock, as it lets the
 * lock go (its changes made: a signal handler of its own that enters by the
 * bias given back finds the object whole): after a first take, the
 * GMG_BIAS_REGAIN << regains -th more in a row by one thread gives the bias
 * back to it. */
static inline void gmg_bias_note_take(gmg_bias_t *b, gmg_bias_turns_t *t)
{
    uint32_t me = gmg_bias_me();
    if (t->taker != me) {
        t->taker = me;
        t->run = 0;
    } else if (__builtin_expect(++t->run >= gmg_bias_regain_after(t->regains, GMG_BIAS_REGAIN), 0)) {
        t->run = 0;
        t->regains += gmg_bias_reclaim(b);
    }
}

/* Many objects at once, with one barrier: gmg_bias_drop on each (1: it
 * had an owner, and is now revoking), then one gmg_bias_barrier, then
 * gmg_bias_settled on each dropped (1: revoked; 0: its owner is inside),
 * then gmg_bias_settle on those whose owner was inside (which waits for
 * it: the others are free meanwhile), then gmg_bias_revoke on each (for
 * those another thread was revoking meanwhile). */
int gmg_bias_drop(gmg_bias_t *b);
void gmg_bias_barrier(void);
int gmg_bias_settled(gmg_bias_t *b);
void gmg_bias_settle(gmg_bias_t *b);

/* In a forked child: no owner, no bias, nobody inside; and no bias given
 * any more (gmg_bias_atfork_child: its barrier is not registered). */
void gmg_bias_forget(gmg_bias_t *b);
void gmg_bias_atfork_child(void);

#endif
