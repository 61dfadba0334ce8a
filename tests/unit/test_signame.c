/*
 * test_signame.c - GPUMEM_SIGNAL (base/signame.c), shared by the library
 * and the gpumemguard command: one rule whichever way a signal is written.
 *   - every name, with and without SIG, gets the answer its number gets;
 *   - RTMIN+N and RTMAX-N get the answer of their number;
 *   - every signal taken can be armed (sigaction accepts a handler for it),
 *     so that no value is taken and then silently never armed;
 *   - the signals refused are exactly those signame.h names, each with a
 *     reason.
 * Prints "signame: N checks, M failed"; exits 1 on a failed check.
 */
#define _GNU_SOURCE
#include "base/signame.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

static int checks, failed;
#define CHECK(cond, ...) do { checks++; if (!(cond)) { failed++; printf("FAIL %s:%d: ", __FILE__, __LINE__); \
    printf(__VA_ARGS__); printf("\n"); } } while (0)

static void on(int s) { (void)s; }

int main(void)
{
    static const char *const names[] = {
        "HUP", "INT", "QUIT", "ILL", "TRAP", "ABRT", "IOT", "BUS", "FPE", "KILL", "USR1", "SEGV", "USR2", "PIPE",
        "ALRM", "TERM", "STKFLT", "CHLD", "CLD", "CONT", "STOP", "TSTP", "TTIN", "TTOU", "URG", "XCPU", "XFSZ",
        "VTALRM", "PROF", "WINCH", "IO", "POLL", "PWR", "SYS",
    };
    static const int refused[] = { SIGKILL, SIGSTOP, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGABRT,
                                   SIGPIPE, SIGXFSZ, SIGCHLD, SIGTTIN, SIGTTOU };
    char buf[32];
    const char *why;

    /* numbers: taken ones can be armed; refused ones are the list, and 32..RTMIN-1 */
    for (int s = 1; s <= SIGRTMAX; s++) {
        snprintf(buf, sizeof buf, "%d", s);
        int got = gmg_parse_signal_why(buf, &why);
        int listed = 0;
        for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
            listed |= refused[i] == s;
        int internal = s > SIGSYS && s < SIGRTMIN;
        if (listed || internal) {
            CHECK(got == -1 && why && *why, "%d must be refused, with a reason (got %d)", s, got);
        } else {
            CHECK(got == s, "%d must be taken (got %d: %s)", s, got, why ? why : "");
            struct sigaction sa, old;
            memset(&sa, 0, sizeof sa);
            sa.sa_handler = on;
            CHECK(sigaction(s, &sa, &old) == 0, "%d is taken but cannot be armed", s);
            sigaction(s, &old, NULL);
        }
        /* SIG before a number: the same */
        snprintf(buf, sizeof buf, "SIG%d", s);
        CHECK(gmg_parse_signal(buf) == got, "SIG%d differs from %d", s, s);
    }
    /* names: the answer of their number, with and without SIG */
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        int num = -1;
        for (int s = 1; s < 32; s++) {
            const char *abbrev = sigabbrev_np(s);
            if (abbrev && strcmp(abbrev, names[i]) == 0)
                num = s;
        }
        if (!strcmp(names[i], "IOT")) num = SIGIOT;
        if (!strcmp(names[i], "CLD")) num = SIGCHLD;
        if (!strcmp(names[i], "POLL") || !strcmp(names[i], "IO")) num = SIGPOLL;
        CHECK(num > 0, "%s: no number known for it", names[i]);
        snprintf(buf, sizeof buf, "%d", num);
        const char *why_num;
        int by_num = gmg_parse_signal_why(buf, &why_num);
        int by_name = gmg_parse_signal_why(names[i], &why);
        CHECK(by_name == by_num, "%s gives %d, its number %d gives %d", names[i], by_name, num, by_num);
        CHECK(by_name != -1 || (why && why_num && strcmp(why, why_num) == 0), "%s and %d refused for other reasons",
              names[i], num);
        snprintf(buf, sizeof buf, "SIG%s", names[i]);
        CHECK(gmg_parse_signal(buf) == by_num, "%s differs from %s", buf, names[i]);
    }
    /* the real-time forms */
    int span = SIGRTMAX - SIGRTMIN;
    for (int k = 0; k <= span; k++) {
        snprintf(buf, sizeof buf, "RTMIN+%d", k);
        CHECK(gmg_parse_signal(buf) == SIGRTMIN + k, "%s", buf);
        snprintf(buf, sizeof buf, "SIGRTMAX-%d", k);
        CHECK(gmg_parse_signal(buf) == SIGRTMAX - k, "%s", buf);
    }
    CHECK(gmg_parse_signal("RTMIN") == SIGRTMIN && gmg_parse_signal("SIGRTMAX") == SIGRTMAX, "RTMIN, RTMAX");
    snprintf(buf, sizeof buf, "RTMIN+%d", span + 1);
    CHECK(gmg_parse_signal(buf) == -1, "%s is past RTMAX", buf);
    snprintf(buf, sizeof buf, "RTMAX-%d", span + 1);
    CHECK(gmg_parse_signal(buf) == -1, "%s is below RTMIN", buf);
    snprintf(buf, sizeof buf, "%d", SIGRTMAX + 1);
    CHECK(gmg_parse_signal(buf) == -1, "%s is no signal", buf);
    /* a name in lower case is refused (names are upper case), saying so */
    const char *lower[] = { "usr1", "sigusr2", "rtmin+3", "Hup" };
    for (size_t i = 0; i < sizeof lower / sizeof lower[0]; i++)
        CHECK(gmg_parse_signal_why(lower[i], &why) == -1 && why && strstr(why, "names are upper case"),
              "%s: refused as lower case (%s)", lower[i], why ? why : "");
    CHECK(gmg_parse_signal_why("bogus", &why) == -1 && why && !strstr(why, "upper case"), "bogus: no case hint");
    CHECK(gmg_parse_signal_why("rtmin+99", &why) == -1 && why && !strstr(why, "upper case"),
          "rtmin+99: no case hint (RTMIN+99 is refused too)");

    /* none, and what is no signal at all */
    CHECK(gmg_parse_signal("none") == 0, "none");
    static const char *const junk[] = { "", "0", "SIG", "usr1", "USR", "RTMIN+", "RTMIN-1", "RTMAX+1", "RTMIN+ 3",
                                        " 10", "10 ", "+10", "-10", "1e1", "0x10", "99999", "NONE", "SIGnone" };
    for (size_t i = 0; i < sizeof junk / sizeof junk[0]; i++) {
        CHECK(gmg_parse_signal_why(junk[i], &why) == -1 && why && *why, "'%s' must be refused", junk[i]);
    }
    CHECK(gmg_parse_signal("USR1") == SIGUSR1 && gmg_parse_signal("SIGUSR2") == SIGUSR2, "USR1, SIGUSR2");

    printf("signame: %d checks, %d failed\n", checks, failed);
    return failed != 0;
}
