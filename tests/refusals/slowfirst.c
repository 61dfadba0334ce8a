/*
 * slowfirst.c - a preloaded write() that holds the first refusal message it
 * writes (the quota's or the driver's out of memory) for 8 s, once in the
 * process (a child forked after it does not wait): the report thread stays
 * inside that write while refusals at new
 * call sites pile up past its queue. For tests/refusals/fork_dropped.sh.
 * SLOWFIRST_TEXT and SLOWFIRST_SECONDS hold another write instead (the exit
 * report's, for tests/signals/term_in_exit.sh).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

ssize_t write(int fd, const void *buf, size_t n)
{
    static ssize_t (*real)(int, const void *, size_t);
    static int held;
    if (!real)
        real = (ssize_t(*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
    static const char refused[] = "gpumemguard: refused", oom[] = "gpumemguard: the driver refused";
    const char *text = getenv("SLOWFIRST_TEXT"), *secs = getenv("SLOWFIRST_SECONDS");
    ssize_t w = real(fd, buf, n);
    int ours = w > 0 && buf &&
               (text ? memmem(buf, (size_t)w, text, strlen(text)) != NULL
                     : memmem(buf, (size_t)w, refused, sizeof refused - 1) || memmem(buf, (size_t)w, oom, sizeof oom - 1));
    if (ours && !__atomic_exchange_n(&held, 1, __ATOMIC_RELAXED)) {
        struct timespec ts = { secs ? atoi(secs) : 8, 0 };
        while (nanosleep(&ts, &ts) != 0)
            ;
    }
    return w;
}
