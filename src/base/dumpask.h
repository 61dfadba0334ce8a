/*
 * dumpask.h - how `gpumemguard dump PID` learns where the report it asked
 * for went (base layer: the command and the library share it). The command
 * sends the dump signal with sigqueue(3) and the value GMG_DUMP_ASK; the
 * guard, once that dump is written, answers the sender (only a process
 * named gpumemguard) with GMG_DUMP_REPLY_SIG and the dump's number, or 0
 * when it went to no file (stderr, stdout, none). The command names the
 * file(s) from the process's GPUMEM_REPORT and GPUMEM_REPORT_FORMAT. Two
 * flags may come with the number: the files carry the process's pid (a
 * forked child, its pattern without %p), and a file could not be written
 * (the report went to the process's standard error instead).
 */
#ifndef GMG_BASE_DUMPASK_H
#define GMG_BASE_DUMPASK_H

#include <signal.h>

#define GMG_DUMP_ASK 0x474d4431 /* "GMD1" */
#define GMG_DUMP_REPLY_SIG SIGUSR2
#define GMG_DUMP_REPLY_NUMBER 0x00ffffff /* the dump's number (0: no file) */
#define GMG_DUMP_REPLY_PID 0x10000000    /* the files' names carry the pid */
#define GMG_DUMP_REPLY_STDERR 0x20000000 /* a file could not be written: stderr had it */

#endif
