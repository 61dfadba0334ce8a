/*
 * output.c - where reports go (SPEC §4-5). GPUMEM_REPORT is "stderr" or
 * a path in which %p is the pid and %n the dump number; with several
 * formats each file gets the format's extension. A regular file is written
 * whole: a temporary created O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600, then
 * renamed into place. A path that is a symlink is refused. An existing
 * non-regular file (a device, a pipe) is opened O_NOFOLLOW and written. Any
 * failure falls back to stderr. Under secure execution (AT_SECURE) no file
 * is ever written.
 */
#define _GNU_SOURCE
#include "report/report.h"

#include "base/config.h"
#include "base/log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

int gmg_write_fd(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static void expand(const char *pattern, unsigned dump, const char *ext, char *out, size_t n)
{
    size_t k = 0;
    for (const char *p = pattern; *p && k + 32 < n; p++) {
        if (*p == '%' && p[1] == 'p') {
            k += (size_t)snprintf(out + k, n - k, "%d", (int)getpid());
            p++;
        } else if (*p == '%' && p[1] == 'n') {
            k += (size_t)snprintf(out + k, n - k, "%u", dump);
            p++;
        } else if (*p == '%' && p[1] == '%') {
            out[k++] = '%';
            p++;
        } else {
            out[k++] = *p;
        }
    }
    out[k] = 0;
    if (ext)
        snprintf(out + k, n - k, "%s", ext);
}

static int write_file(const char *path, const struct gmg_buf *b)
{
    struct stat st;
    if (lstat(path, &st) == 0) {
        if (S_ISLNK(st.st_mode)) {
            gmg_error("GPUMEM_REPORT path %s is a symbolic link: refused, writing to stderr", path);
            return -1;
        }
        if (!S_ISREG(st.st_mode)) {
            int fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
            if (fd < 0)
                return -1;
            int rc = gmg_write_fd(fd, b->p, b->len);
            if (close(fd) != 0)
                rc = -1;
            return rc;
        }
    }
    char tmp[4300];
    if ((size_t)snprintf(tmp, sizeof tmp, "%.4200s.tmp.%d", path, (int)getpid()) >= sizeof tmp)
        return -1;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    int rc = gmg_write_fd(fd, b->p, b->len);
    if (close(fd) != 0)
        rc = -1;
    if (rc == 0 && rename(tmp, path) != 0)
        rc = -1;
    if (rc != 0)
        unlink(tmp);
    return rc;
}

static void emit(const struct gmg_report *r, int fmt, const char *ext)
{
    struct gmg_buf b = { 0 };
    if (fmt == GMG_FMT_JSON)
        gmg_report_json(r, &b);
    else if (fmt == GMG_FMT_FOLDED)
        gmg_report_folded(r, &b);
    else
        gmg_report_text(r, &b);
    if (b.failed) {
        gmg_error("out of memory while formatting a report");
        gmg_buf_free(&b);
        return;
    }
    int to_stderr = strcmp(gmg_cfg.report, "stderr") == 0;
    if (!to_stderr && getauxval(AT_SECURE)) {
        gmg_error("secure execution: report files are not written, using stderr");
        to_stderr = 1;
    }
    if (!to_stderr) {
        char path[4200];
        expand(gmg_cfg.report, r->dump, ext, path, sizeof path);
        if (write_file(path, &b) == 0) {
            gmg_buf_free(&b);
            return;
        }
        gmg_error("cannot write report to %s (%s): writing to stderr", path, strerror(errno));
    }
    gmg_write_fd(2, b.p, b.len);
    gmg_buf_free(&b);
}

void gmg_report_now(enum gmg_trigger trigger)
{
    struct gmg_report r;
    if (gmg_report_build(&r, trigger) != 0)
        return;
    int several = (gmg_cfg.formats & (gmg_cfg.formats - 1)) != 0;
    if (gmg_cfg.formats & GMG_FMT_TEXT)
        emit(&r, GMG_FMT_TEXT, several ? ".txt" : NULL);
    if (gmg_cfg.formats & GMG_FMT_JSON)
        emit(&r, GMG_FMT_JSON, several ? ".json" : NULL);
    if (gmg_cfg.formats & GMG_FMT_FOLDED)
        emit(&r, GMG_FMT_FOLDED, several ? ".folded" : NULL);
    gmg_report_free(&r);
}
