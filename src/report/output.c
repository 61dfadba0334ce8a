/*
 * output.c - where reports go (SPEC §3-5).
 *
 * GPUMEM_REPORT is "stderr" (default), "stdout", "none", or a path in which
 * %p is the pid, %n the dump number and %% a percent sign. No report ever
 * silently replaces another of the same run: without %n the second and later
 * dumps of a process get ".N" before the extension (r.txt, r.2.txt, ...);
 * without %p a forked child gets ".PID" there too. (A program a guarded one
 * starts with exec is a process of its own: give the path %p when several
 * guarded programs of one job share it.) With several
 * formats each file gets the format's extension. A FIFO or a device takes
 * every dump in turn, under its own name.
 *
 * A regular file is written whole: a temporary beside it, created
 * O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600, named by pid and a per-process count
 * (a stale one is stepped over), then renamed into place. A path that is a
 * symlink or a directory is refused. An existing FIFO or device is opened
 * O_NONBLOCK (a FIFO with no reader fails at once) and written with a time
 * limit, so that nothing can hang the program. Any failure falls back to
 * stderr, with one line saying why. Under secure execution (AT_SECURE) no
 * file is ever written. Whole reports are serialised, so their numbers are
 * in order.
 */
#define _GNU_SOURCE
#include "report/report.h"
#include "report/sites.h"

#include "base/config.h"
#include "base/fd.h"
#include "base/log.h"
#include "core/track.h"
#include "report/atpeak.h"
#include "report/reporter.h"
#include "report/symbolize.h"
#include "report/timeline.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define STALL_MS 5000                     /* a FIFO or device that takes no data */

static pthread_mutex_t report_mu = PTHREAD_MUTEX_INITIALIZER;

/* Held over a report's write to stderr, or to stdout when it is stderr's
 * file too (2>&1), over a refusal's whole message (model.c), and, when it
 * can be had at once, over a refused call's own first line (reporter.c):
 * written by several threads (the report thread's dump, a refusal at exit,
 * the refused call), none lands inside another. */
static pthread_mutex_t stream_mu = PTHREAD_MUTEX_INITIALIZER;

void gmg_report_stream_lock(void) { pthread_mutex_lock(&stream_mu); }
int gmg_report_stream_trylock(void) { return pthread_mutex_trylock(&stream_mu) == 0; }
void gmg_report_stream_unlock(void) { pthread_mutex_unlock(&stream_mu); }

static int descendant;                    /* a forked child */
/* Under report_mu: a format of the report being written fell back to
 * stderr, its file not written; and the last signal dump's number (0: no
 * file named) and whether it fell back (gmg_report_signal_dump: read by
 * the thread that makes the signal dumps, one at a time). */
static int fell_back;
static struct signal_dump { unsigned dump; int fell_back; } signal_dump;
static unsigned tmp_count;
static __thread unsigned busy __attribute__((tls_model("initial-exec"))); /* gmg_report_busy */

int gmg_report_busy(void) { return busy != 0; }
void gmg_report_busy_enter(void) { busy++; }
void gmg_report_busy_leave(void) { busy--; }

void gmg_report_orphan_child(void)
{
    pthread_mutex_init(&report_mu, NULL);
    pthread_mutex_init(&stream_mu, NULL);
    gmg_symbolizer_atfork_child(); /* the parent's is left alone, never freed: its memory may be another arena's */
    gmg_at_peak_atfork_child();
    gmg_timeline_atfork_child();
    gmg_sites_atfork_child();
}

void gmg_report_atfork_child(void)
{
    pthread_mutex_init(&report_mu, NULL);
    pthread_mutex_init(&stream_mu, NULL);
    descendant = 1;
    gmg_report_model_atfork_child();
}

/* The path of one report: the pattern expanded, then ".PID" and ".N" as
 * the rules above ask, before the extension (the format's, or the one the
 * pattern ends with). */
static void path_of(const char *pattern, unsigned dump, const char *ext, char *out, size_t n)
{
    size_t k = 0;
    int has_p = 0, has_n = 0;
    for (const char *p = pattern; *p && k + 32 < n; p++) {
        if (*p == '%' && p[1] == 'p') {
            k += (size_t)snprintf(out + k, n - k, "%d", (int)getpid());
            has_p = 1;
            p++;
        } else if (*p == '%' && p[1] == 'n') {
            k += (size_t)snprintf(out + k, n - k, "%u", dump);
            has_n = 1;
            p++;
        } else if (*p == '%' && p[1] == '%') {
            out[k++] = '%';
            p++;
        } else {
            out[k++] = *p;
        }
    }
    out[k] = 0;
    char insert[48] = "";
    size_t m = 0;
    if (!has_p && descendant)
        m += (size_t)snprintf(insert + m, sizeof insert - m, ".%d", (int)getpid());
    if (!has_n && dump > 1)
        m += (size_t)snprintf(insert + m, sizeof insert - m, ".%u", dump);
    struct stat st;
    if (m && !ext && lstat(out, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode) || S_ISSOCK(st.st_mode)))
        m = insert[0] = 0; /* a stream (FIFO, device) takes every dump in turn */
    char tail[64] = "";
    if (ext) {
        snprintf(tail, sizeof tail, "%s", ext);
    } else if (m) {
        const char *slash = strrchr(out, '/');
        const char *base = slash ? slash + 1 : out;
        const char *dot = strrchr(base, '.');
        if (dot && dot != base && strlen(dot) < sizeof tail) {
            snprintf(tail, sizeof tail, "%s", dot);
            out[dot - out] = 0;
        }
    }
    size_t len = strlen(out);
    snprintf(out + len, n - len, "%s%s", insert, tail);
}

/* The write loop of write_nonblocking. */
static int write_stream(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w > 0) {
            p += w;
            n -= (size_t)w;
            continue;
        }
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && errno == EAGAIN) {
            struct pollfd pf = { .fd = fd, .events = POLLOUT };
            int rc = poll(&pf, 1, STALL_MS);
            if (rc > 0 && !(pf.revents & (POLLERR | POLLHUP)))
                continue;
            errno = rc == 0 ? ETIMEDOUT : EPIPE;
        }
        return -1;
    }
    return 0;
}

/* Write to an open FIFO or device without ever blocking for long, or
 * raising SIGPIPE when its reader goes. */
static int write_nonblocking(int fd, const char *p, size_t n)
{
    struct gmg_nopipe np;
    gmg_nopipe_begin(&np);
    int rc = write_stream(fd, p, n);
    int err = errno;
    gmg_nopipe_end(&np, rc != 0 && err == EPIPE);
    errno = err;
    return rc;
}

/* 0 on success; otherwise -1 and *why says why, for the one message. */
static int write_file(const char *path, const struct gmg_buf *b, const char **why)
{
    struct stat st;
    if (lstat(path, &st) == 0) {
        if (S_ISLNK(st.st_mode)) {
            /* /dev/stdout is one: the words name the streams */
            *why = strcmp(path, "/dev/stdout") == 0 ? "it is a symbolic link: refused; the word stdout names the stream"
                 : strcmp(path, "/dev/stderr") == 0 ? "it is a symbolic link: refused; the word stderr names the stream"
                                                   : "it is a symbolic link: refused";
            return -1;
        }
        if (S_ISDIR(st.st_mode)) {
            *why = "it is a directory";
            return -1;
        }
        if (!S_ISREG(st.st_mode)) {
            int fd = gmg_open_high(path, O_WRONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0);
            if (fd < 0) {
                *why = errno == ENXIO ? "a FIFO with no reader" : strerror(errno);
                return -1;
            }
            int rc = write_nonblocking(fd, b->p, b->len);
            if (rc != 0)
                *why = strerror(errno);
            close(fd);
            return rc;
        }
    }
    /* the temporary beside the file (rename is atomic only there), named
     * so that it fits NAME_MAX whatever the file's own name (a legal
     * 255-byte name leaves no room for a suffix) */
    char tmp[4400];
    int fd = -1;
    const char *slash = strrchr(path, '/');
    int dirlen = slash ? (int)(slash - path + 1) : 0;
    for (int tries = 0; fd < 0 && tries < 100; tries++) {
        unsigned k = __atomic_fetch_add(&tmp_count, 1, __ATOMIC_RELAXED);
        if (dirlen > 4200 || (size_t)snprintf(tmp, sizeof tmp, "%.*s.gpumem-report.%d.%u.tmp", dirlen, path,
                                              (int)getpid(), k) >= sizeof tmp) {
            *why = "path too long";
            return -1;
        }
        fd = gmg_open_high(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 && errno != EEXIST)
            break; /* a stale temporary is stepped over; anything else is final */
    }
    if (fd < 0) {
        *why = strerror(errno);
        return -1;
    }
    int rc = gmg_write_all(fd, b->p, b->len);
    if (close(fd) != 0)
        rc = -1;
    if (rc == 0 && rename(tmp, path) != 0)
        rc = -1;
    if (rc != 0) {
        *why = strerror(errno);
        unlink(tmp);
    }
    return rc;
}

/* gmg_report_check_path found the reports' directory unusable and said
 * so, that reports go to stderr: while it still is, a report written there
 * says nothing more. */
static int dir_told;

/* Why the reports' directory cannot take a report, into why[] (NULL: it can). */
static const char *dir_unusable(const char *dir, char *why, size_t cap)
{
    struct stat st;
    if (stat(dir, &st) != 0)
        snprintf(why, cap, "directory %s does not exist (%s)", dir, strerror(errno));
    else if (!S_ISDIR(st.st_mode))
        snprintf(why, cap, "%s is not a directory", dir);
    else if (access(dir, W_OK | X_OK) != 0)
        snprintf(why, cap, "directory %s is not writable (%s)", dir, strerror(errno));
    else
        return NULL;
    return why;
}

static int dir_still_told(const char *path)
{
    char dir[4300], why[4400];
    snprintf(dir, sizeof dir, "%s", path);
    return __atomic_load_n(&dir_told, __ATOMIC_ACQUIRE) && dir_unusable(gmg_path_dir(dir), why, sizeof why);
}

/* A report to descriptor 1 or 2: a fatal signal's gives up on a reader
 * that takes nothing for STALL_MS (a pipe nobody reads, as a FIFO gets),
 * so that it never keeps the signal from ending the process; any other
 * gives way once a fatal signal asks for its report. */
static int write_std(int fd, const struct gmg_report *r, const struct gmg_buf *b)
{
    return r->trigger == GMG_TRIGGER_FATAL ? gmg_write_std_within(fd, b->p, b->len, STALL_MS)
                                           : gmg_write_std_unless(fd, b->p, b->len, gmg_reporter_fatal_pending);
}

static int same_file_as_stderr(int fd)
{
    struct stat a, e;
    return fstat(fd, &a) == 0 && fstat(2, &e) == 0 && a.st_dev == e.st_dev && a.st_ino == e.st_ino;
}

/* 0: the report reached its destination, or stderr in its place; -1: it
 * is lost (no memory to format it, and stderr cannot take it either). */
static int emit(const struct gmg_report *r, int fmt, const char *ext)
{
    if (strcmp(gmg_cfg.report, "none") == 0)
        return 0;
    struct gmg_buf b = { 0 };
    if (fmt == GMG_FMT_JSON)
        gmg_report_json(r, &b);
    else if (fmt == GMG_FMT_FOLDED)
        gmg_report_folded(r, &b);
    else if (fmt == GMG_FMT_HTML)
        gmg_report_html(r, &b);
    else if (fmt == GMG_FMT_MEMVIZ)
        gmg_report_memviz(r, &b);
    else if (fmt == GMG_FMT_TRACE)
        gmg_report_trace(r, &b);
    else
        gmg_report_text(r, &b);
    if (b.failed) {
        gmg_error("out of memory while formatting a report");
        gmg_buf_free(&b);
        return -1;
    }
    if (strcmp(gmg_cfg.report, "stdout") == 0) {
        int shared = same_file_as_stderr(1);
        if (shared)
            gmg_report_stream_lock();
        int wrote = write_std(1, r, &b) == 0;
        if (shared)
            gmg_report_stream_unlock();
        if (wrote) {
            gmg_buf_free(&b);
            return 0;
        }
        gmg_error("cannot write report to stdout (%s): writing to stderr",
                  gmg_std_ok(1) ? strerror(errno) : "descriptor 1 is no longer the program's stdout");
    }
    int to_stderr = strcmp(gmg_cfg.report, "stderr") == 0 || strcmp(gmg_cfg.report, "stdout") == 0;
    if (!to_stderr && gmg_cfg.secure) {
        gmg_error("secure execution: report files are not written, using stderr");
        to_stderr = 1;
    }
    if (!to_stderr) {
        char path[4300];
        const char *why = "unknown error";
        path_of(gmg_cfg.report, r->dump, ext, path, sizeof path);
        if (write_file(path, &b, &why) == 0) {
            gmg_buf_free(&b);
            return 0;
        }
        fell_back = 1;
        if (!dir_still_told(path)) /* else said once already, at the first CUDA use */
            gmg_error("cannot write report to %s (%s): writing to stderr", path, why);
    }
    gmg_report_stream_lock();
    int rc = write_std(2, r, &b);
    gmg_report_stream_unlock();
    gmg_buf_free(&b);
    return rc == 0 ? 0 : -1;
}

unsigned gmg_report_signal_dump(int *fell_back_out, int *pid_named)
{
    *fell_back_out = signal_dump.fell_back;
    *pid_named = descendant && !strstr(gmg_cfg.report, "%p");
    return signal_dump.dump;
}

uint64_t gmg_report_now(enum gmg_trigger trigger)
{
    struct gmg_report r;
    uint64_t leaks = 0;
    /* GPUMEM_REPORT=none: nothing to write, so nothing to build (a walk of
     * every live record), but for the leaks GPUMEM_EXITCODE asks about */
    if (strcmp(gmg_cfg.report, "none") == 0 && !(trigger == GMG_TRIGGER_EXIT && gmg_cfg.exitcode)) {
        gmg_debug("no report made: GPUMEM_REPORT=none");
        return 0;
    }
    pthread_mutex_lock(&report_mu);
    gmg_report_busy_enter();
    fell_back = 0;
    if (gmg_report_build(&r, trigger) == 0) {
        leaks = gmg_report_leaks(&r);
        int several = (gmg_cfg.formats & (gmg_cfg.formats - 1)) != 0;
        /* a clean exit says its one line; at GPUMEM_LOG=quiet, nothing:
         * no format of it on stderr or stdout (files are still written) */
        int clean = gmg_report_clean(&r), silent = clean && gmg_cfg.log_level == GMG_LOG_QUIET, lost = 0;
        int streamed = !strcmp(gmg_cfg.report, "stderr") || !strcmp(gmg_cfg.report, "stdout");
        int quiet_stream = silent && streamed;
        /* device free memory only where it is shown: where no context
         * answers, NVML is opened and initialised for it (seconds, on some
         * machines), which a clean exit's one line, folded stacks and
         * GPUMEM_REPORT=none (a report built for GPUMEM_EXITCODE) must not
         * cost the program */
        if (strcmp(gmg_cfg.report, "none") != 0 &&
            ((gmg_cfg.formats & (GMG_FMT_JSON | GMG_FMT_HTML)) || ((gmg_cfg.formats & GMG_FMT_TEXT) && !clean))) {
            /* NVML's library, loaded here once, is the guard's own: the
             * symbolizer warmed up for the program stays (symbolize.h) */
            struct gmg_loads mark = gmg_symbolizer_loads();
            gmg_frag_meminfo(&r);
            gmg_symbolizer_own_loads(r.sym, mark);
        }
        if ((gmg_cfg.formats & GMG_FMT_TEXT) && !silent)
            lost |= emit(&r, GMG_FMT_TEXT, several ? ".txt" : NULL);
        if ((gmg_cfg.formats & GMG_FMT_JSON) && !quiet_stream)
            lost |= emit(&r, GMG_FMT_JSON, several ? ".json" : NULL);
        if ((gmg_cfg.formats & GMG_FMT_FOLDED) && !quiet_stream)
            lost |= emit(&r, GMG_FMT_FOLDED, several ? ".folded" : NULL);
        if ((gmg_cfg.formats & GMG_FMT_HTML) && !quiet_stream)
            lost |= emit(&r, GMG_FMT_HTML, several ? ".html" : NULL);
        if ((gmg_cfg.formats & GMG_FMT_MEMVIZ) && !quiet_stream)
            lost |= emit(&r, GMG_FMT_MEMVIZ, several ? ".pickle" : NULL);
        if ((gmg_cfg.formats & GMG_FMT_TRACE) && !quiet_stream)
            lost |= emit(&r, GMG_FMT_TRACE, several ? ".trace.json" : NULL);
        /* A dump that lists growth marked it listed. If any of its reports
         * was lost, or its groups could not all be made, the next dump
         * lists that growth again: twice rather than never. */
        if (r.has_growth) {
            if (lost || (r.incomplete & GMG_INCOMPLETE_GROUPS))
                gmg_track_marks_undo();
            else
                gmg_track_marks_keep();
        }
        if (trigger == GMG_TRIGGER_SIGNAL) /* for `gpumemguard dump`'s answer: this dump's own number */
            signal_dump = (struct signal_dump){ streamed || !strcmp(gmg_cfg.report, "none") ? 0 : r.dump, fell_back };
        gmg_report_free(&r);
    }
    gmg_report_busy_leave();
    pthread_mutex_unlock(&report_mu);
    return leaks;
}

void gmg_report_check_path(void)
{
    const char *rep = gmg_cfg.report;
    if (!strcmp(rep, "stderr") || !strcmp(rep, "stdout") || !strcmp(rep, "none"))
        return;
    char path[4300];
    path_of(rep, 1, NULL, path, sizeof path);
    char why[4400];
    if (!dir_unusable(gmg_path_dir(path), why, sizeof why))
        return;
    gmg_error("GPUMEM_REPORT='%s': %s; reports will go to stderr", rep, why);
    __atomic_store_n(&dir_told, 1, __ATOMIC_RELEASE); /* said: a report written to stderr says no more */
}
