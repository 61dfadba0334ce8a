/*
 * fatalsig.c - see fatalsig.h.
 *
 * The handler neither formats, allocates nor locks: it hands the signal to
 * the reporter thread (gmg_reporter_fatal), which writes the report and then
 * ends the process with the same signal. Meanwhile the interrupted thread
 * stays in the handler, so that the program runs on no further: a sleep or
 * a wait that a returning handler would have cut short (SA_RESTART restarts
 * neither), a raise() that would have returned, would each let the program
 * go on and perhaps exit 0 before the report ended it. It stays only while
 * the report moves on (the reporter thread's CPU time grows): a report
 * waiting for something the interrupted thread holds (malloc's locks in
 * the middle of a fork, the loader's lock in a constructor, a shard lock of
 * the guard's) stops it, and after STALL_MS of that the handler returns, as
 * it always did, so that the thread lets go and the report can end; the
 * program then runs on for the milliseconds that takes. A thread
 * interrupted in the guard's own code, the driver's, NVML's or the
 * loader's (ranges found at arming), where that is likely, returns at once.
 * A handler the program installs with SA_RESETHAND (signal() in a program
 * built for strict ISO C: System V semantics) would leave the default
 * action in the kernel at its first delivery, unknown to the guard, and a
 * second signal would then end the process with no report. The kernel
 * gets once_handler for it instead, with the program's flags (less
 * SA_RESETHAND) and mask: its first delivery puts the guard's handler
 * back, the program's action reading SIG_DFL from then on as after the
 * kernel's reset, then runs the program's handler; a delivery that finds
 * that done is one the default action takes: the report.
 * A fatal signal within TWICE_MS of the first, the same one sent twice (a
 * process group's and the command's forwarding) or another (SIGTERM then
 * SIGHUP), waits as the first, and the process ends by the first. Where no
 * thread can write the report (it could not start; a child forked without
 * fork handlers) the handler ends the process at once, as the default
 * action would; a second signal later ends it at once by the first.
 */
#define _GNU_SOURCE
#include "report/fatalsig.h"

#include "base/config.h"
#include "base/lock.h"
#include "base/log.h"
#include "base/self.h"
#include "report/reporter.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#define STALL_MS 250 /* the report no further for this long: it waits for this thread */

/* Code where an interrupted thread must not wait (the guard's own, the
 * driver's, NVML's, the loader's): executable ranges, found at arming. */
#define MAX_RANGES 16
static struct { uintptr_t lo, hi; } ranges[MAX_RANGES];
static int nranges;

static const int fatal_sigs[] = { SIGTERM, SIGINT, SIGHUP };
#define NFATAL (sizeof fatal_sigs / sizeof fatal_sigs[0])

static int owned[NSIG];                 /* our handler is the kernel's action */
static struct sigaction seen[NSIG];     /* the program's (default) action, as it reads it */
static int arming, armed;               /* armed: set under `installers` once the actions are taken */

/* A program's SA_RESETHAND handler not delivered yet (the kernel's action
 * is once_handler): the action as the program reads it. These, `seen` and
 * the kernel's actions of the three signals change under `installers`,
 * which the handlers take too (base/lock.h), in the process that owns the
 * guard's state only: a vfork child (the same memory) or a child made
 * without fork handlers (the lock may have been held at the fork) reads
 * them, unlocked, and sets its own kernel actions alone. */
static int once_on[NSIG];
static struct sigaction once_sa[NSIG];
static int installers;

static gmg_sigaction_fn libc_sigaction(void)
{
    static gmg_sigaction_fn fn;
    gmg_sigaction_fn f = __atomic_load_n(&fn, __ATOMIC_ACQUIRE);
    if (!f) {
        f = (gmg_sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
        __atomic_store_n(&fn, f, __ATOMIC_RELEASE);
    }
    return f;
}

static int is_fatal(int sig)
{
    for (size_t i = 0; i < NFATAL; i++)
        if (fatal_sigs[i] == sig)
            return sig != gmg_cfg.signal; /* the dump signal is dumpsig.c's */
    return 0;
}

int gmg_fatalsig_owned(int sig)
{
    return sig > 0 && sig < NSIG && __atomic_load_n(&owned[sig], __ATOMIC_ACQUIRE);
}

static void on_fatal(int sig, siginfo_t *info, void *uctx);
static void once_handler(int sig, siginfo_t *info, void *uctx);

/* The default action back in the kernel where one of the guard's handlers
 * is there (a handler the program installed meanwhile stays, and gets the
 * signal), and the signal sent to this thread again: async-signal-safe. */
static void die_now(int sig)
{
    struct sigaction dfl, now;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    gmg_sigaction_fn real = libc_sigaction();
    int mine = gmg_self_owns();
    sigset_t mask;
    if (mine)
        gmg_siglock(&installers, &mask);
    if (real && real(sig, NULL, &now) == 0 &&
        (now.sa_sigaction == on_fatal || now.sa_sigaction == once_handler) && real(sig, &dfl, NULL) == 0 && mine) {
        __atomic_store_n(&owned[sig], 0, __ATOMIC_RELEASE);
        once_on[sig] = 0;
    }
    if (mine)
        gmg_sigunlock(&installers, &mask);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    raise(sig); /* pending while blocked (in the handler, on the reporter thread) */
    pthread_sigmask(SIG_UNBLOCK, &one, NULL);
}

static int wanted_object(const char *name)
{
    static const char *const names[] = { "libcuda.so", "libnvidia-ml.so", "ld-linux", "ld64.so" };
    const char *base = strrchr(name, '/');
    base = base ? base + 1 : name;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strncmp(base, names[i], strlen(names[i])) == 0)
            return 1;
    return 0;
}

/* dl_iterate_phdr's callback: the object's executable ranges into ranges[],
 * *arg counting them, when it is one where a thread must not wait. */
static int note_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    int *n = arg, mine = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) { /* the guard's own: the object holding on_fatal */
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && (uintptr_t)on_fatal - lo < ph->p_memsz)
            mine = 1;
    }
    if (!mine && !(info->dlpi_name && wanted_object(info->dlpi_name)))
        return 0;
    for (int i = 0; i < info->dlpi_phnum && *n < MAX_RANGES; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            ranges[*n].lo = info->dlpi_addr + ph->p_vaddr;
            ranges[*n].hi = ranges[*n].lo + ph->p_memsz;
            (*n)++;
        }
    }
    return 0;
}

/* Where the signal interrupted the thread (0 when unknown). */
static uintptr_t interrupted_at(const void *uctx)
{
    const ucontext_t *uc = uctx;
    if (!uc)
        return 0;
#if defined(__x86_64__)
    return (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
    return (uintptr_t)uc->uc_mcontext.pc;
#else
    return 0;
#endif
}

/* The kernel gives each signal it delivers a frame of its own, the later
 * one on top, so that of two stop signals that come at once the handler
 * of the one delivered second runs first, at the very entry of the
 * first's. Which was sent first is the signal the default action would
 * have ended the process by (it ends it as the signal is sent). The
 * frames below that were each interrupted at on_fatal's entry tell, from
 * the arguments the kernel put there (the signal, and the context that
 * handler gets): one pass of the kernel's delivers the signals pending
 * together lowest number first, so a lower frame whose number is higher
 * than the next one's came alone, before the rest were sent. Where the
 * numbers rise from the lowest frame up, they may have been pending
 * together, in an order no longer known, and the highest is taken:
 * SIGTERM before SIGINT before SIGHUP (systemd's SIGTERM, then SIGHUP,
 * ends by SIGTERM). A context interrupted at on_fatal's entry is the
 * kernel's frame for it, or once_handler's call of it, both with these
 * arguments (sigaction answers the program's action, never on_fatal); the
 * next context is followed only where it lies above the one before on
 * the same stack, within a frame's reach, should a caller of on_fatal's
 * own (a raw rt_sigaction reader) have passed less. Returns SIG itself
 * where no frame lies below. */
#define FRAME_REACH (1u << 20)
static int sent_first(int sig, const void *uctx)
{
    int chain[4], n = 0; /* chain[0]: this handler's signal; then the frames below */
    chain[n++] = sig;
    const ucontext_t *uc = uctx;
    while (uc && n < 4 && interrupted_at(uc) == (uintptr_t)on_fatal) {
#if defined(__x86_64__)
        long s = uc->uc_mcontext.gregs[REG_RDI];
        uintptr_t next = (uintptr_t)uc->uc_mcontext.gregs[REG_RDX];
#elif defined(__aarch64__)
        long s = (long)uc->uc_mcontext.regs[0];
        uintptr_t next = (uintptr_t)uc->uc_mcontext.regs[2];
#else
        long s = 0;
        uintptr_t next = 0;
#endif
        if (!is_fatal((int)s))
            break;
        chain[n++] = (int)s;
        if (next <= (uintptr_t)uc || next - (uintptr_t)uc > FRAME_REACH || (next & 7))
            break;
        uc = (const ucontext_t *)next;
    }
    int first = chain[n - 1];
    for (int i = n - 2; i >= 0 && chain[i] > chain[i + 1]; i--)
        first = chain[i];
    return first;
}

/* May the interrupted thread wait in the handler for the report? */
static int may_wait(const void *uctx)
{
    uintptr_t pc = interrupted_at(uctx);
    if (!pc)
        return 0;
    int n = __atomic_load_n(&nranges, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++)
        if (pc - ranges[i].lo < ranges[i].hi - ranges[i].lo)
            return 0;
    return 1;
}

static long long mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A fatal signal this soon after the first is one signal sent twice (a
 * process group's, and the gpumemguard command's forwarding of it to a
 * program with several threads) or one stop sent as two (SIGTERM, then
 * SIGHUP), not the user insisting. */
#define TWICE_MS 1000
static long long first_at; /* when the report was asked for; 0 a moment after */

static void on_fatal(int sig, siginfo_t *info, void *uctx)
{
    (void)info;
    int saved = errno;
    /* a stop signal sent before this one, whose handler has not run yet,
     * asks for the report first: the process ends by it */
    int first = sent_first(sig, uctx), claimed = 0;
    if (first != sig && __atomic_load_n(&owned[first], __ATOMIC_ACQUIRE) && gmg_reporter_fatal(first) == 1) {
        __atomic_store_n(&first_at, mono_ms(), __ATOMIC_RELEASE);
        claimed = 1;
    }
    /* (this signal's action replaced meanwhile: the report claimed for the
     * first still ends the process) */
    int rc = __atomic_load_n(&owned[sig], __ATOMIC_ACQUIRE) ? gmg_reporter_fatal(sig) : claimed ? -first : 0;
    if (rc == 1)
        __atomic_store_n(&first_at, mono_ms(), __ATOMIC_RELEASE);
    /* A report under way (rc -S, S its signal: the reporter's claim
     * itself; the first handler, on another thread, may not have noted its
     * time yet, and then the two came at once): a fatal signal within
     * TWICE_MS of it, the same or another (systemd's SIGTERM then SIGHUP;
     * three signals pending at an unblock, handled one inside the other),
     * waits as the first; the process ends by S, as it would have without
     * the guard (S is the one sent first: sent_first). A later one is the
     * user insisting: it ends at once, by S too. */
    long long at = rc < 0 ? __atomic_load_n(&first_at, __ATOMIC_ACQUIRE) : -1;
    if (at == 0) { /* noted now, should the first handler never note it */
        long long now = mono_ms(), none = 0;
        __atomic_compare_exchange_n(&first_at, &none, now, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    }
    int twice = rc < 0 && (at == 0 || mono_ms() - at < TWICE_MS);
    if (rc == 0) {
        die_now(first); /* no thread to write it: as the default does */
    } else if (rc < 0 && !twice) {
        die_now(gmg_fatalsig_owned(-rc) ? -rc : sig); /* the first signal's end, now */
    } else if (may_wait(uctx)) {
        /* the reporter ends the process once the report is written
         * (async-signal-safe calls only: clock_gettime, nanosleep) */
        long long cpu = gmg_reporter_cpu_ns(), since = mono_ms();
        struct timespec nap = { 0, 2000000 };
        while (cpu >= 0 && mono_ms() - since < STALL_MS) {
            nanosleep(&nap, NULL);
            long long now = gmg_reporter_cpu_ns();
            if (now != cpu) {
                cpu = now;
                since = mono_ms();
            }
        }
        /* stalled (or no thread to watch): go on, as a handler that returns at once would */
    }
    errno = saved;
}

void gmg_fatalsig_atfork_child(void)
{
    __atomic_store_n(&first_at, 0, __ATOMIC_RELAXED); /* the parent's report is not the child's */
    __atomic_store_n(&installers, 0, __ATOMIC_RELAXED); /* another thread may have held it at the fork */
}

void gmg_fatalsig_die(int sig)
{
    /* a handler the program installed meanwhile gets the signal, as it
     * would have had it come a moment later */
    if (__atomic_load_n(&owned[sig], __ATOMIC_ACQUIRE)) {
        die_now(sig);
        for (;;)
            pause(); /* the signal is on its way */
    }
    kill(getpid(), sig);
}

static int is_default(const struct sigaction *sa)
{
    return (sa->sa_flags & SA_SIGINFO) ? sa->sa_sigaction == NULL : sa->sa_handler == SIG_DFL;
}

/* A handler of the program's (not SIG_DFL, SIG_IGN) that the kernel would
 * reset at its first delivery. */
static int is_once(const struct sigaction *sa)
{
    return (sa->sa_flags & SA_RESETHAND) &&
           ((sa->sa_flags & SA_SIGINFO) ? sa->sa_sigaction != NULL
                                        : sa->sa_handler != SIG_DFL && sa->sa_handler != SIG_IGN);
}

static int install(gmg_sigaction_fn real, int sig)
{
    struct sigaction k;
    memset(&k, 0, sizeof k);
    k.sa_sigaction = on_fatal;
    k.sa_flags = SA_SIGINFO | SA_RESTART;   /* a thread that returns (in the guard's code) goes on as if nothing came */
    sigemptyset(&k.sa_mask);
    return real(sig, &k, NULL);
}

int gmg_fatalsig_covers(int sig)
{
    return is_fatal(sig);
}

/* The default action set by the program: the guard's handler in its
 * place (again), reading as that default. Under `installers`. */
static void take(gmg_sigaction_fn real, int sig, const struct sigaction *dfl)
{
    seen[sig] = *dfl;
    once_on[sig] = 0;
    if (install(real, sig) == 0)
        __atomic_store_n(&owned[sig], 1, __ATOMIC_RELEASE);
}

/* The program's SA_RESETHAND handler `sa`: once_handler in the kernel
 * with its flags and mask. Under `installers`; 0 or -1 (errno). */
static int take_once(gmg_sigaction_fn real, int sig, const struct sigaction *sa)
{
    struct sigaction k = *sa;
    k.sa_sigaction = once_handler;
    k.sa_flags = (sa->sa_flags | SA_SIGINFO) & ~SA_RESETHAND;
    if (real(sig, &k, NULL) != 0)
        return -1;
    __atomic_store_n(&owned[sig], 0, __ATOMIC_RELEASE);
    once_sa[sig] = *sa;
    once_on[sig] = 1;
    return 0;
}

/* What the program reads back of an action the kernel holds: the guard's
 * handlers stand for what the program set. Under `installers`. */
static void as_read(int sig, struct sigaction *sa)
{
    if (sa->sa_sigaction == on_fatal)
        *sa = seen[sig];
    else if (sa->sa_sigaction == once_handler)
        *sa = once_sa[sig];
}

static void once_handler(int sig, siginfo_t *info, void *uctx)
{
    int saved = errno;
    struct sigaction prog, dfl;
    memset(&prog, 0, sizeof prog);
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    gmg_sigaction_fn real = libc_sigaction();
    int run = 0;
    if (!gmg_self_owns()) {
        /* a child's own kernel action reset, as the kernel would have;
         * the records (its parent's, or a copy) left alone */
        prog = once_sa[sig];
        if (real)
            real(sig, &dfl, NULL);
        run = 1;
    } else {
        sigset_t old;
        gmg_siglock(&installers, &old);
        if (once_on[sig]) { /* the first delivery: what the kernel's reset would have done */
            prog = once_sa[sig];
            if (real)
                take(real, sig, &dfl);
            run = 1;
        } else if (gmg_fatalsig_owned(sig)) {
            run = -1; /* reset already: the default's turn */
        }
        /* else the program set another action meanwhile, the kernel this
         * one still: nothing (the signal came as the action changed) */
        gmg_sigunlock(&installers, &old);
    }
    errno = saved;
    if (run < 0)
        on_fatal(sig, info, uctx);
    else if (run && (prog.sa_flags & SA_SIGINFO))
        prog.sa_sigaction(sig, info, uctx);
    else if (run)
        prog.sa_handler(sig);
}

void gmg_fatalsig_arm(void)
{
    gmg_sigaction_fn real = libc_sigaction();
    if (!real || __atomic_exchange_n(&arming, 1, __ATOMIC_ACQ_REL))
        return;
    int n = 0;
    dl_iterate_phdr(note_object, &n); /* at the first CUDA use: the driver is loaded */
    __atomic_store_n(&nranges, n, __ATOMIC_RELEASE); /* the ranges, then their count, for the handler */
    sigset_t mask;
    gmg_siglock(&installers, &mask); /* a program's installer, armed now, waits for this */
    for (size_t i = 0; i < NFATAL; i++) {
        int sig = fatal_sigs[i];
        struct sigaction now;
        if (!is_fatal(sig) || real(sig, NULL, &now) != 0)
            continue;
        if (is_once(&now))
            take_once(real, sig, &now);
        if ((now.sa_flags & SA_SIGINFO) || now.sa_handler != SIG_DFL)
            continue; /* the program's handler, or ignored (a background job's SIGINT): left alone */
        take(real, sig, &now);
    }
    __atomic_store_n(&armed, 1, __ATOMIC_RELEASE);
    gmg_sigunlock(&installers, &mask);
}

int gmg_fatalsig_sigaction(gmg_sigaction_fn real, int sig, const struct sigaction *act, struct sigaction *old)
{
    sigset_t mask;
    struct sigaction prev;
    int rc = 0;
    if (!gmg_self_owns()) {
        /* a vfork child or one made without fork handlers: its own kernel
         * action set as asked; the records read, unlocked, never changed */
        rc = real(sig, act, &prev);
        if (rc == 0 && old) {
            as_read(sig, &prev);
            *old = prev;
        }
        return rc;
    }
    gmg_siglock(&installers, &mask); /* before arming too: arming waits for this, or this for arming */
    if (!__atomic_load_n(&armed, __ATOMIC_ACQUIRE)) {
        rc = real(sig, act, old);
        gmg_sigunlock(&installers, &mask);
        return rc;
    }
    if (gmg_fatalsig_owned(sig))
        prev = seen[sig];
    else if (once_on[sig])
        prev = once_sa[sig];
    else
        rc = real(sig, NULL, &prev);
    if (rc == 0 && act) {
        if (is_default(act)) { /* the default: the report stays, or comes back */
            take(real, sig, act);
        } else if (is_once(act)) {
            rc = take_once(real, sig, act);
        } else {
            int mine = gmg_fatalsig_owned(sig), once = once_on[sig];
            __atomic_store_n(&owned[sig], 0, __ATOMIC_RELEASE); /* the program's own from now on */
            once_on[sig] = 0;
            struct sigaction k;
            rc = real(sig, act, &k);
            if (rc != 0) { /* as it was */
                int e = errno;
                if (mine)
                    __atomic_store_n(&owned[sig], 1, __ATOMIC_RELEASE);
                once_on[sig] = once;
                errno = e;
            }
        }
    }
    if (rc == 0)
        as_read(sig, &prev);
    gmg_sigunlock(&installers, &mask);
    if (rc == 0 && old)
        *old = prev;
    return rc;
}
