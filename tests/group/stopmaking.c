/*
 * stopmaking.c - preloaded before the guard (tests/group/holds.sh): stops
 * the process (SIGSTOP) when the guard makes a group's segment, inside its
 * posix_fallocate, as a debugger's breakpoint there or a cgroup freezer at
 * that moment would. Every other process of the group must still start.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int is_segment(int fd)
{
    char link[64], target[256];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, target, sizeof target - 1);
    if (n < 0)
        return 0;
    target[n] = 0;
    return strstr(target, "/dev/shm/gpumemguard-") && !strstr(target, "/dev/shm/gpumemguard-top-"); /* not the live view's page */
}

int posix_fallocate(int fd, off_t offset, off_t len)
{
    int (*real)(int, off_t, off_t) = (int (*)(int, off_t, off_t))dlsym(RTLD_NEXT, "posix_fallocate");
    static int stopped;
    if (is_segment(fd) && !__atomic_exchange_n(&stopped, 1, __ATOMIC_RELAXED)) /* once */
        raise(SIGSTOP);
    return real(fd, offset, len);
}
