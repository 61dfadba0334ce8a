/*
 * dumpsig.c - see dumpsig.h.
 *
 * The program's action for the dump signal is kept in a few slots, each
 * under a sequence count: an installer (sigaction/signal, from any thread,
 * even from a handler) writes the slot after the current one and then makes
 * it current; the handler copies the current slot word by word and retries
 * if the count moved. So the handler never sees a half-written action, and
 * never calls an SA_SIGINFO handler as a plain one. Installers are
 * serialised by a spin lock held with every signal blocked.
 *
 * The handler the kernel runs is ours, installed with the program's own
 * sa_flags (less SA_RESETHAND, which is emulated: the first delivery resets
 * the program's action to SIG_DFL) and sa_mask, so that SA_RESTART, EINTR,
 * SA_NODEFER and the mask behave as without the guard. Without a program
 * handler, ours runs with SA_RESTART and an empty mask.
 *
 * libc's other installers (bsd_signal, ssignal, sysv_signal, __sysv_signal
 * (what signal() is in strict ISO C), sigset, sigignore) call its
 * sigaction internally, past this one: each is interposed too, for the
 * dump signal and fatalsig.c's three, and becomes a call of our sigaction
 * with the flags and mask that installer gives, so that all of them share
 * the slots above (fatalsig.c's records, for its three).
 *
 * A vfork child shares these slots with its parent: its installations (a
 * signal(SIGUSR1, SIG_DFL) before exec) set its own kernel action only and
 * never the slots (base/self.h tells it from its parent by the pid).
 */
#define _GNU_SOURCE
#include "report/dumpsig.h"

#include "base/config.h"
#include "base/dumpask.h"
#include "base/export.h"
#include "base/lock.h"
#include "base/log.h"
#include "base/self.h"
#include "report/fatalsig.h"
#include "report/reporter.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
typedef sighandler_t (*signal_fn)(int, sighandler_t);

struct action {
    struct sigaction sa;
    unsigned long gen;          /* which installation this is */
};

#define WORDS ((sizeof(struct action) + sizeof(uintptr_t) - 1) / sizeof(uintptr_t))
#define SLOTS 4

struct slot {
    unsigned seq;               /* odd while being written */
    uintptr_t w[WORDS];
};

static int active_sig;          /* the signal we own, 0 if none */
static struct slot slots[SLOTS];
static unsigned cur;            /* the current slot */
static unsigned long gens;      /* installations so far, under wlock */
static int wlock;

/* The next definition of `name` after this library (libc's), looked up
 * once: our own dlsym passes RTLD_NEXT on to glibc's as a tail call. */
static void *next_symbol(void **cache, const char *name)
{
    void *f = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
    if (!f) {
        f = dlsym(RTLD_NEXT, name);
        __atomic_store_n(cache, f, __ATOMIC_RELEASE);
    }
    return f;
}

static sigaction_fn real_sigaction(void)
{
    static void *fn;
    return (sigaction_fn)next_symbol(&fn, "sigaction");
}

/* ---------------------------------------------------------------- slots */

static void read_action(struct action *out)
{
    for (;;) {
        unsigned i = __atomic_load_n(&cur, __ATOMIC_ACQUIRE);
        struct slot *s = &slots[i];
        unsigned a = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);
        if (a & 1)
            continue; /* wrapped onto a slot being rewritten: look again */
        uintptr_t tmp[WORDS];
        for (size_t k = 0; k < WORDS; k++)
            tmp[k] = __atomic_load_n(&s->w[k], __ATOMIC_RELAXED);
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (__atomic_load_n(&s->seq, __ATOMIC_RELAXED) == a) {
            memcpy(out, tmp, sizeof *out);
            return;
        }
    }
}

static void lock_installers(sigset_t *old) { gmg_siglock(&wlock, old); }
static void unlock_installers(const sigset_t *old) { gmg_sigunlock(&wlock, old); }

static int has_handler(const struct sigaction *sa)
{
    return (sa->sa_flags & SA_SIGINFO) ? sa->sa_sigaction != NULL
                                       : sa->sa_handler != SIG_DFL && sa->sa_handler != SIG_IGN && sa->sa_handler;
}

static void on_signal(int sig, siginfo_t *info, void *uctx);

/* Under the installers' lock: make `sa` the program's action and give the
 * kernel our handler with the matching flags and mask. */
static int publish(int sig, const struct sigaction *sa)
{
    struct action a;
    memset(&a, 0, sizeof a);
    a.sa = *sa;
    a.gen = ++gens;
    uintptr_t tmp[WORDS] = { 0 };
    memcpy(tmp, &a, sizeof a);
    unsigned next = (__atomic_load_n(&cur, __ATOMIC_RELAXED) + 1) % SLOTS;
    struct slot *s = &slots[next];
    unsigned seq = __atomic_load_n(&s->seq, __ATOMIC_RELAXED);
    __atomic_store_n(&s->seq, seq + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    for (size_t k = 0; k < WORDS; k++)
        __atomic_store_n(&s->w[k], tmp[k], __ATOMIC_RELAXED);
    __atomic_store_n(&s->seq, seq + 2, __ATOMIC_RELEASE);
    __atomic_store_n(&cur, next, __ATOMIC_RELEASE);

    struct sigaction k;
    memset(&k, 0, sizeof k);
    k.sa_sigaction = on_signal;
    if (has_handler(sa)) {
        k.sa_flags = (sa->sa_flags | SA_SIGINFO) & ~SA_RESETHAND;
        k.sa_mask = sa->sa_mask;
    } else {
        k.sa_flags = SA_SIGINFO | SA_RESTART;
        sigemptyset(&k.sa_mask);
    }
    return real_sigaction()(sig, &k, NULL);
}

/* SA_RESETHAND: the first delivery of installation `gen` resets the
 * program's action to SIG_DFL and runs the handler; a delivery that finds
 * it reset already does not. */
static int take_once(int sig, unsigned long gen)
{
    sigset_t old;
    struct action a;
    int mine = 0;
    lock_installers(&old);
    read_action(&a);
    if (a.gen == gen) {
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
        publish(sig, &dfl);
        mine = 1;
    }
    unlock_installers(&old);
    return mine;
}

static void on_signal(int sig, siginfo_t *info, void *uctx)
{
    int saved = errno;
    if (info && info->si_code == SI_QUEUE && info->si_value.sival_int == GMG_DUMP_ASK)
        gmg_reporter_dump_for(info->si_pid); /* gpumemguard dump: told where it went (base/dumpask.h) */
    gmg_reporter_wake();
    struct action a;
    read_action(&a);
    errno = saved;
    if (!has_handler(&a.sa))
        return; /* SIG_DFL or SIG_IGN: the dump is the whole answer */
    if ((a.sa.sa_flags & SA_RESETHAND) && !take_once(sig, a.gen))
        return;
    errno = saved;
    if (a.sa.sa_flags & SA_SIGINFO)
        a.sa.sa_sigaction(sig, info, uctx);
    else
        a.sa.sa_handler(sig);
}

void gmg_dumpsig_atfork_child(void)
{
    /* another thread may have held the installers' lock at fork, half way
     * through writing a slot (not the current one): even its count again */
    __atomic_store_n(&wlock, 0, __ATOMIC_RELEASE);
    for (int i = 0; i < SLOTS; i++)
        slots[i].seq += slots[i].seq & 1;
}

void gmg_dumpsig_arm(void)
{
    int sig = gmg_cfg.signal;
    if (!sig || !real_sigaction())
        return;
    /* under the installers' lock: once, and never between a program's
     * installation on another thread and its publication */
    sigset_t old;
    struct sigaction prog;
    int armed = 0;
    lock_installers(&old);
    if (!__atomic_load_n(&active_sig, __ATOMIC_ACQUIRE) && real_sigaction()(sig, NULL, &prog) == 0 &&
        publish(sig, &prog) == 0) {
        __atomic_store_n(&active_sig, sig, __ATOMIC_RELEASE);
        armed = 1;
    }
    unlock_installers(&old);
    if (armed)
        gmg_debug("dump signal %d armed", sig);
}

static int is_dump_signal(int sig)
{
    return sig != 0 && sig == gmg_cfg.signal;
}

/* Interposed so that the program's action for our signal is kept and
 * chained, not lost, whichever of us installs first; other signals pass
 * straight on. What the program reads back is what it installed. */
GMG_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    sigaction_fn real = real_sigaction();
    if (!real) {
        errno = ENOSYS;
        return -1;
    }
    if (!is_dump_signal(sig)) {
        if (gmg_fatalsig_covers(sig)) /* SIGTERM, SIGINT, SIGHUP: fatalsig.c's while at their default */
            return gmg_fatalsig_sigaction(real, sig, act, old);
        return real(sig, act, old);
    }
    if (!gmg_self_owns()) {
        /* a vfork child (its parent's memory, another process) or a child
         * made without fork handlers: the recorded action is the parent's
         * and must stay so; the child's own kernel action is set as asked
         * and what it reads back is still what the program installed */
        struct action a;
        if (!__atomic_load_n(&active_sig, __ATOMIC_ACQUIRE))
            return real(sig, act, old);
        read_action(&a);
        int rc = real(sig, act, NULL);
        if (rc == 0 && old)
            *old = a.sa;
        return rc;
    }
    /* the dump signal: under the installers' lock even before it is armed,
     * so that arming on another thread sees this installation, or this one
     * sees the guard's */
    sigset_t mask;
    struct action a;
    int rc = 0;
    lock_installers(&mask);
    if (!__atomic_load_n(&active_sig, __ATOMIC_ACQUIRE)) {
        rc = real(sig, act, old);
        unlock_installers(&mask);
        return rc;
    }
    read_action(&a);
    if (act)
        rc = publish(sig, act);
    unlock_installers(&mask);
    if (rc == 0 && old)
        *old = a.sa;
    return rc;
}

/* ----------------------------------------------- the other installers */

/* The handler a sigaction-style action holds, in signal()'s form. */
static sighandler_t handler_of(const struct sigaction *sa)
{
    return (sa->sa_flags & SA_SIGINFO) ? (sighandler_t)(void *)sa->sa_sigaction : sa->sa_handler;
}

/* `handler` for the dump signal through our sigaction, as a libc installer
 * sets it: `flags`, and a mask of the signal itself or nothing. The
 * previous handler, or SIG_ERR. */
static sighandler_t install_as(int sig, sighandler_t handler, int flags, int block_itself)
{
    if (handler == SIG_ERR) { /* as libc's installers say */
        errno = EINVAL;
        return SIG_ERR;
    }
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sa.sa_flags = flags;
    sigemptyset(&sa.sa_mask);
    if (block_itself)
        sigaddset(&sa.sa_mask, sig);
    if (sigaction(sig, &sa, &old) != 0)
        return SIG_ERR;
    return handler_of(&old);
}

/* libc's own definition of an installer, for every other signal. */
static void *real_installer(void **cache, const char *name)
{
    void *f = next_symbol(cache, name);
    if (!f)
        errno = ENOSYS;
    return f;
}

/* glibc's signal(): BSD semantics (restart, the signal blocked in its
 * handler); for the dump signal (armed or not) and fatalsig.c's three
 * through our sigaction. */
static sighandler_t bsd_install(int sig, sighandler_t handler)
{
    if (!is_dump_signal(sig) && !gmg_fatalsig_covers(sig)) {
        static void *fn;
        signal_fn real = (signal_fn)real_installer(&fn, "signal");
        return real ? real(sig, handler) : SIG_ERR;
    }
    return install_as(sig, handler, SA_RESTART, 1);
}

GMG_EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
    return bsd_install(sig, handler);
}

/* The same function as signal() in glibc (bsd_signal: POSIX's name for
 * BSD semantics; ssignal: SVID's). */
GMG_EXPORT sighandler_t bsd_signal(int sig, sighandler_t handler)
{
    return bsd_install(sig, handler);
}

GMG_EXPORT sighandler_t ssignal(int sig, sighandler_t handler)
{
    return bsd_install(sig, handler);
}

/* System V semantics: reset to SIG_DFL at delivery (emulated, as any
 * SA_RESETHAND), not blocked in its handler, no restart. Through our
 * sigaction for the dump signal and the fatal ones (fatalsig.c). */
static sighandler_t sysv_install(const char *name, void **cache, int sig, sighandler_t handler)
{
    if (!is_dump_signal(sig) && !gmg_fatalsig_covers(sig)) {
        signal_fn real = (signal_fn)real_installer(cache, name);
        return real ? real(sig, handler) : SIG_ERR;
    }
    return install_as(sig, handler, SA_RESETHAND | SA_NODEFER, 0);
}

GMG_EXPORT sighandler_t sysv_signal(int sig, sighandler_t handler)
{
    static void *fn;
    return sysv_install("sysv_signal", &fn, sig, handler);
}

/* What signal() calls in a program built for strict ISO C (no
 * _DEFAULT_SOURCE: glibc's <signal.h> redirects it here). */
GMG_EXPORT sighandler_t __sysv_signal(int sig, sighandler_t handler)
{
    static void *fn;
    return sysv_install("__sysv_signal", &fn, sig, handler);
}

/* SVR4's sigset: SIG_HOLD adds the signal to the calling thread's mask
 * and leaves the action alone; any other disposition is installed (no
 * flags, an empty mask) and the signal taken out of the mask. Returns
 * SIG_HOLD when the signal was blocked before, else the previous handler. */
GMG_EXPORT sighandler_t sigset(int sig, sighandler_t disp)
{
    if (!is_dump_signal(sig) && !gmg_fatalsig_covers(sig)) {
        static void *fn;
        signal_fn real = (signal_fn)real_installer(&fn, "sigset");
        return real ? real(sig, disp) : SIG_ERR;
    }
    sigset_t one, old;
    sigemptyset(&one);
    sigaddset(&one, sig);
    if (disp == SIG_HOLD) {
        struct sigaction now;
        if (pthread_sigmask(SIG_BLOCK, &one, &old) != 0)
            return SIG_ERR;
        if (sigismember(&old, sig))
            return SIG_HOLD;
        return sigaction(sig, NULL, &now) == 0 ? handler_of(&now) : SIG_ERR;
    }
    sighandler_t prev = install_as(sig, disp, 0, 0);
    if (prev == SIG_ERR || pthread_sigmask(SIG_UNBLOCK, &one, &old) != 0)
        return SIG_ERR;
    return sigismember(&old, sig) ? SIG_HOLD : prev;
}

/* SIG_IGN through our sigaction: the dump signal is then the dump alone. */
GMG_EXPORT int sigignore(int sig)
{
    if (!is_dump_signal(sig) && !gmg_fatalsig_covers(sig)) {
        static void *fn;
        int (*real)(int) = (int (*)(int))real_installer(&fn, "sigignore");
        return real ? real(sig) : -1;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_IGN;
    sigemptyset(&sa.sa_mask);
    return sigaction(sig, &sa, NULL);
}
