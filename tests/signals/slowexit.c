/*
 * slowexit.c - a preloaded write() that, once it has written the exit
 * report's SUMMARY line, returns only 2 s later, once in the process: the
 * exit report is still under way when tests/signals/term_in_exit.sh sends
 * SIGTERM.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

ssize_t write(int fd, const void *buf, size_t n)
{
    static ssize_t (*real)(int, const void *, size_t);
    static int held;
    if (!real)
        real = (ssize_t(*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
    static const char summary[] = "still live at exit";
    ssize_t w = real(fd, buf, n);
    int ours = w > 0 && buf && memmem(buf, (size_t)w, summary, sizeof summary - 1);
    if (ours && !__atomic_exchange_n(&held, 1, __ATOMIC_RELAXED)) {
        struct timespec ts = { 2, 0 };
        while (nanosleep(&ts, &ts) != 0)
            ;
    }
    return w;
}
