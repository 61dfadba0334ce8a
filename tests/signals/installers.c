/*
 * installers.c - after the guard armed SIGUSR1, a handler installed with one
 * of libc's installers other than sigaction, then two signals, each waited
 * for in its dump (GPUMEM_REPORT=DIR/d.%n.txt); sigset also holds the signal
 * (SIG_HOLD) and releases it.
 *
 *   installers HOW DIR   HOW: signal, bsd_signal, ssignal, sysv_signal,
 *                        __sysv_signal, sigset, sigignore
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include "../integration/testlib.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

static volatile sig_atomic_t inst_calls;
static void inst_handler(int sig) { (void)sig; inst_calls++; }

/* not declared by <signal.h> under _GNU_SOURCE (POSIX 2008 removed it) */
extern sighandler_t bsd_signal(int sig, sighandler_t handler);

static int dump_made(const char *dir, int n)
{
    char path[4200];
    struct stat st;
    snprintf(path, sizeof path, "%s/d.%d.txt", dir, n);
    for (int i = 0; i < 300 && stat(path, &st) != 0; i++)
        usleep(10000);
    return stat(path, &st) == 0;
}

static const char *handler_name(sighandler_t h)
{
    return h == SIG_DFL ? "SIG_DFL" : h == SIG_IGN ? "SIG_IGN" : h == SIG_HOLD ? "SIG_HOLD"
         : h == inst_handler ? "handler" : h == SIG_ERR ? "SIG_ERR" : "other";
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations" /* sigset, sigignore */
static void installers(const char *how, const char *dir)
{
    leak_before_exit(); /* the guard has armed SIGUSR1 */
    sighandler_t prev = SIG_ERR;
    char hold[160] = "";
    if (!strcmp(how, "signal")) prev = signal(SIGUSR1, inst_handler);
    else if (!strcmp(how, "bsd_signal")) prev = bsd_signal(SIGUSR1, inst_handler);
    else if (!strcmp(how, "ssignal")) prev = ssignal(SIGUSR1, inst_handler);
    else if (!strcmp(how, "sysv_signal")) prev = sysv_signal(SIGUSR1, inst_handler);
    else if (!strcmp(how, "__sysv_signal")) prev = __sysv_signal(SIGUSR1, inst_handler); /* signal() in strict ISO C */
    else if (!strcmp(how, "sigignore")) prev = sigignore(SIGUSR1) == 0 ? SIG_DFL : SIG_ERR;
    else if (!strcmp(how, "sigset")) {
        prev = sigset(SIGUSR1, inst_handler);
        /* held: the action stays, the signal waits in the mask; released:
         * it is delivered (one dump, one call) */
        sighandler_t held = sigset(SIGUSR1, SIG_HOLD);
        kill(getpid(), SIGUSR1);
        usleep(100000);
        int calls_held = inst_calls;
        sighandler_t released = sigset(SIGUSR1, inst_handler);
        snprintf(hold, sizeof hold, "; hold returned %s, calls while held %d, release returned %s, dump %s",
                 handler_name(held), calls_held, handler_name(released), dump_made(dir, 1) ? "made" : "missing");
        inst_calls = 0;
    }
    struct sigaction now;
    sigaction(SIGUSR1, NULL, &now);
    int f = now.sa_flags;
    printf("installers %s: previous %s, now %s, flags%s%s%s%s, mask %s", how, handler_name(prev),
           handler_name(now.sa_handler), f & SA_RESTART ? " RESTART" : "", f & SA_RESETHAND ? " RESETHAND" : "",
           f & SA_NODEFER ? " NODEFER" : "", f & (SA_RESTART | SA_RESETHAND | SA_NODEFER) ? "" : " none",
           sigismember(&now.sa_mask, SIGUSR1) ? "USR1" : "empty");
    int first = hold[0] ? 2 : 1, dumps = 0;
    for (int i = 0; i < 2; i++) {
        kill(getpid(), SIGUSR1);
        dumps += dump_made(dir, first + i);
    }
    sigaction(SIGUSR1, NULL, &now);
    printf("%s; 2 signals: dumps %d, handler calls %d, then %s\n", hold, dumps, (int)inst_calls,
           handler_name(now.sa_handler));
}
#pragma GCC diagnostic pop

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: installers HOW DIR\n");
        return 2;
    }
    tl_setup(0);
    installers(argv[1], argv[2]);
    fflush(stdout);
    return 0;
}
