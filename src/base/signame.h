/*
 * signame.h - the GPUMEM_SIGNAL grammar (base layer), shared by the library's
 * configuration and the gpumemguard command: USR1, SIGUSR2, HUP, ..., RTMIN+N
 * or a number, and "none". Pure: no I/O, no state.
 */
#ifndef GMG_BASE_SIGNAME_H
#define GMG_BASE_SIGNAME_H

/* The signal, 0 for "none", -1 when not a signal the guard may take (not
 * catchable, or one a program needs for faults and children). */
int gmg_parse_signal(const char *v);

#endif
