/*
 * dumpsig.h - the dump signal (GPUMEM_SIGNAL, default SIGUSR1), report
 * layer. The handler only wakes the reporter thread (reporter.h). The
 * program's own handler for that signal, installed before or after us
 * (sigaction, signal and libc's other installers, bsd_signal, ssignal,
 * sysv_signal, __sysv_signal, sigset and sigignore, are interposed for that
 * one signal), is called after ours.
 */
#ifndef GMG_REPORT_DUMPSIG_H
#define GMG_REPORT_DUMPSIG_H

/* Install the handler for GPUMEM_SIGNAL (once; nothing for "none"). */
void gmg_dumpsig_arm(void);

/* fork child: the handler stays installed; its locks start afresh. */
void gmg_dumpsig_atfork_child(void);

#endif
