/*
 * resolve.h - finding the real driver and routing lookups to wrappers.
 *
 * Owns the three interception routes of SPEC §1 besides plain exports:
 * the dlsym override and the cuGetProcAddress(_v2) wrappers, plus the real
 * dlsym and the guard's own handle on libcuda.so.1.
 */
#ifndef GMG_RESOLVE_H
#define GMG_RESOLVE_H

#include <stdint.h>

/* The wrapper to hand out for a lookup of `name` (as cuGetProcAddress gets
 * it) that the driver answered with `real`, or `real` itself when the name
 * is not wrapped. `route` names the route in the debug log. */
void *gmg_route_lookup(const char *name, void *real, int version, uint64_t flags, const char *route);

/* The real dlsym of glibc. */
void *gmg_real_dlsym(void *handle, const char *name);

#endif
