/*
 * toptest.c - guarded programs for `gpumemguard top` (tests/top.sh).
 *
 *   toptest hold READY DONE BIG SMALL REFUSE DEV1
 *       allocates BIG bytes from big_site and SMALL from small_site on
 *       device 0, tries REFUSE bytes from refuse_site (prints "refused" when
 *       the guard said no), DEV1 bytes on device 1 (each skipped when 0);
 *       creates READY, then waits until DONE exists (60 s at most).
 *   toptest grow READY DONE STEP MAX
 *       allocates STEP bytes from grow_site every 50 ms, MAX times at most,
 *       until DONE exists.
 *   toptest fork READY DONE PARENT CHILD
 *       allocates PARENT bytes, forks; the child allocates CHILD bytes; each
 *       creates READY.pid (its own pid), then waits for DONE.
 *   toptest exec READY SECONDS PROGRAM [ARGS...]
 *       allocates 1 MiB, waits SECONDS (its status page is written), creates
 *       READY and execs PROGRAM in the same process.
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHECK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { \
    fprintf(stderr, "%s:%d: %s = %d\n", __FILE__, __LINE__, #x, (int)r_); exit(1); } } while (0)

static void use_device(int n)
{
    CUdevice d;
    CUcontext ctx;
    CHECK(cuDeviceGet(&d, n));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, d));
    CHECK(cuCtxSetCurrent(ctx));
}

__attribute__((noinline)) static CUresult big_site(size_t n)
{
    CUdeviceptr p;
    return cuMemAlloc_v2(&p, n);
}

__attribute__((noinline)) static CUresult small_site(size_t n)
{
    CUdeviceptr p;
    return cuMemAlloc_v2(&p, n);
}

__attribute__((noinline)) static CUresult refuse_site(size_t n)
{
    CUdeviceptr p;
    return cuMemAlloc_v2(&p, n);
}

__attribute__((noinline)) static CUresult grow_site(size_t n)
{
    CUdeviceptr p;
    return cuMemAlloc_v2(&p, n);
}

__attribute__((noinline)) static CUresult dev1_site(size_t n)
{
    CUdeviceptr p;
    return cuMemAlloc_v2(&p, n);
}

static void touch(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        perror(path);
        exit(1);
    }
    close(fd);
}

static void nap_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

static int wait_done(const char *done)
{
    for (int i = 0; i < 60 * 50; i++) {
        if (access(done, F_OK) == 0)
            return 0;
        nap_ms(20);
    }
    return 3;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: toptest hold|grow|fork|exec ...\n");
        return 2;
    }
    const char *mode = argv[1];
    CHECK(cuInit(0));
    use_device(0);
    if (!strcmp(mode, "hold") && argc == 8) {
        size_t big = strtoull(argv[4], NULL, 0), small = strtoull(argv[5], NULL, 0);
        size_t refuse = strtoull(argv[6], NULL, 0), dev1 = strtoull(argv[7], NULL, 0);
        if (big)
            CHECK(big_site(big));
        if (small)
            CHECK(small_site(small));
        if (refuse) {
            CUresult r = refuse_site(refuse);
            printf("%s\n", r == CUDA_ERROR_OUT_OF_MEMORY ? "refused" : "allowed");
            fflush(stdout);
        }
        if (dev1) {
            use_device(1);
            CHECK(dev1_site(dev1));
        }
        touch(argv[2]);
        return wait_done(argv[3]);
    }
    if (!strcmp(mode, "grow") && argc == 6) {
        size_t step = strtoull(argv[4], NULL, 0);
        int max = atoi(argv[5]);
        touch(argv[2]);
        for (int i = 0; i < 180 * 20; i++) {
            if (access(argv[3], F_OK) == 0)
                return 0;
            if (i < max)
                CHECK(grow_site(step));
            nap_ms(50);
        }
        return 3;
    }
    if (!strcmp(mode, "fork") && argc == 6) {
        CHECK(big_site(strtoull(argv[4], NULL, 0)));
        pid_t child = fork();
        if (child < 0)
            return 1;
        if (child == 0)
            CHECK(small_site(strtoull(argv[5], NULL, 0)));
        char ready[4096];
        snprintf(ready, sizeof ready, "%s.%d", argv[2], (int)getpid());
        touch(ready);
        int rc = wait_done(argv[3]);
        if (child > 0) {
            int st;
            waitpid(child, &st, 0);
        }
        return rc;
    }
    if (!strcmp(mode, "exec") && argc >= 5) {
        CHECK(big_site(1 << 20));
        nap_ms(atol(argv[3]) * 1000);
        touch(argv[2]);
        execvp(argv[4], argv + 4);
        perror(argv[4]);
        return 127;
    }
    fprintf(stderr, "toptest: bad arguments for %s\n", mode);
    return 2;
}
