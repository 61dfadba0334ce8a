/*
 * routes.c - the routes that hand wrappers out (see routes.h): the dlsym
 * override, and the choice of wrapper for a cuGetProcAddress answer.
 *
 * SPEC §1: the CUDA runtime never calls exported driver symbols; it dlopens
 * libcuda.so.1, looks up cuGetProcAddress_v2 with dlsym on that handle (which
 * LD_PRELOAD does not redirect) and asks it for everything else. So a lookup
 * of a wrapped name is answered with our wrapper of exactly the ABI the
 * driver answered with; everything else passes through untouched.
 */
#define _GNU_SOURCE
#include "driver/routes.h"

#include "base/log.h"
#include "driver/real.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

static unsigned char handed_out[H_COUNT];
static void (*contact_hook)(void);

void gmg_routes_on_contact(void (*fn)(void))
{
    __atomic_store_n(&contact_hook, fn, __ATOMIC_RELEASE);
}

static void contact(void)
{
    void (*fn)(void) = __atomic_load_n(&contact_hook, __ATOMIC_ACQUIRE);
    if (fn)
        fn();
}

typedef void *(*dlsym_fn)(void *, const char *);
static dlsym_fn real_dlsym_fn;

static dlsym_fn find_real_dlsym(void)
{
    dlsym_fn f = __atomic_load_n(&real_dlsym_fn, __ATOMIC_ACQUIRE);
    if (f)
        return f;
    f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
    if (!f)
        f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
    __atomic_store_n(&real_dlsym_fn, f, __ATOMIC_RELEASE);
    return f;
}

void *gmg_real_dlsym(void *handle, const char *name)
{
    dlsym_fn f = find_real_dlsym();
    return f ? f(handle, name) : NULL;
}

/* A real pointer learnt from a lookup serves the wrapper when dlsym on our
 * own handle could not find one (a driver that exports fewer symbols). */
static void learn_real(int id, void *real)
{
    void *expected = NULL;
    if (real && real != gmg_hooks[id].wrapper)
        __atomic_compare_exchange_n(&gmg_real[id], &expected, real, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED);
}

static int is_candidate(const char *name)
{
    return name && name[0] == 'c' && name[1] == 'u' && name[2] >= 'A' && name[2] <= 'Z';
}

static void note(int id, const char *asked, int version, uint64_t flags, const char *route)
{
    __atomic_store_n(&handed_out[id], 1, __ATOMIC_RELAXED);
    gmg_debug("hook %s via %s (asked %s, version %d, flags %llu)", gmg_hooks[id].symbol, route, asked,
              version, (unsigned long long)flags);
}

void gmg_note_direct(enum gmg_hook_id id)
{
    if (gmg_log_level < GMG_LOG_DEBUG || __atomic_exchange_n(&handed_out[id], 1, __ATOMIC_RELAXED))
        return;
    gmg_debug("hook %s via export (first direct call)", gmg_hooks[id].symbol);
}

/*
 * The ABI is chosen first by identity: the driver's answer is the real
 * function of one of our entries. Failing that (a driver whose lookup table
 * points elsewhere than its exports), by the same rule the driver uses:
 * the highest threshold not above the requested version, the _ptsz variant
 * when the per-thread flag is set and one exists. If neither picks an entry,
 * the driver's answer goes back untouched: a missed hook is better than a
 * wrong ABI.
 */
void *gmg_route_lookup(const char *name, void *real, int version, uint64_t flags, const char *route)
{
    if (!real || !is_candidate(name))
        return real;
    gmg_resolve(); /* identity below needs the driver's exports */
    int want_ptsz = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) ? 1 : 0;
    int best = -1, best_legacy = -1, named = 0, any_ptsz = 0;
    for (int i = 0; i < H_COUNT; i++) {
        const struct gmg_hook *h = &gmg_hooks[i];
        if (!h->wrapper || strcmp(h->name, name) != 0)
            continue;
        named = 1;
        any_ptsz |= h->ptsz;
        if (__atomic_load_n(&gmg_real[i], __ATOMIC_ACQUIRE) == real) {
            note(i, name, version, flags, route);
            return h->wrapper;
        }
        if (h->version > version)
            continue;
        if (h->ptsz == want_ptsz && (best < 0 || h->version > gmg_hooks[best].version))
            best = i;
        if (!h->ptsz && (best_legacy < 0 || h->version > gmg_hooks[best_legacy].version))
            best_legacy = i;
    }
    if (!named)
        return real;
    if (best < 0 && want_ptsz && !any_ptsz) /* no per-thread variant of this name at all: the legacy one serves */
        best = best_legacy;
    if (best < 0) {
        gmg_debug("not hooked: %s at version %d, flags %llu (no matching ABI)", name, version,
                  (unsigned long long)flags);
        return real;
    }
    learn_real(best, real);
    if (__atomic_load_n(&gmg_real[best], __ATOMIC_ACQUIRE) != real) {
        /* the driver answered with a function we cannot identify as this
         * ABI's export: forward to what it gave only if we have nothing */
        gmg_debug("hook %s: driver lookup differs from its export; using the export", gmg_hooks[best].symbol);
    }
    note(best, name, version, flags, route);
    return gmg_hooks[best].wrapper;
}

/* ------------------------------------------------------------- dlsym */

static int hooked_symbol(const char *name)
{
    if (!is_candidate(name))
        return -1;
    for (int i = 0; i < H_COUNT; i++)
        if (gmg_hooks[i].wrapper && strcmp(gmg_hooks[i].symbol, name) == 0)
            return i;
    return -1;
}

/* Whether `real`, found by the name of entry id on a program's handle, is
 * the driver's own function: its export as our handle resolved it, or else
 * (an entry our handle lacks) an address in the driver. A library that
 * exports a function of the same name (a mock, another interposer) is not
 * the driver: its function passes through, and is never taken for the
 * driver's. Without the driver loaded nothing found can be its. */
static int drivers_own(int id, void *real)
{
    if (!gmg_driver_loaded())
        return 0;
    gmg_resolve();
    void *known = __atomic_load_n(&gmg_real[id], __ATOMIC_ACQUIRE);
    return known ? known == real : gmg_driver_holds(real);
}

/*
 * One unversioned definition serves callers bound to dlsym@GLIBC_2.34 and
 * dlsym@GLIBC_2.2.5 alike. RTLD_NEXT and RTLD_DEFAULT lookups, and every name
 * we do not wrap, end in a tail call so that glibc sees the caller's return
 * address (RTLD_NEXT is relative to the caller's object).
 */
GMG_EXPORT void *dlsym(void *handle, const char *name)
{
    dlsym_fn f = find_real_dlsym();
    if (handle != RTLD_NEXT && handle != RTLD_DEFAULT) {
        int id = hooked_symbol(name);
        if (id >= 0) {
            void *real = f ? f(handle, name) : NULL;
            if (!real || real == gmg_hooks[id].wrapper || !drivers_own(id, real))
                return real; /* another library's function of that name: not ours to wrap */
            learn_real(id, real);
            note(id, name, gmg_hooks[id].version, 0, "dlsym");
            contact(); /* the program reaches the driver: the dump signal is armed now */
            return gmg_hooks[id].wrapper;
        }
    }
    return f(handle, name);
}
