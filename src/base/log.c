/* log.c - see log.h. */
#include "base/log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

int gmg_log_level = GMG_LOG_INFO;

/* The stderr the process started with: -1 not yet known, 0 closed then. */
static int err_state = -1;
static dev_t err_dev;
static ino_t err_ino;

void gmg_stderr_remember(void)
{
    struct stat st;
    if (fstat(2, &st) == 0) {
        err_dev = st.st_dev;
        err_ino = st.st_ino;
        err_state = 1;
    } else {
        err_state = 0;
    }
}

int gmg_stderr_ok(void)
{
    if (err_state < 0)
        return 1;
    struct stat st;
    return err_state == 1 && fstat(2, &st) == 0 && st.st_dev == err_dev && st.st_ino == err_ino;
}

int gmg_write_all(int fd, const char *p, size_t n)
{
    int saved = errno;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = EIO;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    errno = saved;
    return 0;
}

int gmg_write_stderr(const char *p, size_t n)
{
    if (!gmg_stderr_ok())
        return -1;
    return gmg_write_all(2, p, n);
}

static void emit(const char *tag, const char *fmt, va_list ap)
{
    char buf[1024];
    int saved = errno;
    int n = snprintf(buf, sizeof buf, "gpumemguard: %s", tag);
    int m = vsnprintf(buf + n, sizeof buf - (size_t)n - 1, fmt, ap);
    if (m < 0)
        m = 0;
    size_t len = (size_t)n + ((size_t)m < sizeof buf - (size_t)n - 1 ? (size_t)m : sizeof buf - (size_t)n - 2);
    buf[len++] = '\n';
    gmg_write_stderr(buf, len);
    errno = saved;
}

void gmg_log(int level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit(level >= GMG_LOG_DEBUG ? "debug: " : "", fmt, ap);
    va_end(ap);
}

void gmg_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit("error: ", fmt, ap);
    va_end(ap);
}

void gmg_notice(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit("", fmt, ap);
    va_end(ap);
}
