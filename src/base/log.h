/*
 * log.h - the guard's messages on stderr. Formats into a stack buffer and
 * writes with one write(2): no allocation, no stdio locks, safe on any thread.
 */
#ifndef GMG_BASE_LOG_H
#define GMG_BASE_LOG_H

#include <signal.h>
#include <stddef.h>

enum gmg_log_level { GMG_LOG_QUIET = 0, GMG_LOG_INFO = 1, GMG_LOG_DEBUG = 2 };

extern int gmg_log_level;

void gmg_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define gmg_debug(...) do { if (gmg_log_level >= GMG_LOG_DEBUG) gmg_log(GMG_LOG_DEBUG, __VA_ARGS__); } while (0)
#define gmg_info(...) do { if (gmg_log_level >= GMG_LOG_INFO) gmg_log(GMG_LOG_INFO, __VA_ARGS__); } while (0)

/* Always printed: the guard's own errors ("error: ..."). */
void gmg_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Always printed, with no "error:" tag: what the guard did on purpose
 * (refusing an allocation over the quota). */
void gmg_notice(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Write all of p to fd (EINTR retried): 0, or -1 with errno set. A reader
 * gone away is EPIPE, never a SIGPIPE that would kill the program. */
int gmg_write_all(int fd, const char *p, size_t n);

/* SIGPIPE blocked around other writes (the same as gmg_write_all does):
 * end(np, 1) after an EPIPE takes the signal that write raised. */
struct gmg_nopipe {
    sigset_t old;
    int was_pending;
};
void gmg_nopipe_begin(struct gmg_nopipe *np);
void gmg_nopipe_end(struct gmg_nopipe *np, int got_epipe);

/* Descriptors 1 and 2, only while each is still the one the process started
 * with (remembered at start-up): a program that closed one and opened a file
 * of its own in its place never gets our text in that file. */
void gmg_stderr_remember(void);
int gmg_std_ok(int fd);
int gmg_stderr_ok(void);
int gmg_write_stderr(const char *p, size_t n);
/* Descriptor fd (1 or 2, while it is still the process's own) written,
 * given up (-1, ETIMEDOUT) once it has taken nothing for ms milliseconds
 * (a pipe nobody reads): in pieces a pipe with room for one takes without
 * blocking. */
int gmg_write_std_within(int fd, const char *p, size_t n, int ms);
/* The same with no time limit, but given up (-1, ECANCELED) as soon as
 * give_up() answers nonzero (asked before each piece, and every 100 ms
 * while fd takes nothing): a report that waits on a reader must not keep
 * a fatal signal's report, and the process's end, waiting behind it. */
int gmg_write_std_unless(int fd, const char *p, size_t n, int (*give_up)(void));

#endif
