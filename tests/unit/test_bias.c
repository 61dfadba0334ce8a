/*
 * test_bias.c - base/bias.h: the owner of a biased object and a thread that
 * revokes it are never inside at once. In each of many rounds a fresh
 * object's owner adds to a plain counter inside it (or, once refused, under
 * the object's lock), slowly enough that the two overlap if the exclusion
 * fails, while another thread, after a varying delay, revokes the object
 * (alone, or with others at one barrier) and adds under the lock: every
 * round's counter must come out exact, and nobody may be seen inside with
 * another. Also: no bias before gmg_bias_start; an owner's signal handler
 * entering the object it interrupted is refused; a revoked object stays
 * revoked; a forgotten one has no owner.
 * Prints "bias: N rounds exact, M revoked while the owner was inside" and
 * exits 0, or says what was wrong and exits 1.
 */
#define _GNU_SOURCE
#include "base/bias.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

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
        if (__atomic_load_n(&objs[0].bias.busy, __ATOMIC_RELAXED))
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
    objs[0].bias.owner = 7;
    objs[0].bias.busy = 1;
    gmg_bias_forget(&objs[0].bias);
    if (objs[0].bias.owner != GMG_BIAS_NONE || objs[0].bias.busy) {
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
    if (overlaps) {
        printf("FAIL: two threads inside at once\n");
        failures++;
    }
    if (failures)
        return 1;
    printf("bias: %d rounds exact, %ld revoked while the owner was inside\n", ROUNDS, caught_inside);
    return 0;
}
