/* log.c - see log.h. */
#include "base/log.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

int gmg_log_level = GMG_LOG_INFO;

/* Descriptors 1 and 2 as the process started with them: -1 not yet known,
 * 0 closed then, 1 open (device and inode kept). */
static int std_state[3] = { -1, -1, -1 };
static dev_t std_dev[3];
static ino_t std_ino[3];

void gmg_stderr_remember(void)
{
    for (int fd = 1; fd <= 2; fd++) {
        struct stat st;
        if (fstat(fd, &st) == 0) {
            std_dev[fd] = st.st_dev;
            std_ino[fd] = st.st_ino;
            std_state[fd] = 1;
        } else {
            std_state[fd] = 0;
        }
    }
}

int gmg_std_ok(int fd)
{
    if (fd < 1 || fd > 2 || std_state[fd] < 0)
        return 1;
    struct stat st;
    return std_state[fd] == 1 && fstat(fd, &st) == 0 && st.st_dev == std_dev[fd] && st.st_ino == std_ino[fd];
}

int gmg_stderr_ok(void) { return gmg_std_ok(2); }

void gmg_nopipe_begin(struct gmg_nopipe *np)
{
    sigset_t pipe_set, pending;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &np->old);
    np->was_pending = sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE);
}

void gmg_nopipe_end(struct gmg_nopipe *np, int got_epipe)
{
    if (got_epipe && !np->was_pending) {
        /* the SIGPIPE our write raised, taken before it can reach the program */
        sigset_t pipe_set;
        sigemptyset(&pipe_set);
        sigaddset(&pipe_set, SIGPIPE);
        struct timespec zero = { 0, 0 };
        int saved = errno;
        sigtimedwait(&pipe_set, NULL, &zero);
        errno = saved;
    }
    pthread_sigmask(SIG_SETMASK, &np->old, NULL);
}

int gmg_write_all(int fd, const char *p, size_t n)
{
    int saved = errno, rc = 0;
    struct gmg_nopipe np;
    gmg_nopipe_begin(&np);
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = EIO;
            rc = -1;
            break;
        }
        p += w;
        n -= (size_t)w;
    }
    int err = errno;
    gmg_nopipe_end(&np, rc != 0 && err == EPIPE);
    errno = rc ? err : saved;
    return rc;
}

int gmg_write_stderr(const char *p, size_t n)
{
    if (!gmg_stderr_ok())
        return -1;
    return gmg_write_all(2, p, n);
}

/* fd (1 or 2) written in pieces a pipe with room for one takes at once,
 * each after poll says there is room: given up once it has taken nothing
 * for ms (ms < 0: never), or when give_up says so (asked before each piece
 * and every 100 ms while nothing is taken) */
static int write_polled(int fd, const char *p, size_t n, int ms, int (*give_up)(void))
{
    if (!gmg_std_ok(fd))
        return -1;
    while (n > 0) {
        if (give_up && give_up()) { /* a reader slow but steady too */
            errno = ECANCELED;
            return -1;
        }
        struct pollfd pf = { .fd = fd, .events = POLLOUT };
        int rc = poll(&pf, 1, give_up ? 100 : ms);
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc == 0 && give_up) {
            if (!give_up())
                continue;
            errno = ECANCELED;
            return -1;
        }
        if (rc <= 0 || (pf.revents & (POLLERR | POLLHUP | POLLNVAL))) {
            errno = rc == 0 ? ETIMEDOUT : EPIPE;
            return -1;
        }
        size_t k = n < 4096 ? n : 4096; /* PIPE_BUF: what a writable pipe takes at once */
        if (gmg_write_all(fd, p, k) != 0)
            return -1;
        p += k;
        n -= k;
    }
    return 0;
}

int gmg_write_std_within(int fd, const char *p, size_t n, int ms) { return write_polled(fd, p, n, ms, NULL); }

int gmg_write_std_unless(int fd, const char *p, size_t n, int (*give_up)(void))
{
    return write_polled(fd, p, n, -1, give_up);
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
