/*
 * test_symbolize.c - report/symbolize.c on its own: a frame is named with a
 * symbolizer, and also without one (NULL: gmg_symbolizer_get could not make
 * one, out of memory), from the loader alone, without crashing the program
 * whose report it is. Then a name that cannot be kept (strdup fails here
 * on demand): the frame says so (gmg_symbolizer_lost) and is not cached, so
 * that the next call names it. The same for a frame of an unloaded library
 * when its file cannot be opened for want of memory (calloc fails here on
 * demand: linked with -Wl,--wrap=calloc). Then a C++ name where the
 * process has a C++ runtime (this program's own __cxa_demangle stands for
 * it): the runtime's demangler names it, not the one built in. Last, the
 * number of the symbolizer's descriptor is taken back by "the program"
 * between its open and its move up (fcntl fails on demand: linked with
 * -Wl,--wrap=fcntl too): left to the program, the file opened again. Prints
 * "symbolize: N checks, M failed"; exit status 1 on failure. Linked with
 * -rdynamic so that dladdr knows named_here, and symbolize.c's dlsym finds
 * __cxa_demangle.
 */
#define _GNU_SOURCE
#include "report/symbolize.h"

#include "core/stacks.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* symbolize.c keeps names with strdup: this one, the program's own, fails
 * while no_strdup is set. */
static int no_strdup;
char *strdup(const char *str)
{
    if (no_strdup) {
        errno = ENOMEM;
        return NULL;
    }
    size_t n = strlen(str) + 1;
    char *p = malloc(n);
    return p ? memcpy(p, str, n) : NULL;
}

/* symbolize.c's calls of calloc (and this file's), with --wrap=calloc:
 * fail while no_calloc is set */
static int no_calloc;
void *__real_calloc(size_t n, size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_calloc(size_t n, size_t size)
{
    if (no_calloc) {
        errno = ENOMEM;
        return NULL;
    }
    return __real_calloc(n, size);
}

/* symbolize.c's calls of fcntl, with --wrap=fcntl: while `steal` is set,
 * the first move of a descriptor open on this program's own file (the
 * symbolizer's, just opened) finds the number taken back by "the program"
 * in between: closed, and /dev/null opened at it (`stolen`). */
static int steal, stolen = -1;
int __real_fcntl(int fd, int cmd, ...);
int __wrap_fcntl(int fd, int cmd, ...);
int __wrap_fcntl(int fd, int cmd, ...)
{
    va_list ap;
    va_start(ap, cmd);
    long arg = va_arg(ap, long);
    va_end(ap);
    if (cmd == F_DUPFD_CLOEXEC && steal) {
        struct stat a, b;
        if (fstat(fd, &a) == 0 && stat("/proc/self/exe", &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
            steal = 0;
            close(fd);
            stolen = open("/dev/null", O_RDONLY); /* the lowest number: fd's */
        }
    }
    return __real_fcntl(fd, cmd, arg);
}

/* How many descriptors below 512 are open on this program's own file. */
static int low_exe_fds(void)
{
    struct stat want, st;
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    if (!d || stat("/proc/self/exe", &want) != 0)
        return -1;
    while ((e = readdir(d)) != NULL) {
        int fd = atoi(e->d_name);
        n += fd > 2 && fd < 512 && fstat(fd, &st) == 0 && st.st_dev == want.st_dev && st.st_ino == want.st_ino;
    }
    closedir(d);
    return n;
}

/* core/pyframes.c, stubbed: no Python frame here */
int gmg_py_frame(uintptr_t w, const char **function, const char **file, int *line)
{
    (void)w; (void)function; (void)file; (void)line;
    return 0;
}

int gmg_py_left_out(uintptr_t w)
{
    (void)w;
    return 0;
}

static int checks, failed;
#define CHECK(cond, what) do { checks++; if (!(cond)) { failed++; printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, what); } } while (0)

__attribute__((noinline)) void named_here(void);
__attribute__((noinline)) void named_here(void) { __asm__ volatile(""); }

/* The C++ runtime's demangler as symbolize.c looks for it (dlsym of
 * RTLD_DEFAULT, which finds this one): its answer is marked so that it is
 * told apart from the built-in demangler's; runtime_refuses makes it refuse
 * the name as not valid. */
static int runtime_calls, runtime_refuses;
char *__cxa_demangle(const char *name, char *buf, size_t *len, int *status);
char *__cxa_demangle(const char *name, char *buf, size_t *len, int *status)
{
    (void)buf;
    (void)len;
    runtime_calls++;
    static const char answer[] = "model::load_weights(unsigned long) [the runtime's]";
    char *r = runtime_refuses || strcmp(name, "_ZN5model12load_weightsEm") ? NULL : malloc(sizeof answer);
    *status = r ? 0 : -2;
    return r ? memcpy(r, answer, sizeof answer) : NULL;
}

/* a C function under a C++ name: model::load_weights(unsigned long) */
__attribute__((noinline)) void _ZN5model12load_weightsEm(unsigned long n);
__attribute__((noinline)) void _ZN5model12load_weightsEm(unsigned long n) { __asm__ volatile("" ::"r"(n)); }

static int is(const char *s, const char *want) { return s && strcmp(s, want) == 0; }

int main(void)
{
    uintptr_t pc = (uintptr_t)&named_here + 1; /* as a return address into it */
    struct gmg_frame_info fi;

    struct gmg_symbolizer *s = gmg_symbolizer_new();
    memset(&fi, 0, sizeof fi);
    gmg_symbolize(s, pc, NULL, &fi);
    CHECK(is(fi.function, "named_here") && is(fi.module, "test_symbolize"), "a frame named with a symbolizer");
    gmg_symbolizer_free(s);

    memset(&fi, 0xff, sizeof fi);
    gmg_symbolize(NULL, pc, NULL, &fi); /* the guard's out-of-memory case: no crash */
    CHECK(fi.pc == pc && is(fi.function, "named_here") && is(fi.module, "test_symbolize") && fi.module_path &&
              fi.offset != 0 && !fi.python,
          "without a symbolizer, the loader's names");

    memset(&fi, 0xff, sizeof fi);
    gmg_symbolize(NULL, 8, NULL, &fi); /* an address no object holds */
    CHECK(fi.pc == 8 && !fi.function && !fi.module && !fi.file, "without a symbolizer, nothing known: nothing named");

    /* names that cannot be kept: counted, not cached; named once memory is back */
    s = gmg_symbolizer_new();
    no_strdup = 1;
    memset(&fi, 0, sizeof fi);
    gmg_symbolize(s, pc, NULL, &fi);
    no_strdup = 0;
    CHECK(!fi.function && gmg_symbolizer_lost(s) > 0, "a name lost to out of memory is counted");
    unsigned long lost = gmg_symbolizer_lost(s);
    memset(&fi, 0, sizeof fi);
    gmg_symbolize(s, pc, NULL, &fi);
    CHECK(is(fi.function, "named_here") && is(fi.module, "test_symbolize") && gmg_symbolizer_lost(s) == lost,
          "and not cached: the next call names the frame");
    gmg_symbolizer_free(s);
    CHECK(gmg_symbolizer_lost(NULL) == 0, "NULL has lost nothing it could count");

    /* a process with a C++ runtime: its demangler names C++ frames, exactly
     * as before the built-in one came (whose names can differ: libc++abi's) */
    uintptr_t cxx_pc = (uintptr_t)&_ZN5model12load_weightsEm + 1;
    s = gmg_symbolizer_new();
    memset(&fi, 0, sizeof fi);
    gmg_symbolize(s, cxx_pc, NULL, &fi);
    CHECK(is(fi.function, "model::load_weights(unsigned long) [the runtime's]") && runtime_calls == 1,
          "a C++ name is the runtime's demangler's when the process has one");
    gmg_symbolizer_free(s);
    runtime_refuses = 1;
    s = gmg_symbolizer_new();
    memset(&fi, 0, sizeof fi);
    gmg_symbolize(s, cxx_pc, NULL, &fi);
    CHECK(is(fi.function, "_ZN5model12load_weightsEm") && runtime_calls == 2,
          "a name the runtime refuses is shown as it is, as before (the built-in one not asked instead)");
    gmg_symbolizer_free(s);

    /* a frame of a library unloaded since (this program, as a module that
     * is no longer where it was): named from its file, read offline */
    static char exe[4096];
    Dl_info di;
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0 || !dladdr((void *)&named_here, &di)) {
        printf("FAIL no path or load address for this program\n");
        return 1;
    }
    exe[len] = 0;
    struct gmg_module gone = { .map = &gone, .start = 1, .end = 2, .bias = (uintptr_t)di.dli_fbase, .path = exe };
    s = gmg_symbolizer_new();
    no_calloc = 1; /* no memory to open its file */
    memset(&fi, 0, sizeof fi);
    gmg_symbolize(s, pc, &gone, &fi);
    no_calloc = 0;
    CHECK(fi.unloaded && !fi.function && gmg_symbolizer_lost(s) > 0,
          "an unloaded library's file not read for want of memory: the unnamed frame is counted");
    memset(&fi, 0, sizeof fi);
    gmg_symbolize(s, pc, &gone, &fi);
    CHECK(fi.unloaded && is(fi.function, "named_here") && is(fi.module, "test_symbolize"),
          "and read at the next call: the frame named");
    gmg_symbolizer_free(s);

    /* the files a symbolizer keeps sit at 512 and up; a number the program
     * took back before the move is left to it, and the file opened again
     * (not by libdwfl, at a low number no one notes) */
    s = gmg_symbolizer_new();
    steal = 1;
    memset(&fi, 0, sizeof fi);
    gmg_symbolize(s, pc, NULL, &fi);
    struct stat st, null;
    CHECK(!steal && stolen > 2, "the number was taken back between the open and the move");
    CHECK(is(fi.function, "named_here"), "the frame still named, from the file opened again");
    CHECK(low_exe_fds() == 0, "no descriptor of the symbolizer's below 512");
    gmg_symbolizer_free(s);
    CHECK(fstat(stolen, &st) == 0 && stat("/dev/null", &null) == 0 && st.st_rdev == null.st_rdev,
          "the program's descriptor at that number is still its own after the symbolizer is freed");
    close(stolen);

    printf("symbolize: %d checks, %d failed\n", checks, failed);
    return failed != 0;
}
