/*
 * fd.c - see fd.h.
 */
#include "base/fd.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

int gmg_fd_raise(int fd, const char *path)
{
    struct stat got, want;
    if (fd < 0 || fd >= GMG_FD_FLOOR || !path || stat(path, &want) != 0)
        return fd;
    int high = fcntl(fd, F_DUPFD_CLOEXEC, GMG_FD_FLOOR);
    if (high < 0)
        return errno == EBADF ? -1 : fd; /* closed under us; or the limit */
    if (fstat(high, &got) != 0 || got.st_dev != want.st_dev || got.st_ino != want.st_ino) {
        close(high); /* our copy of the program's descriptor */
        return -1;
    }
    close(fd);
    return high;
}

int gmg_open_high(const char *path, int flags, mode_t mode)
{
    int fd = open(path, flags, mode);
    if (fd < 0)
        return fd;
    int mine = gmg_fd_raise(fd, path);
    if (mine >= 0)
        return mine;
    /* the number was lost: the file is there (made by this open, if O_CREAT) */
    return gmg_fd_raise(open(path, flags & ~(O_CREAT | O_EXCL | O_TRUNC), mode), path);
}

long gmg_read_small(const char *path, char *buf, size_t cap)
{
    if (!buf || cap < 1)
        return -1;
    int fd = gmg_open_high(path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, cap - 1);
    close(fd);
    if (n < 0)
        return -1;
    buf[n] = 0;
    return (long)n;
}
