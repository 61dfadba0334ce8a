/* dumpsig.c - see dumpsig.h. */
#define _GNU_SOURCE
#include "report/dumpsig.h"

#include "base/config.h"
#include "base/export.h"
#include "base/log.h"
#include "report/reporter.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);

static int active_sig;                  /* the signal we own, 0 if none  */
static struct sigaction program_action; /* the program's handler, chained */
static pthread_mutex_t start_mu = PTHREAD_MUTEX_INITIALIZER;

static sigaction_fn real_sigaction(void)
{
    static sigaction_fn fn;
    sigaction_fn f = __atomic_load_n(&fn, __ATOMIC_ACQUIRE);
    if (!f) {
        /* our own dlsym passes RTLD_NEXT on to glibc's as a tail call:
         * the next sigaction after this library, libc's */
        f = (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
        __atomic_store_n(&fn, f, __ATOMIC_RELEASE);
    }
    return f;
}

static void on_signal(int sig, siginfo_t *info, void *uctx)
{
    gmg_reporter_wake();
    struct sigaction pa = program_action;
    if (pa.sa_flags & SA_SIGINFO) {
        if (pa.sa_sigaction)
            pa.sa_sigaction(sig, info, uctx);
    } else if (pa.sa_handler != SIG_DFL && pa.sa_handler != SIG_IGN && pa.sa_handler) {
        pa.sa_handler(sig);
    }
}

void gmg_dumpsig_arm(void)
{
    int sig = gmg_cfg.signal;
    if (!sig || !real_sigaction())
        return;
    pthread_mutex_lock(&start_mu);
    if (active_sig) {
        pthread_mutex_unlock(&start_mu);
        return;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (real_sigaction()(sig, &sa, &program_action) == 0)
        __atomic_store_n(&active_sig, sig, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&start_mu);
    gmg_debug("dump signal %d armed", sig);
}

/* Interposed so that the program's handler for our signal is chained, not
 * lost, whichever of us installs first. Other signals pass straight on. */
GMG_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    sigaction_fn real = real_sigaction();
    if (!real) {
        errno = ENOSYS;
        return -1;
    }
    if (sig != __atomic_load_n(&active_sig, __ATOMIC_ACQUIRE) || sig == 0)
        return real(sig, act, old);
    if (old)
        *old = program_action;
    if (act)
        program_action = *act;
    return 0;
}

GMG_EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(sig, &sa, &old) != 0)
        return SIG_ERR;
    return (old.sa_flags & SA_SIGINFO) ? (sighandler_t)(void *)old.sa_sigaction : old.sa_handler;
}
