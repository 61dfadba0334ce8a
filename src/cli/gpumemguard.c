/*
 * gpumemguard - the command: runs a program under the guard.
 *
 *   gpumemguard [OPTIONS] [--] PROGRAM [ARGS...]
 *   gpumemguard dump [--signal SIG] PID
 *   gpumemguard view REPORT.json [-o OUT.html]      (cli/view.c)
 *   gpumemguard --help | --version
 *
 * Each option sets one GPUMEM_* variable; the library checks the values at
 * start-up (a bad one stops the program with exit status 2). The command
 * finds libgpumemguard.so beside itself (the build tree), in ../lib (an
 * installation) or in the LIBDIR baked in at build time, puts it first in
 * LD_PRELOAD (after a sanitizer runtime, which must come first; the user's
 * entries are kept), runs the program as its child and exits with its
 * status, 128+N when signal N killed it (an exec in its place would leave
 * a caller that is not a shell to see the signal itself). Signals sent to
 * the command go on to the program (see run).
 *
 * Standalone on purpose: libc, include/gpumemguard.h, the pure parts it
 * shares with the library (base/signame; for `view`, base/page and
 * base/buf) and the dump's answer (base/dumpask.h), nothing else of its
 * layers.
 */
#define _GNU_SOURCE
#include <gpumemguard.h>

#include "base/config.h"
#include "base/dumpask.h"
#include "base/procstat.h"
#include "base/signame.h"
#include "base/suppress.h"
#include "cli/tensors.h"
#include "cli/top.h"
#include "cli/view.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef GMG_LIBDIR
#define GMG_LIBDIR "/usr/local/lib"
#endif

#define LIBNAME "libgpumemguard.so"

static const struct option_def {
    const char *name;   /* without the leading "--" */
    const char *var;
    const char *arg;
    const char *help;
} options[] = {
    { "limit",          "GPUMEM_LIMIT",         "SIZE",  "quota: 4G for every device, 0:4G,1:2G per device, 1.5G, 25%" },
    { "on-limit",       "GPUMEM_ON_LIMIT",      "ACT",   "at the quota: fail (default), abort (report, then abort), warn" },
    { "report",         "GPUMEM_REPORT",        "DEST",  "stderr (default), stdout, none, or a path (%p pid, %n dump number)" },
    { "format",         "GPUMEM_REPORT_FORMAT", "FMT",   "text (default), json, folded, html, memviz, trace, or a comma list" },
    { "stack-depth",    "GPUMEM_STACK_DEPTH",   "N",     "frames kept per allocation, 0-256 (default 32; 0: no stacks)" },
    { "signal",         "GPUMEM_SIGNAL",        "SIG",   "dump signal: USR1 (default), USR2, HUP, PROF, RTMIN+N, a number, none" },
    { "suppressions",   "GPUMEM_SUPPRESSIONS",  "FILE",  "leak:PATTERN (leaks to leave out), pool:PATTERN (pools' segments)" },
    { "pools",          "GPUMEM_POOLS",         "MODE",  "auto (default: caching pools' segments are retained, not leaks) or off" },
    { "error-exitcode", "GPUMEM_EXITCODE",      "N",     "exit with N (1-255) when the exit report finds leaks; 0: off" },
    { "metrics",        "GPUMEM_METRICS",       "FILE",  "Prometheus text file, rewritten every --metrics-interval and at exit" },
    { "metrics-interval", "GPUMEM_METRICS_INTERVAL", "SECS", "seconds between rewrites of the metrics file, 1-86400 (default 15)" },
    { "count-managed",  "GPUMEM_COUNT_MANAGED", "0|1",   "1 (default): managed memory counts against the quota; 0: tracked only" },
    { "python",         "GPUMEM_PYTHON",        "MODE",  "auto (default): Python frames in stacks when CPython runs; off" },
    { "group",          "GPUMEM_GROUP",         "NAME",  "one budget per device for the user's processes of group NAME" },
    { "log",            "GPUMEM_LOG",           "LEVEL", "quiet, info (default), debug (one line per hooked entry point)" },
};
#define NOPTIONS (sizeof options / sizeof options[0])

static void usage_error(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void usage_error(const char *fmt, ...)
{
    va_list ap;
    fputs("gpumemguard: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\nTry 'gpumemguard --help'.\n", stderr);
    exit(2);
}

static void fail(int status, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));
static void fail(int status, const char *fmt, ...)
{
    va_list ap;
    fputs("gpumemguard: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(status);
}

static void help(void)
{
    printf("usage: gpumemguard [OPTIONS] [--] PROGRAM [ARGS...]\n"
           "       gpumemguard dump [--signal SIG] PID\n"
           "       gpumemguard top [--once | --json] [--pid PID] [--group NAME] [--sort KEY]\n"
           "       gpumemguard view REPORT.json [-o OUT.html]\n"
           "       gpumemguard --help | --version\n"
           "\n"
           "Runs PROGRAM with libgpumemguard.so preloaded: every CUDA device-memory allocation is\n"
           "tracked with its call stack, held to a quota, and reported at exit and on a signal.\n"
           "The exit status is PROGRAM's own (128+N when signal N killed it); 127: PROGRAM not\n"
           "found, 126: not executable, 2: a bad option here, or the library found a bad value or\n"
           "a GPUMEM_* variable that is no setting.\n"
           "\n"
           "Options (--opt VALUE or --opt=VALUE; each sets the variable named):\n");
    for (size_t i = 0; i < NOPTIONS; i++) {
        char left[64];
        snprintf(left, sizeof left, "--%s %s", options[i].name, options[i].arg);
        printf("  %-24s %-23s %s\n", left, options[i].var, options[i].help);
    }
    printf("  %-24s %-23s %s\n", "--tensors", "", "every tensor to the driver: PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync");
    printf("  %-24s %-23s %s\n", "", "", "(merged), TF_GPU_ALLOCATOR=cuda_malloc_async, XLA_PYTHON_CLIENT_ALLOCATOR=platform");
    printf("  %-24s %-23s %s\n", "-h, --help", "", "this text");
    printf("  %-24s %-23s %s\n", "-V, --version", "", "print the version");
    printf("\n"
           "Commands:\n"
           "  dump PID               ask the running guarded process PID for a report now; it is\n"
           "                         written where that process's GPUMEM_REPORT says (stderr by\n"
           "                         default). The signal is the process's GPUMEM_SIGNAL unless\n"
           "                         --signal is given. Refused for a process without the guard.\n"
           "  top                    the guarded processes of this machine, live (gpumemguard top --help)\n"
           "  view REPORT.json [-o OUT.html]\n"
           "                         the HTML page (as --format html writes it) of a saved JSON\n"
           "                         report; OUT.html defaults to REPORT.html beside it\n"
           "\n"
           "Examples:\n"
           "  gpumemguard --limit 4G --error-exitcode 23 -- ./app\n"
           "  gpumemguard --report 'leaks.%%p.json' --format json python train.py\n"
           "  gpumemguard dump 12345\n"
           "\n"
           "A program named 'dump', 'top' or 'view' runs as: gpumemguard -- dump (and so on). See gpumemguard(1).\n");
}

/* ------------------------------------------------------------ library */

static int is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* The library: beside the command (build tree), ../lib (installed), the
 * LIBDIR baked in. Returns a malloc'd absolute path or NULL; tried[] lists
 * the candidates for the message. */
static char *find_library(char *tried, size_t triedlen)
{
    char exe[PATH_MAX], cand[PATH_MAX + 64];
    const char *dirs[3];
    int n = 0;
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    char up[PATH_MAX + 8];
    if (len > 0) {
        exe[len] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            dirs[n++] = exe[0] ? exe : "/";
            snprintf(up, sizeof up, "%s/../lib", exe);
            dirs[n++] = up;
        }
    }
    dirs[n++] = GMG_LIBDIR;
    tried[0] = '\0';
    for (int i = 0; i < n; i++) {
        snprintf(cand, sizeof cand, "%s/" LIBNAME, dirs[i]);
        if (is_file(cand)) {
            char *abs = realpath(cand, NULL);
            return abs ? abs : strdup(cand);
        }
        size_t used = strlen(tried);
        snprintf(tried + used, triedlen - used, "%s%s", used ? ", " : "", cand);
    }
    return NULL;
}

/* A sanitizer runtime must stay first in LD_PRELOAD. */
static int is_sanitizer_runtime(const char *e, size_t n)
{
    const char *base = e;
    for (size_t i = 0; i < n; i++)
        if (e[i] == '/')
            base = e + i + 1;
    size_t bn = n - (size_t)(base - e);
    static const char *const pre[] = { "libasan.", "libtsan.", "libubsan.", "liblsan.", "libhwasan.",
                                       "libclang_rt.asan", "libclang_rt.tsan", "libclang_rt.ubsan",
                                       "libclang_rt.hwasan" };
    for (size_t i = 0; i < sizeof pre / sizeof pre[0]; i++) {
        size_t pn = strlen(pre[i]);
        if (bn >= pn && strncmp(base, pre[i], pn) == 0)
            return 1;
    }
    return 0;
}

/* LD_PRELOAD with lib first (after any sanitizer runtime), the user's
 * entries kept in their order, a second copy of lib dropped. */
static char *build_preload(const char *lib, const char *old)
{
    size_t cap = strlen(lib) + (old ? strlen(old) : 0) + 4;
    char *out = malloc(cap);
    if (!out)
        fail(1, "out of memory");
    out[0] = '\0';
    for (int pass = 0; pass < 3; pass++) {
        if (pass == 1) {
            if (out[0])
                strcat(out, ":");
            strcat(out, lib);
            continue;
        }
        for (const char *p = old; p && *p;) {
            size_t n = strcspn(p, ": ");
            if (n > 0) {
                int san = is_sanitizer_runtime(p, n);
                int self = strlen(lib) == n && strncmp(p, lib, n) == 0;
                if (!self && san == (pass == 0)) {
                    if (out[0])
                        strcat(out, ":");
                    strncat(out, p, n);
                }
            }
            p += n;
            p += strspn(p, ": ");
        }
    }
    return out;
}

/* ------------------------------------------------------------ signals */


static const char *signame(int sig, char *buf, size_t len)
{
    const char *d = sigabbrev_np(sig);
    if (d)
        snprintf(buf, len, "SIG%s", d);
    else if (sig >= SIGRTMIN && sig <= SIGRTMAX)
        snprintf(buf, len, "SIGRTMIN+%d", sig - SIGRTMIN);
    else
        snprintf(buf, len, "signal %d", sig);
    return buf;
}

/* The whole of a /proc file; NULL with errno set. */
static char *read_proc(const char *path, size_t *lenp)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return NULL;
    size_t cap = 65536, len = 0;
    char *buf = malloc(cap + 1);
    if (!buf) {
        fclose(f);
        errno = ENOMEM;
        return NULL;
    }
    size_t got;
    while ((got = fread(buf + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap) {
            char *nb = realloc(buf, cap * 2 + 1);
            if (!nb) {
                free(buf);
                fclose(f);
                errno = ENOMEM;
                return NULL;
            }
            buf = nb;
            cap *= 2;
        }
    }
    int err = ferror(f) ? errno : 0;
    fclose(f);
    if (err) {
        free(buf);
        errno = err;
        return NULL;
    }
    buf[len] = '\0';
    if (lenp)
        *lenp = len;
    return buf;
}

/* The threads of pid: open with tasks_open, each tid from next_task (0
 * after the last), closed with closedir. */
static DIR *tasks_open(long pid)
{
    char dir[64];
    snprintf(dir, sizeof dir, "/proc/%ld/task", pid);
    return opendir(dir);
}

static long next_task(DIR *d)
{
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL)
        if (e->d_name[0] >= '1' && e->d_name[0] <= '9')
            return atol(e->d_name);
    return 0;
}

/* /proc/PID/NAME, or, when it reads empty or not at all (a main thread
 * ended by pthread_exit is a zombie: its maps read empty, its environ
 * not), the first of the process's other threads' that reads. */
static char *read_proc_any_thread(long pid, const char *name, size_t *lenp, char *path, size_t pathlen)
{
    snprintf(path, pathlen, "/proc/%ld/%s", pid, name);
    size_t len = 0;
    char *text = read_proc(path, &len);
    int err = errno;
    if (text && len) {
        if (lenp)
            *lenp = len;
        return text;
    }
    DIR *d = tasks_open(pid);
    for (long tid; (tid = next_task(d)) != 0;) {
        char tpath[64];
        if (tid == pid || (size_t)snprintf(tpath, sizeof tpath, "/proc/%ld/task/%ld/%s", pid, tid, name) >= sizeof tpath
            || strlen(tpath) >= pathlen)
            continue;
        size_t tlen = 0;
        char *t = read_proc(tpath, &tlen);
        if (t && tlen) {
            free(text);
            text = t;
            len = tlen;
            snprintf(path, pathlen, "%s", tpath);
            break;
        }
        free(t);
    }
    if (d)
        closedir(d);
    if (lenp)
        *lenp = len;
    if (!text)
        errno = err; /* the process's own file's error, as it is named */
    return text;
}

/* Does a line of /proc/PID/maps name libgpumemguard.so? */
static int maps_guard(const char *maps)
{
    for (const char *line = maps; line && *line;) {
        const char *nl = strchr(line, '\n');
        size_t n = nl ? (size_t)(nl - line) : strlen(line);
        const char *path = memchr(line, '/', n);
        if (path) {
            size_t pn = n - (size_t)(path - line);
            const char *base = path;
            for (size_t i = 0; i < pn; i++)
                if (path[i] == '/')
                    base = path + i + 1;
            size_t bn = pn - (size_t)(base - path);
            if (bn >= strlen(LIBNAME) && strncmp(base, LIBNAME, strlen(LIBNAME)) == 0)
                return 1;
        }
        line = nl ? nl + 1 : NULL;
    }
    return 0;
}

static const char *environ_get(const char *env, size_t len, const char *name)
{
    size_t nl = strlen(name);
    for (size_t i = 0; i < len;) {
        const char *e = env + i;
        size_t el = strnlen(e, len - i);
        if (el > nl && strncmp(e, name, nl) == 0 && e[nl] == '=')
            return e + nl + 1;
        i += el + 1;
    }
    return NULL;
}

/* Is sig caught (SigCgt of /proc/PID/status)? 1 yes, 0 no, -1 unknown. */
static int sig_caught(const char *status, int sig)
{
    const char *p = status ? strstr(status, "\nSigCgt:") : NULL;
    if (!p)
        return -1;
    p += 8;
    while (*p == ' ' || *p == '\t')
        p++;
    const char *end = p;
    while (isxdigit((unsigned char)*end))
        end++;
    /* bit sig-1, counted from the last hex digit */
    int bit = sig - 1;
    const char *digit = end - 1 - bit / 4;
    if (digit < p)
        return 0;
    int v = isdigit((unsigned char)*digit) ? *digit - '0' : (tolower((unsigned char)*digit) - 'a' + 10);
    return (v >> (bit % 4)) & 1;
}

/* Is sig caught by process pid? As sig_caught. */
static int caught_by(long pid, int sig)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/status", pid);
    char *status = read_proc(path, NULL);
    int c = sig_caught(status, sig);
    free(status);
    return c;
}

/* The process a thread id belongs to (its thread group), or pid itself
 * when that cannot be read. */
static long tgid_of(long pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/status", pid);
    char *t = read_proc(path, NULL);
    const char *g = t ? strstr(t, "\nTgid:") : NULL;
    long tgid = g ? strtol(g + 6, NULL, 10) : 0;
    free(t);
    return tgid > 0 ? tgid : pid;
}

/* Has pid ended, its parent not having waited for it yet (a zombie)? A
 * main thread ended by pthread_exit reads as one too while the process's
 * other threads run on: not ended. */
static int ended(long pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    char *t = read_proc(path, NULL);
    const char *state = t ? gmg_proc_stat_field(t, 3) : NULL;
    int zombie = state && *state == 'Z';
    free(t);
    if (!zombie)
        return 0;
    DIR *d = tasks_open(pid);
    long tid;
    while ((tid = next_task(d)) != 0 && tid == pid)
        ;
    if (d)
        closedir(d);
    return tid == 0;
}

/* Is pid this command (gpumemguard running a program)? Then the pid of the
 * program it runs, its one child; else 0. */
static long program_of(long pid)
{
    char path[64];
    struct stat me, it;
    snprintf(path, sizeof path, "/proc/%ld/exe", pid);
    if (stat("/proc/self/exe", &me) != 0 || stat(path, &it) != 0 || me.st_dev != it.st_dev || me.st_ino != it.st_ino)
        return 0;
    snprintf(path, sizeof path, "/proc/%ld/task/%ld/children", pid, pid);
    char *children = read_proc(path, NULL);
    long child = children ? strtol(children, NULL, 10) : 0;
    free(children);
    return child;
}

/* GPUMEM_REPORT's path of dump `n` of process pid, as the library writes
 * it (report/output.c): %p its pid, %n the dump's number, %% a percent
 * sign; without %n the second and later dumps get ".N" before the
 * extension, which is the format's (`ext`) when it writes several;
 * relative to its working directory. n 0: not known yet (the pattern, %n
 * said). */
static void report_path(char *out, size_t size, const char *pattern, long pid, unsigned n, const char *ext,
                        int pid_named)
{
    char exp[PATH_MAX], cwd[PATH_MAX] = "";
    size_t k = 0;
    int has_n = 0;
    for (const char *c = pattern; *c && k + 24 < sizeof exp; c++) {
        if (c[0] == '%' && c[1] == 'p') {
            k += (size_t)snprintf(exp + k, sizeof exp - k, "%ld", pid);
            c++;
        } else if (c[0] == '%' && c[1] == 'n' && n) {
            k += (size_t)snprintf(exp + k, sizeof exp - k, "%u", n);
            has_n = 1;
            c++;
        } else if (c[0] == '%' && c[1] == '%') {
            exp[k++] = '%';
            c++;
        } else {
            has_n |= c[0] == '%' && c[1] == 'n';
            exp[k++] = *c;
        }
    }
    exp[k] = 0;
    if (exp[0] != '/') {
        char link[64];
        snprintf(link, sizeof link, "/proc/%ld/cwd", pid);
        ssize_t len = readlink(link, cwd, sizeof cwd - 2);
        if (len > 0) {
            cwd[len] = '/';
            cwd[len + 1] = 0;
        } else {
            cwd[0] = 0;
        }
    }
    char full[2 * PATH_MAX];
    snprintf(full, sizeof full, "%s%s", cwd, exp);
    if (!n) {
        snprintf(out, size, "%s%s", full,
                 has_n ? " (%n: the dump's number)" : " (or, after the first dump, with .N before its extension)");
        return;
    }
    char insert[48] = "", tail[64] = "";
    struct stat st;
    int stream = !ext && lstat(full, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode) || S_ISSOCK(st.st_mode));
    size_t m = 0;
    if (pid_named && !stream) /* a forked child's: its pid before the number, as the library names it */
        m += (size_t)snprintf(insert + m, sizeof insert - m, ".%ld", pid);
    if (!has_n && n > 1 && !stream)
        snprintf(insert + m, sizeof insert - m, ".%u", n);
    if (ext) {
        snprintf(tail, sizeof tail, "%s", ext);
    } else if (insert[0]) {
        char *slash = strrchr(full, '/');
        char *base = slash ? slash + 1 : full;
        char *dot = strrchr(base, '.');
        if (dot && dot != base && strlen(dot) < sizeof tail) {
            snprintf(tail, sizeof tail, "%s", dot);
            *dot = 0;
        }
    }
    snprintf(out, size, "%s%s%s", full, insert, tail);
}

/* The files of dump n, one per format of GPUMEM_REPORT_FORMAT (`formats`,
 * NULL: text), in the order the library writes them, ", "-separated. */
static void report_paths(char *out, size_t size, const char *pattern, const char *formats, long pid, unsigned n,
                         int pid_named)
{
    static const char *const order[] = { "text", "json", "folded", "html", "memviz", "trace" };
    static const char *const exts[] = { ".txt", ".json", ".folded", ".html", ".pickle", ".trace.json" };
    int several = formats && strchr(formats, ',');
    size_t k = 0;
    out[0] = 0;
    if (!several || !n) {
        report_path(out, size, pattern, pid, n, NULL, pid_named);
        return;
    }
    for (size_t i = 0; i < sizeof order / sizeof order[0] && k + 8 < size; i++) {
        size_t len = strlen(order[i]);
        int listed = 0;
        for (const char *p = formats; p && *p;) {
            const char *e = strchr(p, ',');
            size_t l = e ? (size_t)(e - p) : strlen(p);
            listed |= l == len && strncmp(p, order[i], len) == 0;
            p = e ? e + 1 : NULL;
        }
        if (!listed)
            continue;
        if (k)
            k += (size_t)snprintf(out + k, size - k, ", ");
        report_path(out + k, size - k, pattern, pid, n, exts[i], pid_named);
        k = strlen(out);
    }
}

/* Wait (at most `secs`) for the guard in process pid to say that the dump
 * asked for is written (base/dumpask.h): its number, 0 when it went to no
 * file; -1 when no answer came. GMG_DUMP_REPLY_SIG is blocked. */
/* Has process pid ended (gone, or a zombie its parent has not waited for)?
 * A main thread that called pthread_exit is a zombie too while the other
 * threads run on: only one of a single thread has ended. */
static int process_ended(long pid)
{
    if (kill((pid_t)pid, 0) != 0 && errno == ESRCH)
        return 1;
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%ld/status", pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return 0;
    int zombie = 0;
    long threads = 0;
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, "State:", 6))
            zombie = strchr(line, 'Z') || strchr(line, 'X');
        else if (!strncmp(line, "Threads:", 8))
            threads = strtol(line + 8, NULL, 10);
    }
    fclose(f);
    return zombie && threads <= 1;
}

/* The dump's number once process pid says its report is written; -1 if it
 * does not within secs seconds; -2 if it ended first. */
static long dump_answer(long pid, int secs)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, GMG_DUMP_REPLY_SIG);
    struct timespec end, now;
    clock_gettime(CLOCK_MONOTONIC, &end);
    end.tv_sec += secs;
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        long long left = (long long)(end.tv_sec - now.tv_sec) * 1000000000LL + (end.tv_nsec - now.tv_nsec);
        if (left <= 0)
            return -1;
        if (left > 100000000LL) /* a tenth of a second at a time: has it ended meanwhile? */
            left = 100000000LL;
        struct timespec ts = { .tv_sec = (time_t)(left / 1000000000LL), .tv_nsec = (long)(left % 1000000000LL) };
        siginfo_t si;
        int s = sigtimedwait(&set, &si, &ts);
        if (s == GMG_DUMP_REPLY_SIG && si.si_code == SI_QUEUE && si.si_pid == (pid_t)pid)
            return si.si_value.sival_int >= 0 ? si.si_value.sival_int : 0;
        if (s < 0 && errno != EINTR && errno != EAGAIN)
            return -1;
        if (s < 0 && process_ended(pid))
            return -2;
    }
}

/* A word after an option that wants a value, which is no value but "--" or
 * another option: the value is missing (no report file named "--"). A value
 * that starts so is given as --opt=VALUE. */
static int is_long_option(const char *w) { return w[0] == '-' && w[1] == '-'; }

/* Does every thread of pid block sig (SigBlk of /proc/PID/task/TID/status)? */
static int blocked_everywhere(long pid, int sig)
{
    DIR *d = tasks_open(pid);
    int threads = 0, blocking = 0;
    for (long tid; (tid = next_task(d)) != 0;) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%ld/task/%ld/status", pid, tid);
        char *st = read_proc(path, NULL), *blk = st ? strstr(st, "\nSigBlk:") : NULL;
        if (st && strstr(st, "\nState:\tZ")) { /* a zombie main thread takes no signal */
            free(st);
            continue;
        }
        threads++;
        if (blk) {
            unsigned long long mask = strtoull(blk + 8, NULL, 16);
            blocking += sig >= 1 && sig <= 64 && (mask >> (sig - 1)) & 1;
        }
        free(st);
    }
    if (d)
        closedir(d);
    return threads > 0 && blocking == threads;
}

static int dump(int argc, char **argv, const char *sigopt)
{
    const char *pidarg = NULL;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--signal") == 0) {
            if (i + 1 >= argc || is_long_option(argv[i + 1]))
                usage_error("option '--signal' needs a value");
            sigopt = argv[++i];
        } else if (strncmp(a, "--signal=", 9) == 0) {
            sigopt = a + 9;
        } else if (strcmp(a, "--") == 0 && !pidarg && i + 1 < argc) {
            pidarg = argv[++i];
            if (i + 1 < argc)
                usage_error("dump takes one PID; '%s' is one argument too many", argv[i + 1]);
        } else if (a[0] == '-' && a[1]) {
            usage_error("dump: unknown option '%s' (dump takes --signal SIG and a PID)", a);
        } else if (pidarg) {
            usage_error("dump takes one PID; '%s' is one argument too many", a);
        } else {
            pidarg = a;
        }
    }
    if (!pidarg)
        usage_error("dump: missing PID (gpumemguard dump PID)");
    char *end;
    errno = 0;
    long pid = strtol(pidarg, &end, 10);
    if (!isdigit((unsigned char)pidarg[0]) || *end || errno || pid <= 0 || pid > INT_MAX)
        usage_error("dump: '%s' is not a process id", pidarg);
    int optsig = 0;
    if (sigopt) { /* a bad option is a usage error (status 2), whatever the process */
        const char *why = NULL;
        optsig = gmg_parse_signal_why(sigopt, &why);
        if (optsig <= 0)
            usage_error("dump: --signal '%s' is not a dump signal: %s", sigopt,
                        optsig == 0 || !why ? "none sends no signal" : why);
    }

    char path[64], sb[32];
    snprintf(path, sizeof path, "/proc/%ld", pid);
    struct stat st;
    if (stat(path, &st) != 0)
        fail(1, "dump: no process %ld", pid);
    long tgid = tgid_of(pid);
    if (tgid != pid) { /* the dump is the process's, and so is its answer */
        printf("gpumemguard: %ld is a thread of process %ld: asking that one\n", pid, tgid);
        pid = tgid;
    }
    if (ended(pid))
        fail(1, "dump: process %ld has ended (its parent has not waited for it yet); nothing sent", pid);
    long program = program_of(pid);
    if (program > 0) {
        printf("gpumemguard: process %ld is gpumemguard running process %ld: asking that one\n", pid, program);
        pid = program;
    }

    char *maps = read_proc_any_thread(pid, "maps", NULL, path, sizeof path);
    if (!maps)
        fail(1, "dump: cannot read %s: %s%s; not signalling a process that may not be guarded", path,
             strerror(errno), errno == EACCES ? " (another user's process?)" : "");
    int guarded = maps_guard(maps);
    free(maps);
    if (!guarded)
        fail(1, "dump: process %ld does not run under the guard (no " LIBNAME " in %s); not signalling it, "
             "since the dump signal would kill it", pid, path);

    int sig = SIGUSR1;
    const char *from = "the default";
    int own = SIGUSR1; /* the process's own dump signal, as far as its environment tells (0: unknown) */
    const char *own_from = "the default";
    const char *report = NULL;
    size_t envlen = 0;
    char *env = read_proc_any_thread(pid, "environ", &envlen, path, sizeof path);
    if (env) {
        report = environ_get(env, envlen, "GPUMEM_REPORT");
        const char *v = environ_get(env, envlen, "GPUMEM_SIGNAL");
        int vs = v ? gmg_parse_signal(v) : SIGUSR1;
        if (v) {
            own = vs > 0 ? vs : 0;
            own_from = "its GPUMEM_SIGNAL";
            if (vs == 0) /* with --signal too: whatever catches another signal there, it is no dump */
                fail(1, "dump: process %ld has dumps off (GPUMEM_SIGNAL=none); nothing sent", pid);
        }
        if (v && !sigopt) {
            sig = vs;
            if (sig < 0)
                fail(1, "dump: process %ld has GPUMEM_SIGNAL='%s', not a dump signal; nothing sent "
                     "(give --signal to choose one)", pid, v);
            from = "its GPUMEM_SIGNAL";
        }
    } else {
        own = 0;
        if (!sigopt)
            fprintf(stderr, "gpumemguard: dump: cannot read %s (%s); assuming the default dump signal, SIGUSR1\n",
                    path, strerror(errno));
    }
    if (sigopt) {
        sig = optsig;
        from = "--signal";
    }

    /* another signal than its dump signal is never sent: caught or not (the
     * guard catches SIGTERM, SIGHUP and the like to write a report as the
     * program dies of them), it would do what the program does with it */
    if (sigopt && own > 0 && own != sig) {
        char ob[32];
        fail(1, "dump: process %ld dumps on %s (%s), not on %s (--signal); nothing sent, since %s is no dump "
             "signal there and may end it", pid, signame(own, ob, sizeof ob), own_from, signame(sig, sb, sizeof sb), sb);
    }
    if (caught_by(pid, sig) == 0)
        fail(1, "dump: process %ld does not catch %s (%s) yet: the guard arms its dump signal at the "
             "program's first CUDA call; nothing sent, since the signal would kill it",
             pid, signame(sig, sb, sizeof sb), from);

    /* sent with the value that asks the guard to say when the dump is
     * written, and its number (base/dumpask.h); the answer is blocked until
     * it is waited for */
    sigset_t ans;
    sigemptyset(&ans);
    sigaddset(&ans, GMG_DUMP_REPLY_SIG);
    sigprocmask(SIG_BLOCK, &ans, NULL);
    union sigval ask = { .sival_int = GMG_DUMP_ASK };
    if (sigqueue((pid_t)pid, sig, ask) != 0)
        fail(1, "dump: cannot signal process %ld: %s", pid, strerror(errno));
    int to_file = report && strcmp(report, "stderr") && strcmp(report, "stdout") && strcmp(report, "none");
    long n = dump_answer(pid, 10);
    int blocked = n == -1 && blocked_everywhere(pid, sig); /* the report waits for the program to unblock it */
    int pid_named = n > 0 && (n & GMG_DUMP_REPLY_PID), fell_back = n > 0 && (n & GMG_DUMP_REPLY_STDERR);
    if (n > 0)
        n &= GMG_DUMP_REPLY_NUMBER;
    const char *formats = env ? environ_get(env, envlen, "GPUMEM_REPORT_FORMAT") : NULL;
    char where[4 * PATH_MAX + 128];
    if (!report || strcmp(report, "stderr") == 0)
        snprintf(where, sizeof where, "its standard error");
    else if (strcmp(report, "stdout") == 0)
        snprintf(where, sizeof where, "its standard output");
    else if (strcmp(report, "none") == 0)
        snprintf(where, sizeof where, "nowhere (GPUMEM_REPORT=none)");
    else
        report_paths(where, sizeof where, report, formats, pid, n > 0 ? (unsigned)n : 0, pid_named);
    free(env);
    sb[0] = 0;
    signame(sig, sb, sizeof sb);
    if (n == -2) {
        printf("gpumemguard: sent %s to process %ld; it ended before writing the report\n", sb, pid);
        return 1;
    }
    if (fell_back)
        printf("gpumemguard: sent %s to process %ld; its report could not be written to %s: it went to the "
               "process's standard error\n", sb, pid, where);
    else if (n > 0 && to_file)
        printf("gpumemguard: sent %s to process %ld; its report is written: %s\n", sb, pid, where);
    else if (n >= 0)
        printf("gpumemguard: sent %s to process %ld; its report is written to %s\n", sb, pid, where);
    else if (blocked)
        printf("gpumemguard: sent %s to process %ld; its report goes to %s once a thread of it unblocks %s "
               "(not written within 10 s: every thread blocks it)\n", sb, pid, where, sb);
    else
        printf("gpumemguard: sent %s to process %ld; its report goes to %s (not written within 10 s: the "
               "process may be busy, or its guard older than this command)\n", sb, pid, where);
    return 0;
}

/* ---------------------------------------------------------------- run */

/*
 * The program runs as the command's child, and the command waits for it.
 * Signals that a process sends to the command (kill, a batch system's
 * SIGTERM at the end of a job, `kill -USR1` for a dump) go on to the
 * program: every signal but SIGKILL and SIGSTOP (which cannot be caught)
 * and SIGCHLD (the command's own news of the program); a fault of the
 * command's own code (SIGSEGV) still ends it, blocked or not. Those the
 * kernel sends (the terminal's ^C, ^\ and ^Z reach the whole foreground
 * process group, the program too) are not sent twice; one a process sends
 * to the whole group (kill -TERM -PGID) reaches the program directly and
 * through the command, twice. They are taken with sigwaitinfo, blocked
 * meanwhile: no handler runs. When the program stops (a stop signal
 * passed on or from the terminal, or its own kill(0, SIGTSTP) as vim's ^Z)
 * the command stops too, by the same signal: its shell sees the job
 * stopped, as it would without the command; SIGCONT continues both. In
 * each of those cases the command itself got a stop signal; a program
 * stopped by a signal sent to it alone (kill -STOP PID) stops alone, and
 * the command waits on: stopped too, nothing would continue it when the
 * program is continued alone and ends. A
 * program that ignores a stop signal goes on, and so does the command. The
 * dump signal goes on only to a program that catches it (the guard arms it
 * at the first CUDA call): before that it would kill the program.
 */
static int passed_on(int sig)
{
    switch (sig) {
    case SIGKILL: case SIGSTOP: case SIGCHLD:
        return 0;
    default:
        return 1;
    }
}

/* The command stops as a stop signal's default would stop it, and goes on
 * once continued. */
static void stop_too(int sig)
{
    if (sig == SIGSTOP) {
        raise(SIGSTOP);
        return;
    }
    struct sigaction dfl, was;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, &was);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    raise(sig); /* pending: blocked */
    sigprocmask(SIG_UNBLOCK, &one, NULL); /* stopped here until continued */
    sigprocmask(SIG_BLOCK, &one, NULL);
    sigaction(sig, &was, NULL);
}

/* Did the command get a stop signal for the program's stop (from the
 * terminal, the program's group, or sent to the command and passed on)?
 * One may still be pending (SIGCHLD is taken first, a lower number) or,
 * from the terminal, on its way: taken here, for a moment at most. */
static int stop_for_command(int *asked)
{
    if (*asked) {
        *asked = 0;
        return 1;
    }
    sigset_t stops;
    sigemptyset(&stops);
    sigaddset(&stops, SIGTSTP);
    sigaddset(&stops, SIGTTIN);
    sigaddset(&stops, SIGTTOU);
    struct timespec moment = { 0, 50 * 1000 * 1000 };
    return sigtimedwait(&stops, NULL, &moment) > 0;
}

static int is_stop(int sig) { return sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU; }

/* The interpreter a script's "#!" line names, into out: 1, or 0 when the
 * file cannot be read or does not start with "#!". */
static int script_interpreter(const char *path, char *out, size_t n)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    char head[256];
    ssize_t got = read(fd, head, sizeof head - 1);
    close(fd);
    if (got < 3 || head[0] != '#' || head[1] != '!')
        return 0;
    head[got] = 0;
    char *p = head + 2;
    p += strspn(p, " \t");
    size_t len = strcspn(p, " \t\n");
    if (!len)
        return 0;
    snprintf(out, n, "%.*s", (int)len, p);
    return 1;
}

static int run(char **argv)
{
    const char *sv = getenv("GPUMEM_SIGNAL");
    int dumpsig = sv ? gmg_parse_signal(sv) : SIGUSR1; /* <= 0: none, or a bad value the library refuses */
    sigset_t set, old;
    sigemptyset(&set);
    for (int sig = 1; sig <= SIGRTMAX; sig++)
        if (passed_on(sig) && (sig < 32 || sig >= SIGRTMIN)) /* not the C library's own real-time signals */
            sigaddset(&set, sig);
    sigaddset(&set, SIGCHLD);
    sigprocmask(SIG_BLOCK, &set, &old);
    /* SIGCHLD ignored (or SA_NOCLDWAIT), as a parent may leave it across
     * exec: the kernel would reap the program itself, and the command wait
     * for it for ever. The command takes the default; the program gets
     * what the command was given. */
    struct sigaction chld_was, chld_dfl;
    memset(&chld_dfl, 0, sizeof chld_dfl);
    chld_dfl.sa_handler = SIG_DFL;
    sigemptyset(&chld_dfl.sa_mask);
    sigaction(SIGCHLD, &chld_dfl, &chld_was);
    fflush(NULL);
    pid_t parent = getpid(), child = fork();
    if (child < 0)
        fail(1, "cannot start '%s': %s", argv[0], strerror(errno));
    if (child == 0) {
        /* the command killed (SIGKILL), the program goes too, as when the
         * command was the program itself */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
            _exit(1);
        sigaction(SIGCHLD, &chld_was, NULL);
        sigprocmask(SIG_SETMASK, &old, NULL);
        execvp(argv[0], argv);
        int err = errno;
        struct stat st; /* a directory by the path given: the kernel's EACCES says only "Permission denied" */
        int dir = err == EACCES && strchr(argv[0], '/') && stat(argv[0], &st) == 0 && S_ISDIR(st.st_mode);
        char interp[256];
        if (err == ENOENT && strchr(argv[0], '/') && script_interpreter(argv[0], interp, sizeof interp)) {
            /* the script is there, its #! interpreter is not: as a shell says it */
            fprintf(stderr, "gpumemguard: cannot run '%s': its interpreter '%s' (#!): bad interpreter: %s\n", argv[0],
                    interp, strerror(err));
            _exit(126);
        }
        fprintf(stderr, "gpumemguard: cannot run '%s': %s\n", argv[0], dir ? "it is a directory" : strerror(err));
        _exit(err == ENOENT || err == ENOTDIR ? 127 : 126);
    }
    int stop_asked = 0; /* the command got a stop signal the program's stop has not answered yet */
    for (;;) {
        siginfo_t si;
        int sig = sigwaitinfo(&set, &si);
        if (sig < 0)
            continue; /* EINTR: a stop and continue */
        if (is_stop(sig))
            stop_asked = 1;
        else if (sig == SIGCONT)
            stop_asked = 0; /* one the program ignored: not for a later stop */
        if (sig == SIGCHLD) {
            int st;
            if (waitpid(child, &st, WNOHANG | WUNTRACED) != child)
                continue; /* continued, or nothing new */
            if (WIFSTOPPED(st)) { /* the program stopped: the command too, as the job it stands for */
                if (stop_for_command(&stop_asked))
                    stop_too(WSTOPSIG(st));
                continue;
            }
            if (WIFSIGNALED(st))
                return 128 + WTERMSIG(st);
            return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
        }
        if (si.si_code > 0 || si.si_pid == child || si.si_pid == getpid())
            continue; /* the kernel's (the program has it too), the program's own, or the command's (SIGPIPE) */
        if (sig == dumpsig && caught_by(child, sig) == 0) {
            char sb[32];
            fprintf(stderr, "gpumemguard: %s not passed on: process %ld does not catch it yet (the guard arms it "
                    "at the program's first CUDA call), and it would kill it\n", signame(sig, sb, sizeof sb),
                    (long)child);
            continue;
        }
        kill(child, sig);
    }
}

/* GPUMEM_SUPPRESSIONS naming a pipe or FIFO (--suppressions <(...)): a
 * pipe gives its text to one reader, and every guarded process of the job
 * reads the file (the library refuses pipes). The command reads it once
 * and names a private copy instead, removed when the command ends. A FIFO
 * that stays silent for 10 s is an error, not a wait for ever. */
#define SUPP_MAX (16u << 20)
static char supp_copy[64];

static void supp_remove(void)
{
    if (supp_copy[0])
        unlink(supp_copy);
}

/* A relative path in `var` made absolute, from the directory the command
 * runs in: every process of the job (one that changes directory, `make
 * -C`, a test runner) then reads and writes the same files. A relative
 * suppressions file that is not there is left as typed, for the library
 * to name as the user wrote it; so is a path that would grow too long. */
static void absolute_env(const char *var, int must_exist, int escapes)
{
    const char *v = getenv(var);
    struct stat st;
    char cwd[PATH_MAX], full[4000];
    if (!v || !*v || *v == '/' || (must_exist && stat(v, &st) != 0) || !getcwd(cwd, sizeof cwd))
        return;
    /* the report's words, and what the library refuses as a mistyped one
     * (STDOUT, '-'), stay as typed: the library says so */
    if (strcmp(var, "GPUMEM_REPORT") == 0 &&
        (!strcasecmp(v, "stderr") || !strcasecmp(v, "stdout") || !strcasecmp(v, "none") || !strcmp(v, "-")))
        return;
    /* so does a path with an escape the library refuses: named as typed */
    char why[48];
    if (escapes && gmg_config_bad_escape(v, strcmp(var, "GPUMEM_REPORT") == 0 ? GMG_REPORT_ESCAPES : GMG_METRICS_ESCAPES,
                                         why, sizeof why))
        return;
    size_t n = 0;
    for (const char *c = strcmp(cwd, "/") ? cwd : ""; *c; c++) { /* a % of the directory's is no escape */
        if (n + 3 >= sizeof full)
            return;
        full[n++] = *c;
        if (*c == '%' && escapes)
            full[n++] = '%';
    }
    if ((size_t)snprintf(full + n, sizeof full - n, "/%s", v) >= sizeof full - n)
        return;
    if (setenv(var, full, 1) != 0)
        fail(1, "cannot set %s: %s", var, strerror(errno));
}

static void copy_suppressions(void)
{
    const char *path = getenv("GPUMEM_SUPPRESSIONS");
    struct stat st;
    if (!path || !*path || stat(path, &st) != 0 || !S_ISFIFO(st.st_mode))
        return;
    int in = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (in < 0)
        fail(2, "--suppressions %s: cannot read it: %s", path, strerror(errno));
    const char *dir = getenv("TMPDIR");
    snprintf(supp_copy, sizeof supp_copy, "%s/gpumemguard-supp-XXXXXX", dir && *dir && strlen(dir) < 32 ? dir : "/tmp");
    int out = mkstemp(supp_copy);
    if (out < 0) {
        int e = errno;
        supp_copy[0] = 0;
        fail(1, "--suppressions %s: cannot make a copy of the pipe's text: %s", path, strerror(e));
    }
    atexit(supp_remove);
    char buf[65536];
    size_t total = 0;
    for (;;) {
        struct pollfd pf = { .fd = in, .events = POLLIN };
        int pr = poll(&pf, 1, 10000);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr == 0)
            fail(2, "--suppressions %s: a pipe or FIFO that gave no text for 10 s (nothing writes to it?)", path);
        ssize_t n = read(in, buf, sizeof buf);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n < 0)
            fail(2, "--suppressions %s: cannot read it: %s", path, strerror(errno));
        if (n == 0)
            break;
        if ((total += (size_t)n) > SUPP_MAX)
            fail(2, "--suppressions %s: more than %u MiB of text", path, SUPP_MAX >> 20);
        for (ssize_t w = 0; w < n;) {
            ssize_t k = write(out, buf + w, (size_t)(n - w));
            if (k < 0 && errno == EINTR)
                continue;
            if (k < 0)
                fail(1, "--suppressions %s: cannot write its copy %s: %s", path, supp_copy, strerror(errno));
            w += k;
        }
    }
    close(in);
    if (close(out) != 0)
        fail(1, "--suppressions %s: cannot write its copy %s: %s", path, supp_copy, strerror(errno));
    /* judged here, where a bad line can be named by the path the user gave
     * (the library would name the copy, gone once the command ends) */
    struct gmg_suppressions sp;
    char why[512];
    if (gmg_suppressions_load(supp_copy, &sp, why, sizeof why) == -1)
        fail(2, "--suppressions %s: %s", path, why);
    gmg_suppressions_free(&sp);
    if (setenv("GPUMEM_SUPPRESSIONS", supp_copy, 1) != 0)
        fail(1, "cannot set GPUMEM_SUPPRESSIONS: %s", strerror(errno));
}

/* The status of --help and --version: 0 once their text is written; a
 * write that failed (a full disk, a closed pipe) is said, status 1, never
 * a success with the text lost, as coreutils do. */
static int printed(void)
{
    if (fflush(stdout) == 0 && !ferror(stdout))
        return 0;
    fprintf(stderr, "gpumemguard: cannot write to standard output: %s\n", strerror(errno));
    return 1;
}

static const struct option_def *find_option(const char *name, size_t n)
{
    for (size_t i = 0; i < NOPTIONS; i++)
        if (strlen(options[i].name) == n && strncmp(options[i].name, name, n) == 0)
            return &options[i];
    return NULL;
}

/* GPUMEMGUARD_CLI_OPTIONS: "GPUMEM_LIMIT=limit/1a2b3c4d ...", the
 * variables the options set, each with the option's name and a hash of
 * the value it gave (gmg_config_value_hash), so that the library's message
 * about a bad value names the option the user typed (--limit 1gb), and
 * only while the variable still holds that value (a launcher further down
 * that sets the variable itself is named as the variable). Not a GPUMEM_
 * name: the library refuses those it does not know. */
static void note_option(const struct option_def *o, const char *val)
{
    static struct { const char *var, *name; uint32_t hash; } set[NOPTIONS];
    static size_t nset;
    size_t k = 0;
    while (k < nset && strcmp(set[k].var, o->var) != 0)
        k++;
    if (k == nset)
        nset++;
    set[k].var = o->var;
    set[k].name = o->name;
    set[k].hash = gmg_config_value_hash(val); /* the last of an option given twice, as the variable */
    char list[2048];
    size_t len = 0;
    list[0] = 0;
    for (size_t i = 0; i < nset && len < sizeof list; i++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s=%s/%08x", i ? " " : "", set[i].var,
                                set[i].name, (unsigned)set[i].hash);
    if (len < sizeof list)
        setenv("GPUMEMGUARD_CLI_OPTIONS", list, 1);
}

static void check_exitcode(const char *v)
{
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (!isdigit((unsigned char)v[0]) || *end || errno || n < 0 || n > 255)
        usage_error("--error-exitcode '%s' (GPUMEM_EXITCODE) is not a whole number from 0 to 255", v);
}

int main(int argc, char **argv)
{
    const char *signal_opt = NULL, *other_opt = NULL;
    int interval_opt = 0;
    int i = 1, dashdash = 0, tensors = 0;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            i++;
            dashdash = 1;
            break;
        }
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            help();
            return printed();
        }
        if (strcmp(a, "--version") == 0 || strcmp(a, "-V") == 0) {
            printf("gpumemguard " GPUMEMGUARD_VERSION "\n");
            return printed();
        }
        if (a[0] != '-' || a[1] == '\0')
            break;              /* the program (or "dump") */
        if (strncmp(a, "--tensors=", 10) == 0)
            usage_error("option '--tensors' takes no value");
        if (strcmp(a, "--tensors") == 0) { /* no value: the frameworks' settings (tensors.c) */
            tensors = 1;
            if (!other_opt)
                other_opt = "tensors";
            continue;
        }
        if (a[1] != '-')
            usage_error("unknown option '%s'", a);
        const char *name = a + 2, *eq = strchr(name, '=');
        size_t n = eq ? (size_t)(eq - name) : strlen(name);
        const struct option_def *o = find_option(name, n);
        if (!o)
            usage_error("unknown option '--%.*s'", (int)n, name);
        const char *val;
        if (eq) {
            val = eq + 1;
        } else {
            if (i + 1 >= argc || is_long_option(argv[i + 1]))
                usage_error("option '--%s' needs a value (%s)", o->name, o->arg);
            val = argv[++i];
        }
        if (strcmp(o->name, "error-exitcode") == 0)
            check_exitcode(val);
        if (strcmp(o->name, "metrics-interval") == 0) /* a bad value is the library's to name */
            interval_opt = strspn(val, "0123456789") == strlen(val) && atol(val) >= 1 && atol(val) <= 86400;
        if (strcmp(o->name, "signal") == 0)
            signal_opt = val;
        else if (!other_opt)
            other_opt = o->name;
        if (setenv(o->var, val, 1) != 0)
            fail(1, "cannot set %s: %s", o->var, strerror(errno));
        note_option(o, val);
    }
    if (i >= argc)
        usage_error("missing PROGRAM (gpumemguard [OPTIONS] -- PROGRAM [ARGS...])");
    if (!dashdash && strcmp(argv[i], "dump") == 0) {
        if (other_opt)
            usage_error("dump takes only --signal; '--%s' has no meaning there", other_opt);
        return dump(argc - i - 1, argv + i + 1, signal_opt);
    }
    if (!dashdash && strcmp(argv[i], "top") == 0) {
        if (other_opt || signal_opt)
            usage_error("top takes none of the options that run a program ('--%s')", other_opt ? other_opt : "signal");
        return gmg_top_main(argc - i - 1, argv + i + 1);
    }
    if (!dashdash && strcmp(argv[i], "view") == 0) {
        if (other_opt || signal_opt)
            usage_error("view takes no option before it; '--%s' has no meaning there", other_opt ? other_opt : "signal");
        return gmg_view_main(argc - i - 1, argv + i + 1);
    }
    if (interval_opt && !(getenv("GPUMEM_METRICS") && *getenv("GPUMEM_METRICS")))
        usage_error("--metrics-interval without --metrics (or GPUMEM_METRICS): there is no metrics file to rewrite");

    char tried[3 * PATH_MAX];
    char *lib = find_library(tried, sizeof tried);
    if (!lib)
        fail(1, "cannot find " LIBNAME " (looked for %s)", tried);
    if (strpbrk(lib, " :"))
        fail(1, "cannot preload %s: LD_PRELOAD takes no path with a space or a colon (the program would run "
             "unguarded); install or link " LIBNAME " under a path without them", lib);
    /* the NVTX memory API reaches the guard only as NVTX's injection
     * library; another tool the user named keeps its place */
    if (!getenv("NVTX_INJECTION64_PATH") && setenv("NVTX_INJECTION64_PATH", lib, 1) != 0)
        fail(1, "cannot set NVTX_INJECTION64_PATH: %s", strerror(errno));
    if (tensors && gmg_tensors_setenv() != 0)
        fail(1, "cannot set the --tensors settings: %s", strerror(errno));
    absolute_env("GPUMEM_SUPPRESSIONS", 1, 0);
    absolute_env("GPUMEM_REPORT", 0, 1);
    absolute_env("GPUMEM_METRICS", 0, 1);
    copy_suppressions();
    char *preload = build_preload(lib, getenv("LD_PRELOAD"));
    if (setenv("LD_PRELOAD", preload, 1) != 0)
        fail(1, "cannot set LD_PRELOAD: %s", strerror(errno));
    return run(argv + i);
}
