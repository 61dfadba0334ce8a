/*
 * unload.c - dlclose, seen (hooks layer).
 *
 * The fast stack walker (core/unwind.c) keeps, per thread, the unwind rule
 * of each return address it met. A library unloaded with dlclose may be
 * followed by another mapped at the same addresses, whose code there is
 * not the same: its rules must be learnt afresh. So the guard exports
 * dlclose: the real one runs, and every thread's rules are forgotten
 * before its next walk (before and after the call, so that no walk during
 * it keeps a rule learnt meanwhile). Libraries the C library unloads by
 * itself (its own NSS and iconv modules) never allocate device memory, so
 * none of their return addresses is ever kept. An unload that bypasses the
 * exported name is caught by the reporter's tick instead (unload.h).
 */
#define _GNU_SOURCE
#include "hooks/unload.h"

#include "core/unwind.h"

#include "base/dlclose.h"
#include "base/export.h"

#include <dlfcn.h>
#include <link.h>
#include <stddef.h>

GMG_EXPORT int dlclose(void *handle)
{
    int (*f)(void *) = gmg_libc_dlclose();
    if (!f)
        return -1; /* no C library under us: nothing was loaded either */
    /* every call here is the program's (or a library's): the guard closes
     * its own handles by the C library's function (base/dlclose.h) */
    gmg_unwind_forget();
    int r = f(handle);
    gmg_unwind_forget();
    return r;
}

/* The loader's count of unloads: every object's dl_phdr_info carries it,
 * the first one is enough. */
struct subs {
    unsigned long long n;
    int got;
};

static int read_subs(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct subs *s = arg;
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
        s->n = info->dlpi_subs;
        s->got = 1;
    }
    return 1;
}

void gmg_unload_tick(void)
{
    static unsigned long long seen; /* the reporter thread's alone */
    static int have;
    struct subs s = { 0, 0 };
    dl_iterate_phdr(read_subs, &s);
    if (!s.got)
        return;
    if (have && s.n != seen)
        gmg_unwind_forget(); /* (after the exported dlclose's too: a second forgetting costs a relearning) */
    seen = s.n;
    have = 1;
}
