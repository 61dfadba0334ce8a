/*
 * poolapp.c - a program with pools: poolapp LIB CASE=BYTES...
 * Each CASE is one of LIB's fake_CASE functions (fakepools.cc: the names of
 * known caching allocators and libraries), or this program's own:
 *   arena   my_arena_grow, a C program acting as a pool (a pool: line names it)
 *   leak    leak_plain, a plain leak of the program's
 *   free    an allocation made and freed
 *   reset   the primary context reset: what is live is reclaimed, as the
 *           runtime's exit path does before the exit report
 * Everything allocated stays live at exit except `free`. Prints "poolapp ok"
 * (with POOLAPP_QUERY set, first what gpumemguard_leaked_bytes and
 * gpumemguard_retained_bytes answer).
 */
#include "../integration/testlib.h"

#include <dlfcn.h>

__attribute__((noinline)) static CUdeviceptr my_arena_grow(size_t n)
{
    CUdeviceptr p = 0;
    TL_CHECK(cuMemAlloc(&p, n));
    return p;
}

__attribute__((noinline)) static CUdeviceptr leak_plain(size_t n)
{
    CUdeviceptr p = 0;
    TL_CHECK(cuMemAlloc(&p, n));
    return p;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: poolapp LIB CASE=BYTES...\n");
        return 2;
    }
    tl_setup(0);
    void *lib = strcmp(argv[1], "-") ? dlopen(argv[1], RTLD_NOW) : NULL;
    if (strcmp(argv[1], "-") && !lib) {
        fprintf(stderr, "poolapp: %s\n", dlerror());
        return 2;
    }
    for (int i = 2; i < argc; i++) {
        char name[64];
        unsigned long long n;
        if (sscanf(argv[i], "%40[a-z0-9_]=%llu", name, &n) != 2) {
            fprintf(stderr, "poolapp: bad case '%s'\n", argv[i]);
            return 2;
        }
        CUdeviceptr p = 0;
        if (strcmp(name, "arena") == 0) {
            p = my_arena_grow(n);
        } else if (strcmp(name, "leak") == 0) {
            p = leak_plain(n);
        } else if (strcmp(name, "reset") == 0) { /* reset=0: the runtime's exit path reclaims what is live */
            CUdevice d;
            TL_CHECK(cuDeviceGet(&d, 0));
            TL_CHECK(cuDevicePrimaryCtxReset(d));
            tl_setup(0);
            continue;
        } else if (strcmp(name, "free") == 0) {
            TL_CHECK(cuMemAlloc(&p, n));
            TL_CHECK(cuMemFree(p));
        } else {
            char sym[80];
            snprintf(sym, sizeof sym, "fake_%s", name);
            CUdeviceptr (*f)(size_t) = lib ? (CUdeviceptr (*)(size_t))dlsym(lib, sym) : NULL;
            if (!f || !(p = f(n))) {
                fprintf(stderr, "poolapp: %s failed\n", sym);
                return 2;
            }
        }
    }
    if (getenv("POOLAPP_QUERY")) { /* the public API a test harness asks */
        unsigned long long (*lk)(int) = (unsigned long long (*)(int))dlsym(RTLD_DEFAULT, "gpumemguard_leaked_bytes");
        unsigned long long (*rt)(int) = (unsigned long long (*)(int))dlsym(RTLD_DEFAULT, "gpumemguard_retained_bytes");
        if (lk && rt)
            printf("query: leaked %llu retained %llu; device 0: %llu %llu; device 1: %llu %llu\n", lk(-1), rt(-1),
                   lk(0), rt(0), lk(1), rt(1));
    }
    printf("poolapp ok\n");
    return 0;
}
