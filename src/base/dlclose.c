/* dlclose.c - see dlclose.h. */
#define _GNU_SOURCE
#include "base/dlclose.h"

#include <dlfcn.h>
#include <stddef.h>

typedef int (*dlclose_fn)(void *);

dlclose_fn gmg_libc_dlclose(void)
{
    static dlclose_fn real;
    dlclose_fn f = __atomic_load_n(&real, __ATOMIC_ACQUIRE);
    if (!f) {
        /* the guard's own export is skipped (RTLD_NEXT: the objects after
         * this one); glibc 2.34 moved dlclose into libc under a new version */
        f = (dlclose_fn)dlvsym(RTLD_NEXT, "dlclose", "GLIBC_2.34");
        if (!f)
            f = (dlclose_fn)dlvsym(RTLD_NEXT, "dlclose", "GLIBC_2.2.5");
        if (f)
            __atomic_store_n(&real, f, __ATOMIC_RELEASE);
    }
    return f;
}

int gmg_dlclose_own(void *handle)
{
    dlclose_fn f = gmg_libc_dlclose();
    return f ? f(handle) : -1;
}
