/*
 * oomshim.c - fault injection for the guard's own memory: preloaded (after
 * libgpumemguard.so, see below), it fails malloc, calloc, realloc, strdup,
 * strndup, aligned_alloc and posix_memalign when their immediate caller is
 * code of a library whose path holds "libgpumemguard" (the program, the
 * simulated driver and libc are never failed). scripts/stress.sh sweeps it
 * over the guard's allocations one at a time. It forwards to glibc's
 * __libc_* functions, so it cannot sit in front of a sanitizer's allocator.
 *
 * Preload it after the guard (LD_PRELOAD="libgpumemguard.so liboomshim.so"):
 * its malloc still serves the guard, which defines none, and glibc runs
 * preloaded libraries' destructors in the order they were loaded, so
 * OOM_STATS then counts the guard's exit report too. Before the guard, the
 * statistics were written before the exit report was made, and a sweep up
 * to that count never failed one of the exit report's allocations.
 *
 *   OOM_ONLY=K    fail only the Kth eligible call (1-based)
 *   OOM_EVERY=N   fail every Nth eligible call (after OOM_AFTER)
 *   OOM_AFTER=K   let the first K eligible calls succeed
 *   OOM_PROB=P    fail with probability P (0..1), seed OOM_SEED
 *   OOM_FUNCS=mcrsapn  which functions may fail (the letters above, in order)
 *   OOM_SITES=0x..,0x..  only these callers (offsets in the guard); OOM_SKIP the reverse
 *   OOM_LOG=1     one line on fd 2 per failure, with the caller's offset
 *   OOM_STATS=1   at exit, on fd 2: "[shim] eligible=N failed=M ranges=R"
 *   OOM_WIDE=1    also count callers in libdw, libelf and libunwind
 *
 * Written for this project's fault-injection sweeps.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static uintptr_t lo[8], hi[8], base0;
static int nranges;
static int inited, initing;
static long every, after, only;
static double prob;
static unsigned long long seed = 88172645463325252ull;
static int logit;
static char funcs[16] = "mcrsapn";
static long counter, fails;
static uintptr_t sites[32]; static int nsites;
static uintptr_t skips[32]; static int nskips;

static int cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    int wide = *(int *)arg;
    const char *n = info->dlpi_name;
    if (!n)
        return 0;
    int want = strstr(n, "libgpumemguard") != NULL;
    if (wide && (strstr(n, "libdw") || strstr(n, "libelf") || strstr(n, "libunwind")))
        want = 1;
    if (!want)
        return 0;
    if (!base0 && strstr(n, "libgpumemguard")) base0 = info->dlpi_addr;
    for (int i = 0; i < info->dlpi_phnum && nranges < 8; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            lo[nranges] = info->dlpi_addr + ph->p_vaddr;
            hi[nranges] = lo[nranges] + ph->p_memsz;
            nranges++;
        }
    }
    return 0;
}

/* "0x..,0x.." (at most 32) into out; how many */
static int offsets(const char *v, uintptr_t out[32])
{
    int n = 0;
    char *e;
    while (v && *v && n < 32) {
        out[n] = strtoull(v, &e, 16);
        if (e == v)
            break;
        n++;
        v = e;
        while (*v == ',')
            v++;
    }
    return n;
}

static void init(void)
{
    if (inited || initing)
        return;
    initing = 1;
    const char *v;
    if ((v = getenv("OOM_EVERY"))) every = atol(v);
    if ((v = getenv("OOM_AFTER"))) after = atol(v);
    if ((v = getenv("OOM_ONLY"))) only = atol(v);
    if ((v = getenv("OOM_PROB"))) prob = atof(v);
    if ((v = getenv("OOM_SEED"))) seed = strtoull(v, NULL, 0) * 2654435761ull + 1;
    if ((v = getenv("OOM_LOG"))) logit = atoi(v);
    if ((v = getenv("OOM_FUNCS"))) snprintf(funcs, sizeof funcs, "%s", v);
    nsites = offsets(getenv("OOM_SITES"), sites);
    nskips = offsets(getenv("OOM_SKIP"), skips);
    int wide = getenv("OOM_WIDE") != NULL;
    dl_iterate_phdr(cb, &wide);
    initing = 0;
    if (nranges)
        inited = 1;
}

static int in_guard(uintptr_t ra)
{
    for (int i = 0; i < nranges; i++)
        if (ra >= lo[i] && ra < hi[i])
            return 1;
    return 0;
}

static int should_fail(uintptr_t ra, char f)
{
    if (!inited) {
        if (initing)
            return 0;
        init();
        if (!inited)
            return 0;
    }
    if (!strchr(funcs, f) || !in_guard(ra))
        return 0;
    for (int i = 0; i < nskips; i++)
        if (ra - base0 == skips[i]) return 0;
    if (nsites) {
        int hit = 0;
        for (int i = 0; i < nsites; i++)
            if (ra - base0 == sites[i]) hit = 1;
        if (!hit) return 0;
    }
    long n = __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED);
    int fail = 0;
    if (only)
        fail = n == only;
    else if (n > after) {
        if (every > 0 && (n - after) % every == 0)
            fail = 1;
        if (prob > 0) {
            unsigned long long x = __atomic_load_n(&seed, __ATOMIC_RELAXED);
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            __atomic_store_n(&seed, x, __ATOMIC_RELAXED);
            if ((double)(x >> 11) / (double)(1ull << 53) < prob)
                fail = 1;
        }
    }
    if (fail) {
        __atomic_add_fetch(&fails, 1, __ATOMIC_RELAXED);
        if (logit) {
            char buf[128];
            int k = snprintf(buf, sizeof buf, "[shim] fail %c #%ld caller %#lx (guard+%#lx)\n", f, n,
                             (unsigned long)ra, (unsigned long)(ra - base0));
            write(2, buf, (size_t)k);
        }
        errno = ENOMEM;
    }
    return fail;
}

#define RA ((uintptr_t)__builtin_return_address(0))

void *malloc(size_t n)
{
    if (should_fail(RA, 'm')) return NULL;
    return __libc_malloc(n);
}
void *calloc(size_t a, size_t b)
{
    if (should_fail(RA, 'c')) return NULL;
    return __libc_calloc(a, b);
}
void *realloc(void *p, size_t n)
{
    if (should_fail(RA, 'r')) return NULL;
    return __libc_realloc(p, n);
}
char *strdup(const char *s)
{
    if (should_fail(RA, 's')) return NULL;
    size_t n = strlen(s) + 1;
    char *p = __libc_malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}
char *strndup(const char *s, size_t m)
{
    if (should_fail(RA, 'n')) return NULL;
    size_t n = strnlen(s, m);
    char *p = __libc_malloc(n + 1);
    if (p) { memcpy(p, s, n); p[n] = 0; }
    return p;
}
void *aligned_alloc(size_t al, size_t n)
{
    if (should_fail(RA, 'a')) return NULL;
    return __libc_memalign(al, n);
}
void *memalign(size_t al, size_t n)
{
    return __libc_memalign(al, n);
}
int posix_memalign(void **out, size_t al, size_t n)
{
    if (should_fail(RA, 'p')) return ENOMEM;
    if (al % sizeof(void *) || (al & (al - 1))) return EINVAL;
    void *p = __libc_memalign(al, n);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}

__attribute__((destructor)) static void fin(void)
{
    if (getenv("OOM_STATS")) {
        char buf[128];
        int k = snprintf(buf, sizeof buf, "[shim] eligible=%ld failed=%ld ranges=%d\n", counter, fails, nranges);
        write(2, buf, (size_t)k);
    }
}
