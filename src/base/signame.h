/*
 * signame.h - the GPUMEM_SIGNAL grammar (base layer), shared by the library's
 * configuration and the gpumemguard command, so that both take the same
 * signals: a name with or without "SIG" (USR1, SIGUSR2, HUP, PROF, ...),
 * RTMIN, RTMIN+N, RTMAX, RTMAX-N, a number, or "none". Pure: no I/O, no state.
 *
 * One rule, whichever way the signal is written (a name and its number
 * always get the same answer). A signal cannot be the dump signal when:
 *   - it cannot be caught: KILL, STOP;
 *   - the C library keeps it for itself: the numbers between SYS (31) and
 *     SIGRTMIN (32 and 33 on glibc, its thread cancellation and set*id
 *     signals; sigaction refuses them, so they could never be armed);
 *   - the kernel or the C library raises it at the program for something
 *     the program itself did, and the program's behaviour hangs on the
 *     default action: a fault (SEGV, BUS, FPE, ILL, TRAP, SYS: a handler
 *     that returns runs the faulting instruction again, or swallows the
 *     fault), abort() (ABRT, also GPUMEM_ON_LIMIT=abort's), a write to a
 *     closed pipe (PIPE) or beyond the file size limit (XFSZ), a child that
 *     ended (CHLD: every child would dump), a background process that
 *     touches its terminal (TTIN, TTOU: the terminal restarts the call after
 *     a handler returns, and raises the signal again, so a caught one spins
 *     and dumps without end).
 * Every other signal from 1 to SIGRTMAX may be the dump signal (a program's
 * own handler for it is chained).
 */
#ifndef GMG_BASE_SIGNAME_H
#define GMG_BASE_SIGNAME_H

/* The signal, 0 for "none", -1 when not a signal the guard may take. */
int gmg_parse_signal(const char *v);

/* The same; on -1, *why (when why is not NULL) says why, in words that
 * follow "GPUMEM_SIGNAL='X' is not valid: ". */
int gmg_parse_signal_why(const char *v, const char **why);

/* What GPUMEM_SIGNAL accepts, for messages. */
#define GMG_SIGNAL_ACCEPTED                                                                                  \
    "none, or a signal by name (with or without SIG) or number: USR1 (default), USR2, HUP, INT, QUIT, TERM, " \
    "ALRM, VTALRM, PROF, XCPU, IO, URG, WINCH, PWR, STKFLT, CONT, TSTP, RTMIN, RTMIN+N, RTMAX, RTMAX-N; "    \
    "not KILL, STOP, 32, 33, nor the signals a program gets for its own faults, aborts, pipes, file sizes, "  \
    "children and terminal (SEGV, BUS, FPE, ILL, TRAP, SYS, ABRT, PIPE, XFSZ, CHLD, TTIN, TTOU)"

#endif
