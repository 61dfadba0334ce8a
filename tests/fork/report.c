/*
 * report.c - a parent and the child it forks each allocate and write their
 * exit report: the child's has only its own allocation.
 *
 *   fork_report   prints the child's pid
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include "../integration/testlib.h"

#include <sys/wait.h>
#include <unistd.h>

NOINLINE static void parent_site(void) { CUdeviceptr d; CHECK(cuMemAlloc_v2(&d, 1 << 20)); }
NOINLINE static void child_site(void) { CUdeviceptr d; CHECK(cuMemAlloc_v2(&d, 2 << 20)); }

static void forkreport(void)
{
    parent_site();
    pid_t pid = fork();
    if (pid == 0) {
        child_site();
        exit(0);
    }
    int st;
    waitpid(pid, &st, 0);
    printf("child %d\n", (int)pid);
}

int main(void)
{
    tl_setup(0);
    forkreport();
    fflush(stdout);
    return 0;
}
