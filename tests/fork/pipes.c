/*
 * pipes.c - the pipes open in a forked child, against its parent's: the
 * child holds no more than its parent.
 *
 *   fork_pipes
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include "../integration/testlib.h"

#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

static int pipes_open(void)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    int n = 0;
    char link[300], target[256];
    while (d && (e = readdir(d)) != NULL) {
        snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
        ssize_t k = readlink(link, target, sizeof target - 1);
        if (k > 5 && !strncmp(target, "pipe:", 5))
            n++;
    }
    if (d)
        closedir(d);
    return n;
}

static void forkfds(void)
{
    CUdeviceptr p;
    CHECK(cuMemAlloc_v2(&p, 1 << 20));
    int parent = pipes_open();
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        printf("forkfds: parent %d child %d\n", parent, pipes_open());
        fflush(stdout);
        _exit(0);
    }
    int st;
    waitpid(pid, &st, 0);
}

int main(void)
{
    tl_setup(0);
    forkfds();
    fflush(stdout);
    return 0;
}
