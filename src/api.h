/*
 * api.h - what the public API of api.c needs of guard.c (guard layer).
 */
#ifndef GMG_API_H
#define GMG_API_H

/* When this copy of the library stays out of the way of another loaded
 * first (guard.c, earlier_copy): that copy's `name`; otherwise NULL. */
void *gmg_guard_first_copy(const char *name);

#endif
