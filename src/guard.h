/*
 * guard.h - the guard's life cycle: start-up (configuration, stacks, fork
 * handlers), the first touch of the driver (which starts the dump signal's
 * reporter), the exit report, and fork.
 */
#ifndef GMG_GUARD_H
#define GMG_GUARD_H

/* The process uses the CUDA driver: reports at exit, dump signal armed. */
void gmg_guard_touched(void);

#endif
