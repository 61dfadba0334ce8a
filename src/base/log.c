/* log.c - see log.h. */
#include "base/log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

int gmg_log_level = GMG_LOG_INFO;

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
    const char *p = buf;
    while (len > 0) {
        ssize_t w = write(2, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        p += w;
        len -= (size_t)w;
    }
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
