/* dumper.c - see dumper.h. */
#define _GNU_SOURCE
#include "dumper.h"

#include "config.h"
#include "hooks.h"
#include "log.h"
#include "report.h"
#include "resolve.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);

static int wake_fd[2] = { -1, -1 };
static int active_sig;                  /* the signal we own, 0 if none  */
static struct sigaction program_action; /* the program's handler, chained */
static pthread_mutex_t start_mu = PTHREAD_MUTEX_INITIALIZER;

static sigaction_fn real_sigaction(void)
{
    static sigaction_fn fn;
    sigaction_fn f = __atomic_load_n(&fn, __ATOMIC_ACQUIRE);
    if (!f) {
        f = (sigaction_fn)gmg_real_dlsym(RTLD_NEXT, "sigaction");
        __atomic_store_n(&fn, f, __ATOMIC_RELEASE);
    }
    return f;
}

static void on_signal(int sig, siginfo_t *info, void *uctx)
{
    int saved = errno;
    char c = 1;
    if (wake_fd[1] >= 0 && write(wake_fd[1], &c, 1) < 0) {
        /* pipe full: a dump is already pending */
    }
    struct sigaction pa = program_action;
    errno = saved;
    if (pa.sa_flags & SA_SIGINFO) {
        if (pa.sa_sigaction)
            pa.sa_sigaction(sig, info, uctx);
    } else if (pa.sa_handler != SIG_DFL && pa.sa_handler != SIG_IGN && pa.sa_handler) {
        pa.sa_handler(sig);
    }
}

static void *reporter(void *arg)
{
    (void)arg;
    char buf[64];
    for (;;) {
        ssize_t n = read(wake_fd[0], buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return NULL;
        gmg_report_now(GMG_TRIGGER_SIGNAL);
    }
}

static int start_thread(void)
{
    if (pipe2(wake_fd, O_CLOEXEC) != 0)
        return -1;
    fcntl(wake_fd[1], F_SETFL, O_NONBLOCK);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&t, &attr, reporter, NULL);
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        close(wake_fd[0]);
        close(wake_fd[1]);
        wake_fd[0] = wake_fd[1] = -1;
        return -1;
    }
    return 0;
}

void gmg_dumper_start(void)
{
    int sig = gmg_cfg.signal;
    if (!sig || !real_sigaction())
        return;
    pthread_mutex_lock(&start_mu);
    if (active_sig) {
        pthread_mutex_unlock(&start_mu);
        return;
    }
    if (start_thread() != 0) {
        pthread_mutex_unlock(&start_mu);
        gmg_error("cannot start the report thread: the dump signal is off");
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

void gmg_dumper_atfork_child(void)
{
    /* the reporter thread did not survive fork: start another */
    if (!active_sig)
        return;
    if (wake_fd[0] >= 0)
        close(wake_fd[0]);
    if (wake_fd[1] >= 0)
        close(wake_fd[1]);
    wake_fd[0] = wake_fd[1] = -1;
    start_thread();
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
