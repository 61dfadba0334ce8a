/* signame.c - see signame.h. */
#define _GNU_SOURCE
#include "base/signame.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

static const struct { const char *name; int sig; } names[] = {
    { "HUP", SIGHUP }, { "INT", SIGINT }, { "QUIT", SIGQUIT }, { "ILL", SIGILL }, { "TRAP", SIGTRAP },
    { "ABRT", SIGABRT }, { "IOT", SIGIOT }, { "BUS", SIGBUS }, { "FPE", SIGFPE }, { "KILL", SIGKILL },
    { "USR1", SIGUSR1 }, { "SEGV", SIGSEGV }, { "USR2", SIGUSR2 }, { "PIPE", SIGPIPE }, { "ALRM", SIGALRM },
    { "TERM", SIGTERM }, { "STKFLT", SIGSTKFLT }, { "CHLD", SIGCHLD }, { "CLD", SIGCHLD }, { "CONT", SIGCONT },
    { "STOP", SIGSTOP }, { "TSTP", SIGTSTP }, { "TTIN", SIGTTIN }, { "TTOU", SIGTTOU }, { "URG", SIGURG },
    { "XCPU", SIGXCPU }, { "XFSZ", SIGXFSZ }, { "VTALRM", SIGVTALRM }, { "PROF", SIGPROF },
    { "WINCH", SIGWINCH }, { "IO", SIGIO }, { "POLL", SIGPOLL }, { "PWR", SIGPWR }, { "SYS", SIGSYS },
};

/* A whole decimal number of at most 4 digits (no sign, no blanks); -1 if not. */
static int small_number(const char *d)
{
    if (!*d || strlen(d) > 4 || strspn(d, "0123456789") != strlen(d))
        return -1;
    return atoi(d);
}

#define UNKNOWN (-1000)
#define RT_OUTSIDE (-1001)

/* The signal's number from its name or number (a number as written, even
 * 0 or past SIGRTMAX); UNKNOWN when it is neither; RT_OUTSIDE for RTMIN+N
 * or RTMAX-N outside SIGRTMIN..SIGRTMAX. */
static int lookup(const char *n)
{
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(n, names[i].name) == 0)
            return names[i].sig;
    if (strncmp(n, "RTMIN", 5) == 0 || strncmp(n, "RTMAX", 5) == 0) {
        int max = n[3] == 'A';
        const char *r = n + 5;
        int off = 0;
        if (*r && (*r != (max ? '-' : '+') || (off = small_number(r + 1)) < 0))
            return UNKNOWN;
        int s = max ? SIGRTMAX - off : SIGRTMIN + off;
        return s >= SIGRTMIN && s <= SIGRTMAX ? s : RT_OUTSIDE;
    }
    int s = small_number(n);
    return s >= 0 ? s : UNKNOWN;
}

/* Why signal s may not be the dump signal (signame.h), NULL if it may. */
static const char *refusal(int s)
{
    if (s < 1 || s > SIGRTMAX)
        return "no such signal (signals run from 1 to SIGRTMAX)";
    if (s == SIGKILL || s == SIGSTOP)
        return "KILL and STOP cannot be caught";
    if (s > SIGSYS && s < SIGRTMIN)
        return "the C library keeps the signals between SYS and RTMIN for its threads (sigaction refuses them)";
    if (s == SIGSEGV || s == SIGBUS || s == SIGFPE || s == SIGILL || s == SIGTRAP || s == SIGSYS)
        return "the kernel raises it at the program's own fault (a handler that returns runs the faulting "
               "instruction again, or hides the fault)";
    if (s == SIGABRT)
        return "abort() raises it (the program's and GPUMEM_ON_LIMIT=abort's)";
    if (s == SIGPIPE || s == SIGXFSZ)
        return "the kernel raises it at a write to a closed pipe or beyond the file size limit, and the program "
               "would no longer stop there";
    if (s == SIGCHLD)
        return "the kernel raises it whenever a child stops or ends";
    if (s == SIGTTIN || s == SIGTTOU)
        return "the terminal raises it at a background process that uses it, and again after each handler "
               "(a caught one spins, dumping without end)";
    return NULL;
}

int gmg_parse_signal_why(const char *v, const char **why)
{
    const char *dummy;
    if (!why)
        why = &dummy;
    *why = NULL;
    if (strcmp(v, "none") == 0)
        return 0;
    const char *n = strncmp(v, "SIG", 3) == 0 ? v + 3 : v;
    int s = lookup(n);
    if (s == UNKNOWN) {
        /* a name in lower case: said, as the names are upper case */
        char up[16];
        size_t k = 0;
        for (; v[k] && k + 1 < sizeof up; k++)
            up[k] = (char)(v[k] >= 'a' && v[k] <= 'z' ? v[k] - 'a' + 'A' : v[k]);
        up[k] = 0;
        int cased = !v[k] && lookup(strncmp(up, "SIG", 3) == 0 ? up + 3 : up) > 0; /* a signal, in upper case */
        *why = cased ? "not a signal name or number (names are upper case: USR1, SIGUSR2, RTMIN+3)"
                     : "not a signal name or number";
        return -1;
    }
    if (s == RT_OUTSIDE) {
        *why = "outside RTMIN to RTMAX";
        return -1;
    }
    if ((*why = refusal(s)) != NULL)
        return -1;
    return s;
}

int gmg_parse_signal(const char *v)
{
    return gmg_parse_signal_why(v, NULL);
}
