/*
 * slowwrite.c - a preloaded write() that, once it has written a refusal's
 * whole message (a buffer that has "further refusals from this call site"
 * in it), returns only 3 s later: the report thread held between writing
 * the message and saying it is written, past the refused call's wait (a
 * loaded machine does the same, for less long). For
 * tests/refusals/timing.sh: the refused call must not then write the
 * message's first line after it. SLOWWRITE_SECONDS: another hold than 3 s
 * (tests/sites/sites.sh); SLOWWRITE_MATCH: another text to hold after
 * (a signal dump's "\"trigger\":\"signal\""); SLOWWRITE_MARK: a file made
 * when the hold begins.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

ssize_t write(int fd, const void *buf, size_t n)
{
    static ssize_t (*real)(int, const void *, size_t);
    if (!real)
        real = (ssize_t(*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
    const char *match = getenv("SLOWWRITE_MATCH");
    if (!match || !*match)
        match = "further refusals from this call site";
    ssize_t w = real(fd, buf, n);
    if (w > 0 && memmem(buf, (size_t)w, match, strlen(match))) {
        const char *mark = getenv("SLOWWRITE_MARK");
        if (mark && *mark)
            close(open(mark, O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
        const char *e = getenv("SLOWWRITE_SECONDS");
        struct timespec ts = { e && *e ? atoi(e) : 3, 0 };
        while (nanosleep(&ts, &ts) != 0)
            ;
    }
    return w;
}
