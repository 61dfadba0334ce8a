/*
 * test_bias.c - base/bias.h: the owner of a biased object and a thread that
 * revokes it are never inside at once. In each of many rounds a fresh
 * object's owner adds to a plain counter inside it (or, once refused, under
 * the object's lock), slowly enough that the two overlap if the exclusion
 * fails, while another thread, after a varying delay, revokes the object
 * (alone, or with others at one barrier) and adds under the lock: every
 * round's counter must come out exact, and nobody may be seen inside with
 * another. Also: no bias before gmg_bias_start; an owner's signal handler
 * entering the object it interrupted is refused; a revoked object is not
 * entered again, but can be claimed back (gmg_bias_reclaim), once; a
 * forgotten one has no owner. Then the bias given back: three threads
 * use one object as a table shard does (the bias, or the lock, taken
 * again where the bias was given back meanwhile, and every take counted
 * toward the next regain), first taking turns in bursts, then all at once,
 * then by turns again with a revoker at random moments: the counter must
 * come out exact, nobody inside with another, and the bias must have been
 * given back. Last, tokens run out: a thread made then never shares the
 * main thread's, and owns nothing.
 * Prints "bias: N rounds exact, M revoked while the owner was inside,
 * R regains" and exits 0, or says what was wrong and exits 1.
 */
#define _GNU_SOURCE
#include "base/bias.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define ROUNDS 3000
#define OWNER_ADDS 400
#define OTHER_ADDS 50

struct obj {
    gmg_bias_t bias;
    pthread_mutex_t mu;
    long counter; /* inside the bias or under mu: deliberately plain */
    int inside;
};

static struct obj objs[2];
static pthread_barrier_t start;
static int failures, overlaps, batch_round;
static long caught_inside;

static void pause_a_little(int n)
{
    for (volatile int i = 0; i < n; i++)
        ;
}

static void add(struct obj *o, int slow)
{
    if (o->inside++)
        __atomic_store_n(&overlaps, 1, __ATOMIC_RELAXED);
    long c = o->counter;
    pause_a_little(slow);
    o->counter = c + 1;
    o->inside--;
}

static void *owner(void *arg)
{
    struct obj *o = arg;
    pthread_barrier_wait(&start);
    for (int i = 0; i < OWNER_ADDS; i++) {
        if (gmg_bias_enter(&o->bias)) {
            add(o, 40);
            gmg_bias_leave(&o->bias);
        } else {
            gmg_bias_revoke(&o->bias);
            pthread_mutex_lock(&o->mu);
            add(o, 40);
            pthread_mutex_unlock(&o->mu);
        }
    }
    return NULL;
}

static void *other(void *arg)
{
    int delay = (int)(long)arg;
    pthread_barrier_wait(&start);
    pause_a_little(delay);
    if (batch_round) { /* both objects, one barrier */
        int dropped[2];
        for (int k = 0; k < 2; k++)
            dropped[k] = gmg_bias_drop(&objs[k].bias);
        gmg_bias_barrier();
        for (int k = 0; k < 2; k++) {
            if (dropped[k] && !gmg_bias_settled(&objs[k].bias)) { /* its owner inside: wait */
                __atomic_add_fetch(&caught_inside, 1, __ATOMIC_RELAXED);
                gmg_bias_settle(&objs[k].bias);
            }
            gmg_bias_revoke(&objs[k].bias);
        }
    } else {
        if (__atomic_load_n(&objs[0].bias.busy[0], __ATOMIC_RELAXED))
            __atomic_add_fetch(&caught_inside, 1, __ATOMIC_RELAXED);
        gmg_bias_revoke(&objs[0].bias);
    }
    for (int k = 0; k < (batch_round ? 2 : 1); k++)
        for (int i = 0; i < OTHER_ADDS; i++) {
            pthread_mutex_lock(&objs[k].mu);
            add(&objs[k], 10);
            pthread_mutex_unlock(&objs[k].mu);
        }
    return NULL;
}

static void fresh(struct obj *o)
{
    memset(&o->bias, 0, sizeof o->bias);
    pthread_mutex_init(&o->mu, NULL);
    o->counter = 0;
    o->inside = 0;
}

/* The bias given back: an object used as core/track.c uses a shard. */
#define TURN_THREADS 3
#define TURNS 60
#define TOGETHER_ADDS 20000

static struct robj {
    gmg_bias_t bias;
    pthread_mutex_t mu;
    gmg_bias_turns_t turns; /* under mu */
    long counter;
    int inside;
} R;
static int turn, turn_phase_done;
static long biased_entries, r_wanted;

static int r_lock(void)
{
    if (gmg_bias_take(&R.bias))
        return 1;
    pthread_mutex_lock(&R.mu);
    while (!gmg_bias_revoked(&R.bias)) { /* given back meanwhile */
        pthread_mutex_unlock(&R.mu);
        gmg_bias_revoke(&R.bias);
        pthread_mutex_lock(&R.mu);
    }
    return 0;
}

static void r_unlock(int biased)
{
    if (biased) {
        gmg_bias_leave(&R.bias);
    } else {
        gmg_bias_note_take(&R.bias, &R.turns);
        pthread_mutex_unlock(&R.mu);
    }
}

static void r_add(int slow)
{
    int biased = r_lock();
    if (R.inside++)
        __atomic_store_n(&overlaps, 1, __ATOMIC_RELAXED);
    long c = R.counter;
    pause_a_little(slow);
    R.counter = c + 1;
    R.inside--;
    if (biased)
        __atomic_add_fetch(&biased_entries, 1, __ATOMIC_RELAXED);
    r_unlock(biased);
}

static void by_turns(int me, unsigned *seed)
{
    for (int t = 0; t < TURNS; t++) {
        while (__atomic_load_n(&turn, __ATOMIC_ACQUIRE) % TURN_THREADS != me)
            sched_yield();
        int n = 50 + (int)(rand_r(seed) % 3000);
        for (int i = 0; i < n; i++)
            r_add(i % 7);
        __atomic_add_fetch(&r_wanted, n, __ATOMIC_RELAXED);
        __atomic_add_fetch(&turn, 1, __ATOMIC_RELEASE);
    }
}

static void *turn_taker(void *arg)
{
    int me = (int)(long)arg;
    unsigned seed = 12345u + (unsigned)me;
    by_turns(me, &seed);
    pthread_barrier_wait(&start);
    for (int i = 0; i < TOGETHER_ADDS; i++) /* all at once */
        r_add(rand_r(&seed) % 20);
    __atomic_add_fetch(&r_wanted, TOGETHER_ADDS, __ATOMIC_RELAXED);
    pthread_barrier_wait(&start);
    by_turns(me, &seed); /* and by turns again, a revoker about */
    return NULL;
}

static void *random_revoker(void *arg)
{
    (void)arg;
    unsigned seed = 99;
    while (!__atomic_load_n(&turn_phase_done, __ATOMIC_ACQUIRE)) {
        pause_a_little((int)(rand_r(&seed) % 20000));
        int biased = r_lock(); /* a take like any other: the bias revoked if given */
        R.counter++;
        __atomic_add_fetch(&r_wanted, 1, __ATOMIC_RELAXED);
        r_unlock(biased);
    }
    return NULL;
}

static void *one_add(void *arg)
{
    (void)arg;
    r_add(0);
    return NULL;
}

/* A taker waiting for the lock while its holder claims the bias back and
 * enters by it: the taker must not go in on the lock alone. */
static void reclaim_race_check(void)
{
    memset(&R, 0, sizeof R);
    pthread_mutex_init(&R.mu, NULL);
    gmg_bias_revoke(&R.bias);
    pthread_mutex_lock(&R.mu);
    pthread_t x;
    pthread_create(&x, NULL, one_add, NULL);
    struct timespec wait = { 0, 20000000 };
    nanosleep(&wait, NULL); /* x found the object revoked, and waits for the lock */
    int entered = gmg_bias_reclaim(&R.bias) && gmg_bias_enter(&R.bias);
    if (entered)
        R.inside++;
    pthread_mutex_unlock(&R.mu);
    if (!entered) {
        printf("FAIL: the lock's holder could not claim the bias back and enter by it\n");
        failures++;
        pthread_join(x, NULL);
        return;
    }
    nanosleep(&wait, NULL);
    int alone = R.inside == 1;
    R.counter++;
    R.inside--;
    gmg_bias_leave(&R.bias);
    pthread_join(x, NULL);
    if (!alone || R.counter != 2) {
        printf("FAIL: a taker of the lock went in while the bias's new owner was inside (counter %ld)\n", R.counter);
        failures++;
    }
}

/* A revoker waiting for another's revocation, which ends and is at once
 * given back: it must revoke again, not wait for ever for "revoked". */
static gmg_bias_t waited_on;
static void *revoke_waited(void *arg)
{
    (void)arg;
    gmg_bias_revoke(&waited_on);
    return NULL;
}

static void revoked_then_given_back_check(void)
{
    __atomic_store_n(&waited_on.owner, GMG_BIAS_REVOKING, __ATOMIC_RELEASE); /* as if another were revoking */
    pthread_t x;
    pthread_create(&x, NULL, revoke_waited, NULL);
    struct timespec wait = { 0, 20000000 };
    nanosleep(&wait, NULL);
    __atomic_store_n(&waited_on.owner, GMG_BIAS_NONE, __ATOMIC_RELEASE);
    int claimed = gmg_bias_reclaim(&waited_on);
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 5;
    if (pthread_timedjoin_np(x, NULL, &until) != 0) {
        printf("FAIL: a revoker waiting for another's revocation hangs once the bias is given back (claimed %d)\n",
               claimed);
        failures++;
        return;
    }
    if (!gmg_bias_revoked(&waited_on)) {
        printf("FAIL: the revoker left the bias given back (owner %u)\n", waited_on.owner);
        failures++;
    }
}

static void regain_check(void)
{
    memset(&R, 0, sizeof R);
    pthread_mutex_init(&R.mu, NULL);
    pthread_barrier_destroy(&start);
    pthread_barrier_init(&start, NULL, TURN_THREADS);
    pthread_t t[TURN_THREADS], rv;
    for (int i = 0; i < TURN_THREADS; i++)
        pthread_create(&t[i], NULL, turn_taker, (void *)(long)i);
    pthread_create(&rv, NULL, random_revoker, NULL);
    for (int i = 0; i < TURN_THREADS; i++)
        pthread_join(t[i], NULL);
    __atomic_store_n(&turn_phase_done, 1, __ATOMIC_RELEASE);
    pthread_join(rv, NULL);
    if (R.counter != r_wanted) {
        printf("FAIL: the bias given back: counter %ld, want %ld\n", R.counter, r_wanted);
        failures++;
    }
    if (R.turns.regains < 3 || !biased_entries) {
        printf("FAIL: threads taking turns got the bias back %u times (%ld entries by it)\n", R.turns.regains,
               biased_entries);
        failures++;
    }
}

/* Tokens are never given twice: the main thread owns an object; the
 * tokens then run out (as after 2^28 threads), and a thread made after
 * that must neither enter the main thread's object by its bias nor own
 * one, nor be given one back: it takes the lock. */
void gmg_bias_test_tokens_given(uint64_t n);
static gmg_bias_t mains, fresh_one;
static int late_entered_mains, late_claimed, late_reclaimed;
static uint32_t late_token;
static void *late_thread(void *arg)
{
    (void)arg;
    late_token = gmg_bias_me();
    late_entered_mains = gmg_bias_enter(&mains);
    if (late_entered_mains)
        gmg_bias_leave(&mains);
    late_claimed = gmg_bias_enter(&fresh_one);
    if (late_claimed)
        gmg_bias_leave(&fresh_one);
    gmg_bias_revoke(&fresh_one);
    late_reclaimed = gmg_bias_reclaim(&fresh_one);
    return NULL;
}

static void tokens_check(void)
{
    if (!gmg_bias_enter(&mains)) {
        printf("FAIL: the main thread could not own an object\n");
        failures++;
        return;
    }
    gmg_bias_leave(&mains);
    /* every token given, and the count past 32 bits: where a count kept in
     * 32 (or 28) bits gives the main thread's token again */
    gmg_bias_test_tokens_given(((uint64_t)1 << 32) + gmg_bias_me() - 1);
    pthread_t x;
    pthread_create(&x, NULL, late_thread, NULL);
    pthread_join(x, NULL);
    if (late_token == gmg_bias_me() || late_entered_mains || late_claimed || late_reclaimed) {
        printf("FAIL: a thread made after the tokens ran out got token %u (the main thread's %u), entered the "
               "main thread's object %d, owned a new one %d, was given one back %d\n",
               late_token, gmg_bias_me(), late_entered_mains, late_claimed, late_reclaimed);
        failures++;
    }
}

/* A signal handler on the owner's thread, run while it is inside. */
static volatile int nested_entered = -1;
static void on_usr1(int sig)
{
    (void)sig;
    nested_entered = gmg_bias_enter(&objs[0].bias);
    if (nested_entered)
        gmg_bias_leave(&objs[0].bias);
}

int main(void)
{
    /* before start-up: no bias is given, and the object is revoked */
    fresh(&objs[0]);
    if (gmg_bias_enter(&objs[0].bias) || __atomic_load_n(&objs[0].bias.owner, __ATOMIC_RELAXED) != 0) {
        printf("FAIL: a bias given before gmg_bias_start\n");
        failures++;
    }
    gmg_bias_revoke(&objs[0].bias);
    if (objs[0].bias.owner != GMG_BIAS_NONE) {
        printf("FAIL: an object never owned is not revoked (owner %u)\n", objs[0].bias.owner);
        failures++;
    }

    gmg_bias_start();
    fresh(&objs[0]);
    if (!gmg_bias_enter(&objs[0].bias)) {
        printf("SKIP: no bias here (membarrier refused): bias: 0 rounds\n");
        return 0;
    }
    /* a handler of the owner's, run while it is inside: refused */
    signal(SIGUSR1, on_usr1);
    raise(SIGUSR1);
    gmg_bias_leave(&objs[0].bias);
    if (nested_entered != 0) {
        printf("FAIL: a signal handler entered the object its thread was inside\n");
        failures++;
    }
    if (!gmg_bias_enter(&objs[0].bias)) {
        printf("FAIL: the owner refused after its handler\n");
        failures++;
    } else {
        gmg_bias_leave(&objs[0].bias);
    }
    gmg_bias_revoke(&objs[0].bias);
    if (gmg_bias_enter(&objs[0].bias) || objs[0].bias.owner != GMG_BIAS_NONE) {
        printf("FAIL: a revoked object entered again\n");
        failures++;
    }
    if (!gmg_bias_reclaim(&objs[0].bias) || gmg_bias_reclaim(&objs[0].bias) || !gmg_bias_enter(&objs[0].bias)) {
        printf("FAIL: a revoked object not claimed back once, or not entered by its new owner\n");
        failures++;
    } else {
        gmg_bias_leave(&objs[0].bias);
    }
    gmg_bias_revoke(&objs[0].bias);
    objs[0].bias.owner = 7;
    objs[0].bias.busy[0] = 1;
    gmg_bias_forget(&objs[0].bias);
    if (objs[0].bias.owner != GMG_BIAS_NONE || objs[0].bias.busy[0]) {
        printf("FAIL: a forgotten object keeps its owner\n");
        failures++;
    }

    pthread_barrier_init(&start, NULL, 3);
    for (int r = 0; r < ROUNDS; r++) {
        batch_round = r % 3 == 2;
        fresh(&objs[0]);
        fresh(&objs[1]);
        pthread_t a, b, c;
        pthread_create(&a, NULL, owner, &objs[0]);
        pthread_create(&b, NULL, owner, &objs[1]);
        pthread_create(&c, NULL, other, (void *)(long)((r * 7919) % 20000));
        pthread_join(a, NULL);
        pthread_join(b, NULL);
        pthread_join(c, NULL);
        long want0 = OWNER_ADDS + OTHER_ADDS, want1 = OWNER_ADDS + (batch_round ? OTHER_ADDS : 0);
        if (objs[0].counter != want0 || objs[1].counter != want1) {
            printf("FAIL: round %d: counters %ld and %ld, want %ld and %ld\n", r, objs[0].counter, objs[1].counter,
                   want0, want1);
            failures++;
            break;
        }
        if (objs[0].bias.owner != GMG_BIAS_NONE) {
            printf("FAIL: round %d: revoked, yet owner %u\n", r, objs[0].bias.owner);
            failures++;
            break;
        }
    }
    reclaim_race_check();
    revoked_then_given_back_check();
    regain_check();
    tokens_check();
    if (overlaps) {
        printf("FAIL: two threads inside at once\n");
        failures++;
    }
    if (failures)
        return 1;
    printf("bias: %d rounds exact, %ld revoked while the owner was inside, %u regains\n", ROUNDS, caught_inside,
           R.turns.regains);
    return 0;
}
