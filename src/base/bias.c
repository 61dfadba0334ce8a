/* bias.c - see bias.h: tokens, claims and revocation. */
#define _GNU_SOURCE
#include "base/bias.h"

#include "base/lock.h"

#include <errno.h>
#include <string.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

__thread uint32_t gmg_bias_token_tl __attribute__((tls_model("initial-exec")));

/* The tokens given out: 64 bits, never wrapping back to one a live thread
 * holds (two threads of one token would both enter its objects). */
static uint64_t next_token;
static int bias_on; /* the barrier was registered: a bias may be given */

static long membarrier(int cmd) { return syscall(SYS_membarrier, cmd, 0, 0); }

void gmg_bias_start(void)
{
    int saved = errno;
    long cmds = membarrier(MEMBARRIER_CMD_QUERY);
    if (cmds >= 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
        membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0)
        __atomic_store_n(&bias_on, 1, __ATOMIC_RELEASE);
    errno = saved;
}

uint32_t gmg_bias_token_new(void)
{
    /* 1 up; past the 2^28 - 4 th thread, nobody's (never an owner) */
    uint64_t n = __atomic_add_fetch(&next_token, 1, __ATOMIC_RELAXED);
    uint32_t t = n < GMG_BIAS_NOBODY ? (uint32_t)n : GMG_BIAS_NOBODY;
    gmg_bias_token_tl = t;
    return t;
}

#ifdef GMG_BIAS_TEST_HOOKS /* tests/unit/test_bias.c only */
void gmg_bias_test_tokens_given(uint64_t n);
void gmg_bias_test_tokens_given(uint64_t n) { __atomic_store_n(&next_token, n, __ATOMIC_RELAXED); }
#endif

int gmg_bias_claim(gmg_bias_t *b, uint32_t me)
{
    uint32_t none = 0;
    return __atomic_load_n(&bias_on, __ATOMIC_ACQUIRE) && me != GMG_BIAS_NOBODY &&
           __atomic_compare_exchange_n(&b->owner, &none, me, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
}

int gmg_bias_reclaim(gmg_bias_t *b)
{
    uint32_t o = __atomic_load_n(&b->owner, __ATOMIC_ACQUIRE), next = gmg_bias_tenure(o) + 1, me = gmg_bias_me();
    return __atomic_load_n(&bias_on, __ATOMIC_ACQUIRE) && me != GMG_BIAS_NOBODY && gmg_bias_who(o) == GMG_BIAS_NONE &&
           next < GMG_BIAS_TENURES &&
           __atomic_compare_exchange_n(&b->owner, &o, gmg_bias_word(next, me), 0, __ATOMIC_ACQ_REL,
                                       __ATOMIC_RELAXED);
}

int gmg_bias_drop(gmg_bias_t *b)
{
    uint32_t o = __atomic_load_n(&b->owner, __ATOMIC_ACQUIRE);
    while (gmg_bias_who(o) != GMG_BIAS_NONE && gmg_bias_who(o) != GMG_BIAS_REVOKING) {
        /* never owned: nobody can be inside, and a claim after this fails */
        uint32_t to = o == 0 ? GMG_BIAS_NONE : (o & ~GMG_BIAS_WHO) | GMG_BIAS_REVOKING;
        if (__atomic_compare_exchange_n(&b->owner, &o, to, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            return o != 0;
    }
    return 0;
}

/* Not nanosleep: glibc's is a cancellation point, and a thread cancelled
 * while waiting here would leave the object it holds (a shard, inside
 * which it revokes the peak word's bias) held for ever. */
static void nap_ns(long ns)
{
    const struct timespec nap = { 0, ns };
    (void)syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &nap, NULL);
}

/* Every running thread of the process passes a full barrier (a thread not
 * running passes one as it is switched out). Registered at start-up, the
 * expedited command fails only for want of memory for its CPU mask, for a
 * moment: it is tried again, then the global command, the slow way to the
 * same end. Should both fail (the global one is refused on nohz_full
 * CPUs), a nap of 10 ms stands in for the barrier: the owner's busy = 1,
 * stored before its read of the bias, leaves its CPU's store buffer within
 * nanoseconds, and a switch away from the CPU is itself a barrier. */
void gmg_bias_barrier(void)
{
    int saved = errno;
    for (int i = 0; i < 3; i++) {
        if (membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0)
            goto done;
        if (errno != ENOMEM)
            break;
        nap_ns(1000000);
    }
    if (membarrier(MEMBARRIER_CMD_GLOBAL) != 0)
        nap_ns(10000000);
done:
    errno = saved;
}

/* One more round of a wait for another thread's few instructions: a spin,
 * then naps (the thread may have been switched out, or stopped), noted as
 * a lock's wait is (base/lock.h: the report thread's waiting must not look
 * like work to a fatal signal's handler). `noted`: the caller's, 0 at first. */
static void wait_round(unsigned i, int *noted)
{
    if (i < 64) {
        gmg_cpu_relax();
        return;
    }
    if (gmg_lock_wait_note && !*noted) {
        gmg_lock_note_wait(gmg_lock_wait_note, 1);
        *noted = 1;
    }
    nap_ns(50000);
}

static void wait_done(int noted)
{
    if (noted && gmg_lock_wait_note)
        gmg_lock_note_wait(gmg_lock_wait_note, 0);
}

/* A dropped object, after the barrier: its owner out, then revoked. */
static void settle_then(gmg_bias_t *b, void (*out)(void *), void *arg)
{
    int saved = errno, noted = 0;
    uint32_t tenure = gmg_bias_tenure(__atomic_load_n(&b->owner, __ATOMIC_ACQUIRE));
    for (unsigned i = 0; __atomic_load_n(&b->busy[tenure], __ATOMIC_ACQUIRE); i++)
        wait_round(i, &noted);
    wait_done(noted);
    if (out)
        out(arg);
    __atomic_store_n(&b->owner, gmg_bias_word(tenure, GMG_BIAS_NONE), __ATOMIC_RELEASE);
    errno = saved;
}

void gmg_bias_settle(gmg_bias_t *b) { settle_then(b, NULL, NULL); }

void gmg_bias_revoke_slow(gmg_bias_t *b) { gmg_bias_revoke_slow_then(b, NULL, NULL); }

void gmg_bias_revoke_slow_then(gmg_bias_t *b, void (*out)(void *), void *arg)
{
    int saved = errno, noted = 0;
    for (unsigned i = 0;; i++) {
        uint32_t o = gmg_bias_who(__atomic_load_n(&b->owner, __ATOMIC_ACQUIRE));
        if (o == GMG_BIAS_NONE)
            break;
        if (o != GMG_BIAS_REVOKING) { /* owned (again: given back since), or never */
            if (gmg_bias_drop(b)) {
                gmg_bias_barrier();
                settle_then(b, out, arg);
                break;
            }
            continue; /* another thread changed it first: look again */
        }
        wait_round(i, &noted); /* another thread is revoking it: wait for it to finish */
    }
    wait_done(noted);
    errno = saved;
}

void gmg_bias_atfork_child(void)
{
    /* the child is a process of its own, whose barrier is not registered */
    __atomic_store_n(&bias_on, 0, __ATOMIC_RELEASE);
}

int gmg_bias_settled(gmg_bias_t *b)
{
    uint32_t tenure = gmg_bias_tenure(__atomic_load_n(&b->owner, __ATOMIC_ACQUIRE));
    if (__atomic_load_n(&b->busy[tenure], __ATOMIC_ACQUIRE))
        return 0;
    __atomic_store_n(&b->owner, gmg_bias_word(tenure, GMG_BIAS_NONE), __ATOMIC_RELEASE);
    return 1;
}

void gmg_bias_forget(gmg_bias_t *b)
{
    b->owner = GMG_BIAS_NONE;
    memset(b->busy, 0, sizeof b->busy);
}
