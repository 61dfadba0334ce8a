/*
 * holdfast.c - a group member that something happens to: tests/group/holds.sh
 * run it under the guard (GPUMEM_GROUP) and check that the group's budget
 * holds whatever the member does or has done to it.
 *
 *   holdfast forkraw BYTES HOW [now]
 *                                   hold BYTES, then, once the guard's report thread is
 *                                   idle (or at once: now), make a child with HOW (_Fork:
 *                                   glibc's fork without handlers; clone: a raw clone system
 *                                   call) that returns from main (exit status 0, running the
 *                                   guard's exit path); print "child status N", "held", wait
 *   holdfast closeseg BYTES SHM     hold BYTES, then open /dev/shm/SHM, read its first bytes
 *                                   and close it (as a monitoring helper in the same process
 *                                   would); print "held", wait
 *   holdfast lockmem SHM            no guard needed: take the group's membership lock (an
 *                                   open-file-description lock on byte 0 of /dev/shm/SHM) and
 *                                   hold it; print "locked", wait (a stopped member holding it)
 *   holdfast poll BYTES             hold BYTES, print "polling", then ask cuMemGetInfo for
 *                                   ever (what a server's health check does)
 *   holdfast churn SEED             4 threads allocate and free 64-768 KiB for ever, refusals
 *                                   taken as they come (members of a kill storm)
 *   holdfast forkkeep BYTES         hold BYTES, fork() a child that never allocates and only
 *                                   waits (a data-loader worker); print "held child PID", wait
 *   holdfast overask BYTES          2 threads ask for BYTES (more than the budget) for ever,
 *                                   each refusal taken as it comes; print "asking"
 *   holdfast steps BYTES N          4 threads each allocate and free BYTES N times; print
 *                                   "refused R of 4N"
 *   holdfast turns BYTES N          the same on one thread: "refused R of N"
 *   holdfast pendfork BYTES         started while the segment is being made (pending): a
 *                                   child made by _Fork at once; the parent then holds BYTES
 *                                   (tried until it joins), and only then the child asks
 *                                   cuMemGetInfo and exits; print "held", wait
 *   holdfast ondev DEV BYTES        hold BYTES on device DEV (its primary context); print
 *                                   "held", wait
 *   holdfast vforksig               install a SIGUSR1 handler, vfork a child that sets
 *                                   SIGUSR1 to SIG_DFL and execs /bin/true, then raise SIGUSR1:
 *                                   "handler ran N" (1 when the child left the parent alone)
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../integration/testlib.h"

static CUcontext ctx;

static void hold(size_t bytes)
{
    CUdeviceptr p;
    if (bytes)
        TL_CHECK(cuMemAlloc_v2(&p, bytes));
}

static void forever(void)
{
    fflush(stdout);
    for (;;)
        pause();
}

/* ------------------------------------------------------------ forkraw */

/* Until the guard's report thread, started by the first allocation, is
 * idle: its status page is made once the symbolizer's warm-up is over, at
 * its first tick; a tenth of a second more for the rest of that tick. A
 * child made without fork handlers inherits whatever lock a thread held at
 * that moment; under a sanitizer, one of the allocator's is never let go
 * of, and the guard then writes that child no exit report (it says so). */
static void report_thread_idle(void)
{
    char page[128];
    snprintf(page, sizeof page, "/dev/shm/gpumemguard-top-%u-%d", (unsigned)geteuid(), (int)getpid());
    struct timespec ms10 = { 0, 10 * 1000000 }, ms100 = { 0, 100 * 1000000 };
    for (int i = 0; i < 1000 && access(page, F_OK) != 0; i++)
        nanosleep(&ms10, NULL);
    nanosleep(&ms100, NULL);
}

static int forkraw(size_t bytes, const char *how, int now)
{
    hold(bytes);
    if (!now)
        report_thread_idle();
    fflush(stdout);
    pid_t pid;
    if (!strcmp(how, "_Fork"))
        pid = _Fork();
    else if (!strcmp(how, "clone"))
        pid = (pid_t)syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
    else
        return 2;
    if (pid < 0) {
        perror(how);
        return 1;
    }
    if (pid == 0)
        return -1; /* the child returns from main */
    int st = 0;
    waitpid(pid, &st, 0);
    printf("child status %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
    printf("held\n");
    forever();
    return 0;
}

/* ----------------------------------------------------------- closeseg */

static void closeseg(size_t bytes, const char *shm)
{
    hold(bytes);
    char path[300];
    snprintf(path, sizeof path, "/dev/shm/%s", shm);
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        perror(path);
        exit(1);
    }
    char head[64];
    if (read(fd, head, sizeof head) < 0)
        perror("read");
    close(fd);
    printf("held\n");
    forever();
}

/* ------------------------------------------------------------ lockmem */

static void lockmem(const char *shm)
{
    char path[300];
    snprintf(path, sizeof path, "/dev/shm/%s", shm);
    int fd = open(path, O_RDWR);
    struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1, .l_pid = 0 };
    if (fd < 0 || fcntl(fd, F_OFD_SETLK, &fl) != 0) {
        perror(path);
        exit(1);
    }
    printf("locked\n");
    forever();
}

/* --------------------------------------------------------------- poll */

static void poll_info(size_t bytes)
{
    hold(bytes);
    printf("polling\n");
    fflush(stdout);
    size_t f, t;
    for (;;)
        TL_CHECK(cuMemGetInfo_v2(&f, &t));
}

/* -------------------------------------------------------------- churn */

static void *churner(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    TL_CHECK(cuCtxSetCurrent(ctx));
    enum { N = 8 };
    CUdeviceptr p[N] = { 0 };
    for (;;) {
        int k = rand_r(&seed) % N;
        if (p[k]) {
            TL_CHECK(cuMemFree_v2(p[k]));
            p[k] = 0;
            continue;
        }
        size_t n = 65536 + (size_t)(rand_r(&seed) % (704 * 1024));
        CUresult r = cuMemAlloc_v2(&p[k], n);
        if (r == CUDA_ERROR_OUT_OF_MEMORY)
            p[k] = 0;
        else if (r != CUDA_SUCCESS) {
            printf("FAIL alloc %d\n", (int)r);
            fflush(stdout);
            exit(1);
        }
    }
    return NULL;
}

static void churn(unsigned seed)
{
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, churner, (void *)(uintptr_t)(seed * 31u + (unsigned)i));
    printf("churning\n");
    forever();
}

/* ------------------------------------------- forkkeep, overask, steps */

static void forkkeep(size_t bytes)
{
    hold(bytes);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0)
        for (;;)
            pause();
    printf("held child %d\n", (int)pid);
    forever();
}

static size_t ask_bytes;
static int steps_n;
static uint64_t steps_refused;

static void *asker(void *arg)
{
    (void)arg;
    TL_CHECK(cuCtxSetCurrent(ctx));
    for (;;) {
        CUdeviceptr p;
        if (cuMemAlloc_v2(&p, ask_bytes) == CUDA_SUCCESS)
            TL_CHECK(cuMemFree_v2(p));
    }
    return NULL;
}

static void overask(size_t bytes)
{
    ask_bytes = bytes;
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, asker, NULL);
    printf("asking\n");
    forever();
}

static void *stepper(void *arg)
{
    (void)arg;
    TL_CHECK(cuCtxSetCurrent(ctx));
    for (int i = 0; i < steps_n; i++) {
        CUdeviceptr p;
        CUresult r = cuMemAlloc_v2(&p, ask_bytes);
        if (r == CUDA_ERROR_OUT_OF_MEMORY)
            __atomic_fetch_add(&steps_refused, 1, __ATOMIC_RELAXED);
        else if (r == CUDA_SUCCESS)
            TL_CHECK(cuMemFree_v2(p));
        else
            TL_CHECK(r);
    }
    return NULL;
}

static void steps(size_t bytes, int n, int threads)
{
    ask_bytes = bytes;
    steps_n = n;
    pthread_t t[4];
    if (threads == 1) { /* on this thread: members taking turns, one call at a time each */
        stepper(NULL);
        printf("refused %llu of %d\n", (unsigned long long)steps_refused, n);
        return;
    }
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, stepper, NULL);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    printf("refused %llu of %d\n", (unsigned long long)steps_refused, 4 * n);
}

/* ----------------------------------------------------------- pendfork */

static void pendfork(size_t bytes)
{
    int go[2];
    if (pipe(go) != 0) {
        perror("pipe");
        exit(1);
    }
    fflush(stdout);
    pid_t kid = _Fork();
    if (kid == 0) {
        char c;
        if (read(go[0], &c, 1) == 1) { /* the parent holds its bytes now */
            size_t f = 0, t = 0;
            cuMemGetInfo_v2(&f, &t);
        }
        _exit(0);
    }
    CUdeviceptr p;
    for (int i = 0; i < 1000 && cuMemAlloc_v2(&p, bytes) != CUDA_SUCCESS; i++) {
        struct timespec ms10 = { 0, 10 * 1000000 };
        nanosleep(&ms10, NULL);
    }
    if (write(go[1], "g", 1) != 1)
        perror("write");
    waitpid(kid, NULL, 0);
    printf("held\n");
    forever();
}

/* ----------------------------------------------------------- vforksig */

static volatile sig_atomic_t ran;
static void on_usr1(int sig) { (void)sig; ran++; }

static void vforksig(void)
{
    signal(SIGUSR1, on_usr1);
    pid_t pid = vfork();
    if (pid == 0) {
        signal(SIGUSR1, SIG_DFL); /* the child's own, before exec */
        execl("/bin/true", "true", (char *)NULL);
        _exit(127);
    }
    int st;
    waitpid(pid, &st, 0);
    raise(SIGUSR1);
    /* the handler runs on this thread before raise returns; the dump the
     * guard asks of its reporter may come later: wait a little for it */
    struct timespec ts = { 0, 100 * 1000000 };
    nanosleep(&ts, NULL);
    printf("handler ran %d\n", (int)ran);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: holdfast MODE ARGS...\n");
        return 2;
    }
    const char *m = argv[1];
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (!strcmp(m, "lockmem") && argc > 2) {
        lockmem(argv[2]);
        return 0;
    }
    ctx = tl_setup(0);
    if (!strcmp(m, "forkraw") && argc > 3) {
        int rc = forkraw(strtoull(argv[2], NULL, 0), argv[3], argc > 4 && !strcmp(argv[4], "now"));
        return rc < 0 ? 0 : rc; /* the child: back from main, exit status 0 */
    }
    if (!strcmp(m, "closeseg") && argc > 3)
        closeseg(strtoull(argv[2], NULL, 0), argv[3]);
    else if (!strcmp(m, "poll") && argc > 2)
        poll_info(strtoull(argv[2], NULL, 0));
    else if (!strcmp(m, "churn") && argc > 2)
        churn((unsigned)atoi(argv[2]));
    else if (!strcmp(m, "forkkeep") && argc > 2)
        forkkeep(strtoull(argv[2], NULL, 0));
    else if (!strcmp(m, "overask") && argc > 2)
        overask(strtoull(argv[2], NULL, 0));
    else if (!strcmp(m, "steps") && argc > 3)
        steps(strtoull(argv[2], NULL, 0), atoi(argv[3]), 4);
    else if (!strcmp(m, "turns") && argc > 3)
        steps(strtoull(argv[2], NULL, 0), atoi(argv[3]), 1);
    else if (!strcmp(m, "pendfork") && argc > 2)
        pendfork(strtoull(argv[2], NULL, 0));
    else if (!strcmp(m, "vforksig"))
        vforksig();
    else if (!strcmp(m, "ondev") && argc > 3) {
        CUdevice dev;
        CUcontext c;
        TL_CHECK(cuDeviceGet(&dev, atoi(argv[2])));
        TL_CHECK(cuDevicePrimaryCtxRetain(&c, dev));
        TL_CHECK(cuCtxSetCurrent(c));
        hold(strtoull(argv[3], NULL, 0));
        printf("held\n");
        forever();
    }
    else {
        fprintf(stderr, "holdfast: bad mode or arguments\n");
        return 2;
    }
    return 0;
}
