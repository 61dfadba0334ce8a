/*
 * routes.h - the interception routes of SPEC §1 besides plain exports
 * (driver layer): the dlsym override (defined in routes.c), glibc's real
 * dlsym, and the choice
 * of wrapper for a lookup the driver answered, which the cuGetProcAddress
 * wrappers (hooks/lookup.c) apply to every answer.
 */
#ifndef GMG_DRIVER_ROUTES_H
#define GMG_DRIVER_ROUTES_H

#include "driver/real.h"

#include <stdint.h>

/* The wrapper to hand out for a lookup of `name` (as cuGetProcAddress gets
 * it) that the driver answered with `real`, or `real` itself when the name
 * is not wrapped. `route` names the route in the debug log. */
void *gmg_route_lookup(const char *name, void *real, int version, uint64_t flags, const char *route);

/* A lookup through glibc's real dlsym (found with dlvsym, so never our
 * own). Defined here, with the override, in the one file built without
 * TSan: sanitizer runtimes call dlsym before they are initialised. */
void *gmg_real_dlsym(void *handle, const char *name);

/* A function the layer above installs (guard.c, at start-up), called when
 * a program's dlsym on a driver handle hands out a wrapper: the process
 * uses CUDA from then on, before any wrapper is called. */
void gmg_routes_on_contact(void (*fn)(void));

/* Debug log of the first direct call of an exported wrapper. */
void gmg_note_direct(enum gmg_hook_id id);

#endif
