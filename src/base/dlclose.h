/*
 * dlclose.h - the C library's dlclose, for the guard's own handles (base
 * layer). The guard exports dlclose (hooks/unload.c), and a call to the
 * name from inside the guard binds to the first dlclose of the process's
 * global scope: its own, or, ahead of it, a sanitizer's interceptor or
 * another interposer, which hands the call on to the guard's export as if
 * the program had made it (every thread's unwind rules then forgotten for
 * nothing). The guard's own handles (RTLD_NOLOAD references, which unload
 * nothing) are closed here, by the C library's function itself.
 */
#ifndef GMG_BASE_DLCLOSE_H
#define GMG_BASE_DLCLOSE_H

/* The C library's dlclose (the next one after the guard's in the lookup
 * order), or NULL when there is none. */
int (*gmg_libc_dlclose(void))(void *);

/* dlclose(handle) by the C library's own function; -1 without one. */
int gmg_dlclose_own(void *handle);

#endif
