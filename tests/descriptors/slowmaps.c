/* slowmaps.c - a preloaded shim for tests/descriptors/reused.sh: a thread
 * other than the main one (the guard's reporter) is held 200 ms between
 * opening a /proc/PID/maps file and its first read, as a loaded machine
 * may deschedule it there. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

ssize_t __getdelim(char **lp, size_t *n, int delim, FILE *f)
{
    static ssize_t (*real)(char **, size_t *, int, FILE *);
    if (!real)
        real = (ssize_t (*)(char **, size_t *, int, FILE *))dlsym(RTLD_NEXT, "__getdelim");
    char link[64], target[256];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fileno(f));
    ssize_t k = readlink(link, target, sizeof target - 1);
    if (k > 0) {
        target[k] = 0;
        if (strstr(target, "/maps") && ftello(f) == 0 && getpid() != gettid()) {
            struct timespec ts = { 0, 200000000 };
            nanosleep(&ts, NULL);
        }
    }
    return real(lp, n, delim, f);
}
