/*
 * fatalsig.h - a report before a fatal signal ends the program (report
 * layer). SIGTERM (a batch system's time limit), SIGINT and SIGHUP whose
 * action is still the default when the guard arms (the first CUDA use)
 * get the guard's handler: it asks the reporter thread for a report
 * (trigger "fatal_signal"), which then restores the default action and
 * sends the signal again, so that the process ends by the same signal,
 * with the same status, as it would have. A second one before the report
 * is out ends the process at once.
 *
 * Invisible to the program: sigaction and signal queries (dumpsig.c
 * interposes them) answer the default action, and a handler the program
 * installs, by any of libc's installers, takes over at once (one with
 * SA_RESETHAND for its first delivery only: the default it then reads is
 * the guard's again). The dump
 * signal is never one of these (it is dumpsig.c's).
 */
#ifndef GMG_REPORT_FATALSIG_H
#define GMG_REPORT_FATALSIG_H

#include <signal.h>

/* Install the handler on each of the three left at the default (once). */
void gmg_fatalsig_arm(void);

/* Is `sig` one whose default action the guard holds now? */
int gmg_fatalsig_owned(int sig);

/* Is `sig` one of the three, not the dump signal? Then the program's
 * sigaction and libc's installers for it come here (through dumpsig.c's
 * sigaction), armed or not yet. */
int gmg_fatalsig_covers(int sig);

/* The program's sigaction for a covered signal (before arming, passed on
 * as it is, under the lock arming takes): while the guard holds it,
 * a query answers the default action the program set (flags and mask as
 * it set them); SIG_DFL keeps (or brings back) the guard's handler; any
 * other action is installed and the guard lets go. `real` is libc's
 * sigaction. */
typedef int (*gmg_sigaction_fn)(int, const struct sigaction *, struct sigaction *);
int gmg_fatalsig_sigaction(gmg_sigaction_fn real, int sig, const struct sigaction *act, struct sigaction *old);

/* The reporter thread, once the report is written: the default action
 * back, and the signal sent again. Does not return while the process
 * lives to be killed by it. */
void gmg_fatalsig_die(int sig);

/* In a forked child: no report of the parent's is under way here. */
void gmg_fatalsig_atfork_child(void);

#endif
