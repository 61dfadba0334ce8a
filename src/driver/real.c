/*
 * real.c - see real.h. The table generated from hooks.def, the guard's own
 * handle on libcuda.so.1 (opened RTLD_LOCAL on first need, so that nothing
 * the program does with its own handle changes ours) and the real function
 * behind every entry, resolved once through glibc's dlsym (routes.h).
 */
#define _GNU_SOURCE
#include "driver/real.h"

#include "base/dlclose.h"
#include "base/log.h"
#include "driver/routes.h"

#include <dlfcn.h>
#include <pthread.h>

const struct gmg_hook gmg_hooks[H_COUNT] = {
#define HOOK(sym, nm, ver, sfx, fam) [H_##sym] = { #sym, #nm, ver, sizeof(#sfx) > 1, #fam, (void *)sym },
#define CALL(sym, nm, ver) [H_##sym] = { #sym, #nm, ver, 0, "call", NULL },
#include "driver/hooks.def"
#undef HOOK
};

void *gmg_real[H_COUNT];

static void *libcuda;
static pthread_once_t resolve_once = PTHREAD_ONCE_INIT;

static void resolve_all(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        gmg_debug("cannot open libcuda.so.1: %s", dlerror());
        return;
    }
    __atomic_store_n(&libcuda, h, __ATOMIC_RELEASE); /* gmg_driver_loaded reads it without the once */
    for (int i = 0; i < H_COUNT; i++) {
        void *p = gmg_real_dlsym(h, gmg_hooks[i].symbol);
        if (p && p != gmg_hooks[i].wrapper) {
            void *expected = NULL;
            __atomic_compare_exchange_n(&gmg_real[i], &expected, p, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED);
        }
    }
}

void gmg_resolve(void)
{
    pthread_once(&resolve_once, resolve_all);
}

int gmg_driver_loaded(void)
{
    if (__atomic_load_n(&libcuda, __ATOMIC_ACQUIRE))
        return 1;
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (h)
        gmg_dlclose_own(h); /* NOLOAD's own reference: nothing is unloaded */
    return h != NULL;
}

int gmg_driver_holds(const void *p)
{
    gmg_resolve();
    void *h = __atomic_load_n(&libcuda, __ATOMIC_ACQUIRE);
    void *anchor = h ? gmg_real_dlsym(h, "cuInit") : NULL;
    Dl_info a, b;
    return anchor && p && dladdr(anchor, &a) && dladdr(p, &b) && a.dli_fbase == b.dli_fbase;
}

void *gmg_real_slow(enum gmg_hook_id id)
{
    gmg_resolve();
    return __atomic_load_n(&gmg_real[id], __ATOMIC_ACQUIRE);
}
