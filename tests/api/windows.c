/*
 * windows.c - the public API's test-harness calls, from C, as a program
 * looks them up (dlsym(RTLD_DEFAULT, ...)): the peak window, marks and the
 * allocations since one, their text, the size parser. Run with the guard
 * preloaded and GPUSIM_DEVICES=2; prints one line per check, "ok NAME" or
 * "FAIL NAME: why", then "windows done".
 *
 *   windows api       every check below
 *   windows fork      a parent's mark in a forked child
 *   windows copy PATH the API of a second copy of the library, at PATH
 */
#include <cuda.h>
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../integration/testlib.h"

static void (*peak_reset)(void);
static unsigned long long (*peak)(int);
static unsigned long long (*peak_growth)(int);
static int (*mark)(void);
static int (*mark_release)(int);
static int (*since)(int, int, int, unsigned long long *, unsigned long long *);
static long (*since_text)(int, int, int, int, char *, unsigned long);
static long (*peak_text)(int, int, char *, unsigned long);
static int (*dump)(void);
static int (*parse_size)(const char *, unsigned long long *, char *, unsigned long);

static int failed;

static void check(int cond, const char *name, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void check(int cond, const char *name, const char *fmt, ...)
{
    if (cond) {
        printf("ok %s\n", name);
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    printf("FAIL %s: ", name);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    failed = 1;
}

#define LOOK(var, name) do { *(void **)&var = dlsym(RTLD_DEFAULT, name); \
    if (!var) { printf("FAIL lookup: %s not exported\n", name); exit(1); } } while (0)

static CUdeviceptr alloc(size_t n)
{
    CUdeviceptr p;
    TL_CHECK(cuMemAlloc(&p, n));
    return p;
}

/* Distinct call sites, for the stacks in the text. */
__attribute__((noinline)) static CUdeviceptr leaky_big(void) { return alloc(3u << 20); }
__attribute__((noinline)) static CUdeviceptr leaky_small(void) { return alloc(1u << 20); }
__attribute__((noinline)) static CUdeviceptr peak_maker(void) { return alloc(6u << 20); }

#define MiB (1ull << 20)

static void api(void)
{
    CUcontext c0 = tl_setup(0);
    CUdeviceptr before = alloc(8 * MiB);   /* held from before any window: its base */

    /* the window: growth above the base, not the bytes in use */
    peak_reset();
    check(peak(0) == 8 * MiB && peak_growth(0) == 0 && peak_growth(-1) == 0, "reset",
          "peak %llu growth %llu", peak(0), peak_growth(0));
    CUdeviceptr a = alloc(5 * MiB), b = alloc(2 * MiB);
    TL_CHECK(cuMemFree(a));
    TL_CHECK(cuMemFree(b));
    check(peak(0) == 15 * MiB && peak_growth(0) == 7 * MiB && peak_growth(-1) == 7 * MiB, "window peak",
          "peak %llu growth %llu any %llu", peak(0), peak_growth(0), peak_growth(-1));
    /* a lower peak after a reset, below the peak of the run */
    peak_reset();
    a = alloc(1 * MiB);
    TL_CHECK(cuMemFree(a));
    check(peak(0) == 9 * MiB && peak_growth(0) == 1 * MiB, "second window below the run's peak",
          "peak %llu growth %llu", peak(0), peak_growth(0));
    /* the base is what is in use at the reset: freeing below it then growing */
    TL_CHECK(cuMemFree(before));
    peak_reset();
    a = alloc(4 * MiB);
    check(peak(0) == 4 * MiB && peak_growth(0) == 4 * MiB, "window from a lower base",
          "peak %llu growth %llu", peak(0), peak_growth(0));
    TL_CHECK(cuMemFree(a));

    /* any device: device 1's growth is the largest */
    peak_reset();
    CUcontext c1 = tl_setup(1);
    a = alloc(6 * MiB);
    TL_CHECK(cuMemFree(a));
    TL_CHECK(cuCtxSetCurrent(c0));
    a = alloc(2 * MiB);
    TL_CHECK(cuMemFree(a));
    check(peak_growth(1) == 6 * MiB && peak_growth(0) == 2 * MiB && peak_growth(-1) == 6 * MiB && peak(-1) == 6 * MiB,
          "any device", "dev0 %llu dev1 %llu any %llu", peak_growth(0), peak_growth(1), peak_growth(-1));

    /* what was live at the window's peak: a freed allocation that made it,
     * beside what was held before the window; the next window forgets it */
    CUdeviceptr held = leaky_small();
    peak_reset();
    a = peak_maker();
    TL_CHECK(cuMemFree(a));
    b = alloc(2 * MiB);
    char pbuf[16384];
    long pn = peak_text(-1, -1, pbuf, sizeof pbuf);
    const char *pm = strstr(pbuf, "6.0 MiB (6291456 bytes) in 1 allocation (cuMemAlloc, device 0) allocated from:");
    const char *ph = strstr(pbuf, "1.0 MiB (1048576 bytes) in 1 allocation (cuMemAlloc, device 0) allocated from:");
    check(pn > 0 && (size_t)pn == strlen(pbuf) && pm && ph && pm < ph && strstr(pm, " in peak_maker ")
          && strstr(ph, " in leaky_small ") && !strstr(pbuf, "2.0 MiB"), "peak text: what was live at the window's peak",
          "%ld bytes:\n%s", pn, pbuf);
    peak_reset();
    long pn2 = peak_text(0, 1, pbuf, sizeof pbuf);
    check(pn2 > 0 && !strstr(pbuf, "peak_maker") && strstr(pbuf, "2.0 MiB (2097152 bytes)")
          && strstr(pbuf, "... and 1 more call site: 1.0 MiB (1048576 bytes) in 1 allocation\n")
          && peak_text(-2, -1, pbuf, sizeof pbuf) == -1 && peak_text(4096, -1, pbuf, sizeof pbuf) == -1
          && peak_text(0, -1, NULL, 5) == -1,
          "peak text: a new window, max_groups, bad input", "%ld bytes:\n%s", pn2, pbuf);
    TL_CHECK(cuMemFree(b));
    TL_CHECK(cuMemFree(held));

    /* a dump inside the window (a signal's, the API's) starts the reports'
     * next "since the previous dump", not the API's window: its peak, its
     * growth and what made the peak stay */
    peak_reset();
    a = peak_maker();
    TL_CHECK(cuMemFree(a));
    dump();
    b = alloc(1 * MiB);
    pn = peak_text(0, -1, pbuf, sizeof pbuf);
    check(peak(0) == 6 * MiB && peak_growth(0) == 6 * MiB && pn > 0 && strstr(pbuf, " in peak_maker ")
          && !strstr(pbuf, "1.0 MiB"), "a dump inside the window ends none of it",
          "peak %llu growth %llu, %ld bytes:\n%s", peak(0), peak_growth(0), pn, pbuf);
    peak_reset(); /* a new window forgets the dump's */
    check(peak(0) == 1 * MiB && peak_growth(0) == 0, "a reset after a dump", "peak %llu growth %llu", peak(0),
          peak_growth(0));
    TL_CHECK(cuMemFree(b));

    /* marks: what was made since and is still live */
    CUdeviceptr old = alloc(2 * MiB);       /* before the mark: never counted */
    int m = mark();
    check(m > 0, "mark", "mark %d", m);
    unsigned long long bytes = 1, count = 1;
    check(since(m, -1, 0, &bytes, &count) == 0 && bytes == 0 && count == 0, "nothing since the mark",
          "%llu bytes %llu allocations", bytes, count);
    CUdeviceptr l1 = leaky_big(), ls[2];
    for (volatile int i = 0; i < 2; i++) /* not unrolled: one call site, one stack */
        ls[i] = leaky_small();
    CUdeviceptr gone = alloc(5 * MiB);
    TL_CHECK(cuMemFree(gone));
    TL_CHECK(cuMemFree(old));               /* freeing older memory does not offset */
    TL_CHECK(cuCtxSetCurrent(c1));
    CUdeviceptr l4 = alloc(1 * MiB);
    TL_CHECK(cuCtxSetCurrent(c0));
    since(m, -1, 0, &bytes, &count);
    check(bytes == 6 * MiB && count == 4, "since: every device", "%llu bytes %llu allocations", bytes, count);
    since(m, 0, 0, &bytes, &count);
    check(bytes == 5 * MiB && count == 3, "since: one device", "%llu bytes %llu allocations", bytes, count);
    /* a second mark, later: only what came after it */
    int m2 = mark();
    CUdeviceptr l5 = leaky_small();
    since(m2, -1, 0, &bytes, &count);
    check(m2 > 0 && m2 != m && bytes == 1 * MiB && count == 1, "a later mark", "%llu bytes %llu", bytes, count);
    TL_CHECK(cuMemFree(l5));
    since(m2, -1, 0, &bytes, &count);
    check(bytes == 0 && count == 0, "freed since the later mark", "%llu bytes %llu", bytes, count);

    /* the text: biggest group first, with its function; the rest in a line */
    char buf[16384];
    long n = since_text(m, 0, 0, -1, buf, sizeof buf);
    const char *big = strstr(buf, "3.0 MiB (3145728 bytes) in 1 allocation (cuMemAlloc, device 0) allocated from:");
    const char *small = strstr(buf, "2.0 MiB (2097152 bytes) in 2 allocations (cuMemAlloc, device 0) allocated from:");
    check(n > 0 && (size_t)n == strlen(buf) && big && small && big < small && strstr(big, " in leaky_big ")
          && strstr(small, " in leaky_small ") && !strstr(buf, "device 1"), "text", "%ld bytes:\n%s", n, buf);
    long one = since_text(m, -1, 0, 1, buf, sizeof buf);
    check(one > 0 && strstr(buf, "leaky_big") && !strstr(buf, "leaky_small")
          && strstr(buf, "... and 2 more call sites: 3.0 MiB (3145728 bytes) in 3 allocations\n"), "text: max_groups",
          "%s", buf);
    char tiny[8];
    long whole = since_text(m, -1, 0, 1, tiny, sizeof tiny);
    check(whole == one && strlen(tiny) == 7, "text: truncated as snprintf", "%ld vs %ld, '%s'", whole, one, tiny);
    check(since_text(m, -1, 0, 1, NULL, 0) == one, "text: length only", "differs");

    /* bad input: -1, never a crash */
    check(since(0, -1, 0, &bytes, &count) == -1 && since(65, -1, 0, NULL, NULL) == -1
          && since(m, -2, 0, NULL, NULL) == -1 && since(m, -1, 2, NULL, NULL) == -1
          && since_text(99, -1, 0, -1, buf, sizeof buf) == -1 && since_text(m, -1, 0, -1, NULL, 5) == -1,
          "bad mark, device, flags", "accepted");
    check(mark_release(m) == 0 && mark_release(m) == -1 && since(m, -1, 0, NULL, NULL) == -1, "release",
          "a released mark still answers");
    mark_release(m2);
    /* 64 marks at most, then -1; released ones are given out again */
    int got[65], k = 0;
    while (k < 65 && (got[k] = mark()) > 0)
        k++;
    check(k == 64 && got[64] == -1, "64 marks", "%d marks, then %d", k, got[k < 65 ? k : 64]);
    for (int i = 0; i < k; i++)
        mark_release(got[i]);

    TL_CHECK(cuMemFree(l1));
    TL_CHECK(cuMemFree(ls[0]));
    TL_CHECK(cuMemFree(ls[1]));
    TL_CHECK(cuCtxSetCurrent(c1));
    TL_CHECK(cuMemFree(l4));

    /* sizes, as GPUMEM_LIMIT reads them */
    unsigned long long v = 0;
    char err[256];
    static const struct { const char *text; unsigned long long bytes; } good[] = {
        { "512MiB", 512ull << 20 }, { "1.5G", 3ull << 29 }, { "1MB", 1000000 }, { "0", 0 },
        { "4096", 4096 }, { "2KiB", 2048 },
        /* as people write sizes (and the pytest markers' examples): blanks
         * around the size and between its number and unit */
        { "512 MiB", 512ull << 20 }, { " 1.5 G ", 3ull << 29 }, { "1\tKiB", 1024 },
    };
    int sizes_ok = 1;
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        if (parse_size(good[i].text, &v, err, sizeof err) != 0 || v != good[i].bytes) {
            printf("     size '%s': %llu (%s)\n", good[i].text, v, err);
            sizes_ok = 0;
        }
    /* a text of any length: blanks after the size, zeros before it */
    char padded[300], zeros[300];
    snprintf(padded, sizeof padded, "512 MiB%*s", 200, "");
    memset(zeros, '0', 200);
    snprintf(zeros + 200, sizeof zeros - 200, "1 KiB");
    const char *const longer[] = { padded, zeros };
    for (size_t i = 0; i < 2; i++)
        if (parse_size(longer[i], &v, err, sizeof err) != 0 || v != (i ? 1024 : 512ull << 20)) {
            printf("     size of %zu characters: %llu (%s)\n", strlen(longer[i]), v, err);
            sizes_ok = 0;
        }
    check(sizes_ok, "sizes as GPUMEM_LIMIT reads them, and with blanks (\"512 MiB\"), of any length", "see above");
    static const char *const badsz[] = { "12 parsecs", "", "50%", "0:1G,1:2G", "-1", "1.5.5G", "1Q",
                                         "5 12MiB", "512 Mi B", "   ", "MiB 512" };
    int bad_ok = 1;
    for (size_t i = 0; i < sizeof badsz / sizeof badsz[0]; i++) {
        err[0] = '\0';
        if (parse_size(badsz[i], &v, err, sizeof err) != -1 || !err[0]) {
            printf("     size '%s' accepted or no reason\n", badsz[i]);
            bad_ok = 0;
        }
    }
    check(bad_ok && parse_size(NULL, &v, NULL, 0) == -1, "bad sizes refused with a reason", "see above");
}

/* A second copy of the library, opened by path: it stays out of the
 * first's way, and its API answers with the first's (the marks, windows
 * and allocations are the first copy's). */
static void copy(const char *path)
{
    tl_setup(0);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    int (*mark2)(void) = h ? (int (*)(void))dlsym(h, "gpumemguard_mark") : NULL;
    int (*since2)(int, int, int, unsigned long long *, unsigned long long *) =
        h ? (int (*)(int, int, int, unsigned long long *, unsigned long long *))dlsym(h, "gpumemguard_since") : NULL;
    void (*reset2)(void) = h ? (void (*)(void))dlsym(h, "gpumemguard_peak_reset") : NULL;
    unsigned long long (*growth2)(int) = h ? (unsigned long long (*)(int))dlsym(h, "gpumemguard_peak_growth") : NULL;
    if (!mark2 || !since2 || !reset2 || !growth2 || (void *)mark2 == (void *)mark) {
        printf("FAIL copy: no second copy at %s\n", path);
        failed = 1;
        return;
    }
    reset2();
    int m = mark2();
    CUdeviceptr p = alloc(3 * MiB);
    unsigned long long bytes = 0, count = 0;
    int r = since(m, -1, 0, &bytes, &count);  /* the first copy's call, the second's mark */
    check(m > 0 && r == 0 && bytes == 3 * MiB && count == 1 && growth2(0) == 3 * MiB && peak_growth(0) == 3 * MiB,
          "a second copy answers with the first's marks and window", "mark %d rc %d: %llu bytes %llu, growth %llu",
          m, r, bytes, count, growth2(0));
    TL_CHECK(cuMemFree(p));
}

static void forked(void)
{
    tl_setup(0);
    int m = mark();
    for (int i = 1; i < 64; i++) /* the parent holds all 64 */
        if (mark() < 0)
            printf("FAIL fork: the parent could not take 64 marks\n");
    pid_t pid = fork();
    if (pid == 0) {
        unsigned long long bytes;
        int r = since(m, -1, 0, &bytes, NULL);
        int rel = mark_release(m); /* not the child's to release */
        int m2 = mark();           /* the parent's 64 do not take the child's */
        CUdeviceptr p = alloc(1 * MiB);
        int r2 = since(m2, -1, 0, &bytes, NULL);
        (void)p;
        _exit(r == -1 && rel == -1 && m2 > 0 && r2 == 0 && bytes == MiB ? 0 : 1);
    }
    int st;
    waitpid(pid, &st, 0);
    check(WIFEXITED(st) && WEXITSTATUS(st) == 0, "fork: a parent's mark means nothing in the child",
          "child status %d", st);
    mark_release(m);
}

int main(int argc, char **argv)
{
    LOOK(peak_reset, "gpumemguard_peak_reset");
    LOOK(peak, "gpumemguard_peak");
    LOOK(peak_growth, "gpumemguard_peak_growth");
    LOOK(mark, "gpumemguard_mark");
    LOOK(mark_release, "gpumemguard_mark_release");
    LOOK(since, "gpumemguard_since");
    LOOK(since_text, "gpumemguard_since_text");
    LOOK(peak_text, "gpumemguard_peak_text");
    LOOK(dump, "gpumemguard_dump");
    LOOK(parse_size, "gpumemguard_parse_size");
    if (argc > 1 && strcmp(argv[1], "fork") == 0)
        forked();
    else if (argc > 2 && strcmp(argv[1], "copy") == 0)
        copy(argv[2]);
    else
        api();
    printf("windows done\n");
    return failed;
}
