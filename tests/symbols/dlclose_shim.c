/*
 * dlclose_shim.c - a dlclose ahead of the guard's in the global scope that
 * hands every call on to the next one, as a sanitizer's interceptor does
 * (tests/symbols/demangle.sh preloads it before the guard).
 */
#define _GNU_SOURCE
#include <dlfcn.h>

int dlclose(void *handle)
{
    int (*next)(void *) = (int (*)(void *))dlsym(RTLD_NEXT, "dlclose");
    return next ? next(handle) : -1;
}
