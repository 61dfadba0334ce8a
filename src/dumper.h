/*
 * dumper.h - the dump signal (GPUMEM_SIGNAL, default SIGUSR1).
 *
 * The handler only writes a byte to a pipe; a reporter thread, started with
 * every signal blocked, reads it and writes the report. The program's own
 * handler for that signal, installed before or after us (sigaction and
 * signal are interposed for that one signal), is called after ours.
 */
#ifndef GMG_DUMPER_H
#define GMG_DUMPER_H

void gmg_dumper_start(void);
void gmg_dumper_atfork_child(void);

#endif
