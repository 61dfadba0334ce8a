/* signame.c - see signame.h. */
#define _GNU_SOURCE
#include "base/signame.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

int gmg_parse_signal(const char *v)
{
    static const struct { const char *name; int sig; } names[] = {
        { "USR1", SIGUSR1 }, { "USR2", SIGUSR2 }, { "HUP", SIGHUP }, { "INT", SIGINT },
        { "QUIT", SIGQUIT }, { "TERM", SIGTERM }, { "ALRM", SIGALRM }, { "PWR", SIGPWR },
        { "WINCH", SIGWINCH }, { "URG", SIGURG }, { "TTIN", SIGTTIN }, { "TTOU", SIGTTOU },
    };
    if (strcmp(v, "none") == 0)
        return 0;
    const char *n = strncmp(v, "SIG", 3) == 0 ? v + 3 : v;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(n, names[i].name) == 0)
            return names[i].sig;
    if (strncmp(n, "RTMIN+", 6) == 0 || (n[0] >= '0' && n[0] <= '9')) {
        const char *d = n[0] == 'R' ? n + 6 : n;
        char *end;
        long s = strtol(d, &end, 10);
        if (*d >= '0' && *d <= '9' && !*end && s >= 0 && s <= 1024) {
            if (n[0] == 'R')
                s += SIGRTMIN;
            if (s >= 1 && s <= SIGRTMAX && s != SIGKILL && s != SIGSTOP && s != SIGSEGV && s != SIGBUS &&
                s != SIGFPE && s != SIGILL && s != SIGABRT && s != SIGCHLD && s != SIGPIPE)
                return (int)s;
        }
    }
    return -1;
}
