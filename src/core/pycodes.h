/*
 * pycodes.h - whether any of the interpreter's code objects may have been
 * freed since a given moment (core layer; CPython 3.12 and 3.13).
 *
 * A code watcher of the interpreter's own (PyCode_AddWatcher) counts the
 * code objects destroyed. It is added once, from the main thread, by a
 * pending call asked for at the first Python capture made without the GIL
 * (the capture itself never takes it). A code object seen live by a walk
 * and found at the same address by a later one, the count unchanged in
 * between, is the same object: its name and line table, which a code
 * object never changes in place, need not be read again (its file name it
 * may change: that one still is). That holds only while the count sees every
 * destruction: none before the watcher is on, once it is gone from its
 * slot (cleared by the program, or by finalization), or in another
 * interpreter (none may ever have been made).
 */
#ifndef GMG_CORE_PYCODES_H
#define GMG_CORE_PYCODES_H

#include <stdint.h>

/* The interpreter found (pyframes' detect): its minor version and
 * _PyRuntime. Other versions than 3.12 and 3.13 are never watched. */
void gmg_pycodes_setup(int minor, const char *runtime);

/* 0: nothing can be said (no watcher yet, another interpreter made, the
 * interpreter finalized); else a number that stays the same exactly as
 * long as no code object was freed. Called on a thread with a Python
 * thread state, while the interpreter is not finalizing; the first call
 * asks for the watcher. One load or three. */
uint64_t gmg_pycodes_epoch(void);

#endif
