/*
 * no_handlers.c - children made without fork handlers (glibc's _Fork(), a
 * raw clone): no pthread_atfork handler runs, so the guard's child handler
 * does not, and the child has no report thread.
 *
 *   no_handlers nohandler_fork HOW  a refusal in the parent, then a child (HOW:
 *                                   _Fork or clone) refused at two new call
 *                                   sites, timed; it exits (its exit report);
 *                                   then the parent refused at a new site
 *   no_handlers nohandler_dump HOW  an allocation (the guard armed), then a
 *                                   child that allocates, is sent the dump
 *                                   signal and exits; its pid on stdout
 *   no_handlers vfork_exit          1 MiB left live, then a vfork child that
 *                                   calls exit(4), not _exit; its pid on stdout
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include "../integration/testlib.h"

#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* sizes that differ: no two of these can be folded into one function */
NOINLINE static CUresult refused_in_parent(void) { CUdeviceptr d; return cuMemAlloc_v2(&d, 1ull << 40); }
NOINLINE static CUresult refused_in_child(void) { CUdeviceptr d; return cuMemAlloc_v2(&d, 2ull << 40); }
NOINLINE static CUresult refused_in_child_again(void) { CUdeviceptr d; return cuMemAlloc_v2(&d, 3ull << 40); }
NOINLINE static CUresult refused_after_child(void) { CUdeviceptr d; return cuMemAlloc_v2(&d, 4ull << 40); }

/* fork(2) as it is without glibc's fork(): no pthread_atfork handler runs,
 * so the guard's child handler does not, and the child has no report
 * thread. _Fork() is glibc's own (2.34); a raw clone is what a runtime
 * that makes processes itself does. */
static pid_t fork_without_handlers(const char *how)
{
    if (!strcmp(how, "_Fork"))
        return _Fork();
    return (pid_t)syscall(SYS_clone, SIGCHLD, NULL, NULL, NULL, NULL);
}

static void nohandler_fork(const char *how)
{
    /* the parent's report thread writes the whole message after the call
     * came back: it must be done, idle again, before the fork. A child made
     * without fork handlers inherits whatever lock a thread held at that
     * moment (the allocator's, while it names the frames), and its own exit
     * would wait for it for ever: that hazard is _Fork's, left to its
     * caller, as in nohandler_dump below. At the fork the report thread
     * holds at most its own locks (the child takes them over fresh). */
    tl_timed_refusal("parent", refused_in_parent, 10000);
    usleep(500000);
    pid_t pid = fork_without_handlers(how);
    if (pid == 0) {
        /* each would wait 2 s for a thread that is not there */
        tl_timed_refusal("child", refused_in_child, 1000);
        tl_timed_refusal("child again", refused_in_child_again, 1000);
        exit(0); /* exit: its exit report, and the rest of its messages */
    }
    int st = -1;
    if (pid < 0 || waitpid(pid, &st, 0) != pid)
        perror("nohandler_fork");
    tl_timed_refusal("parent after", refused_after_child, 10000);
    printf("nohandler_fork: child %s\n", WIFEXITED(st) && WEXITSTATUS(st) == 0 ? "exited 0" : "failed");
}

/* A dump signal in a child made without fork handlers, before anything
 * else of the guard's ran there: written at its exit (before the exit
 * report), as the signal asked. */
static void nohandler_dump(const char *how)
{
    CUdeviceptr p;
    CHECK(cuMemAlloc_v2(&p, 4096));
    /* The report thread this allocation started must be idle (waiting for
     * work) before the fork: a child made without fork handlers inherits
     * whatever lock a thread held at that moment (the allocator's, under
     * ASan its own too), and its exit report would wait for it for ever.
     * That hazard is _Fork's, left to its caller; the test avoids it (the
     * run has stacks off: no symbolizer warm-up on that thread). */
    usleep(500000);
    pid_t pid = fork_without_handlers(how);
    if (pid == 0) {
        CUdeviceptr q;
        CHECK(cuMemAlloc_v2(&q, 8192));
        kill(getpid(), SIGUSR1);
        exit(0);
    }
    int st = -1;
    if (pid < 0 || waitpid(pid, &st, 0) != pid)
        perror("nohandler_dump");
    printf("nohandler_dump: child %d %s\n", (int)pid, WIFEXITED(st) && WEXITSTATUS(st) == 0 ? "exited 0" : "failed");
}

/* A vfork child that calls exit(): it runs the parent's exit handlers in
 * the parent's memory (undefined, and done). */
static void vfork_exit(void)
{
    CUdeviceptr p;
    CHECK(cuMemAlloc_v2(&p, 1 << 20));
    fflush(stdout);
    pid_t pid = vfork();
    if (pid == 0)
        exit(4);
    int st = -1;
    if (pid < 0 || waitpid(pid, &st, 0) != pid)
        perror("vfork_exit");
    printf("vfork_exit: child %d status %d\n", (int)pid, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: no_handlers nohandler_fork|nohandler_dump HOW\n");
        return 2;
    }
    const char *m = argv[1];
    tl_setup(0);
    if (!strcmp(m, "nohandler_fork") && argc > 2) nohandler_fork(argv[2]);
    else if (!strcmp(m, "nohandler_dump") && argc > 2) nohandler_dump(argv[2]);
    else if (!strcmp(m, "vfork_exit")) vfork_exit();
    else {
        fprintf(stderr, "unknown mode %s\n", m);
        return 2;
    }
    fflush(stdout);
    return 0;
}
