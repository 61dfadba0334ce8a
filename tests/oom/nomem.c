/*
 * nomem.c - preloaded before the guard: aligned_alloc, which the guard makes
 * its live table's uthash tables with (core/track.c), fails with ENOMEM
 * after the first GMGTEST_ALIGNED_OK calls, so that the table cannot grow.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>

void *aligned_alloc(size_t align, size_t size)
{
    static long calls, ok = -2;
    if (ok == -2) {
        const char *v = getenv("GMGTEST_ALIGNED_OK");
        ok = v ? atol(v) : -1;
    }
    if (ok >= 0 && __atomic_fetch_add(&calls, 1, __ATOMIC_RELAXED) >= ok) {
        errno = ENOMEM;
        return NULL;
    }
    void *p;
    return posix_memalign(&p, align, size) == 0 ? p : NULL;
}
