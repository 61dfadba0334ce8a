/*
 * idle.c - a guarded program that waits: for `gpumemguard dump PID`.
 *
 *   idle READY DONE [SECONDS]
 *
 * Initialises the driver, allocates 1 MiB from idle_site (so the guard has
 * armed its dump signal and a report has something to show), creates READY,
 * then sleeps until the file DONE exists or SECONDS (default 10) pass.
 * Exits 0 when DONE appeared, 3 on time-out. With IDLE_BLOCK_DUMP set, the
 * dump signal (SIGUSR1) stays blocked (a program that waits for it with
 * sigwait): a dump asked of it is never written.
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define CHECK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { \
    fprintf(stderr, "%s:%d: %s = %d\n", __FILE__, __LINE__, #x, (int)r_); exit(1); } } while (0)

__attribute__((noinline)) static CUdeviceptr idle_site(void)
{
    CUdeviceptr p;
    CHECK(cuMemAlloc_v2(&p, 1 << 20));
    return p;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: idle READY DONE [SECONDS]\n");
        return 2;
    }
    int seconds = argc > 3 ? atoi(argv[3]) : 10;
    CUdevice d;
    CUcontext ctx;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&d, 0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, d));
    CHECK(cuCtxSetCurrent(ctx));
    CUdeviceptr p = idle_site();
    (void)p;
    if (getenv("IDLE_BLOCK_DUMP")) {
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGUSR1);
        sigprocmask(SIG_BLOCK, &set, NULL);
    }
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        perror(argv[1]);
        return 1;
    }
    close(fd);
    for (int i = 0; i < seconds * 50; i++) {
        if (access(argv[2], F_OK) == 0)
            return 0;
        struct timespec ts = { 0, 20 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    return 3;
}
