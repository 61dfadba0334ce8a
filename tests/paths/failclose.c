/*
 * failclose.c - a preloaded close() that fails with EIO, after really
 * closing, for files under a directory named "closefail" whose name has
 * ".gpumem-report." in it: a report's temporary file on a file system that reports a
 * write error only at close (NFS, a quota), for tests/paths/unwritable.sh.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int close(int fd)
{
    static int (*real)(int);
    if (!real)
        real = (int (*)(int))dlsym(RTLD_NEXT, "close");
    char link[64], path[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    int r = real(fd);
    if (r == 0 && n > 0) {
        path[n] = 0;
        if (strstr(path, "/closefail/") && strstr(path, "/.gpumem-report.")) {
            errno = EIO;
            return -1;
        }
    }
    return r;
}
