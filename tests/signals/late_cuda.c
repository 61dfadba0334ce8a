/*
 * late_cuda.c - a program that installs its SIGUSR1 handler before it uses
 * CUDA at all, then dlopens libcuda.so.1 (not linked with it, as Python and
 * plugin hosts do), allocates, and sends itself the dump signal
 * (tests/signals/late_cuda.sh). The guard arms the signal at the first
 * contact with the driver and must chain to the handler installed before.
 *
 *   latecuda sigaction|signal
 */
#define _GNU_SOURCE
#include <cuda.h>

#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t calls;

static void handler(int sig)
{
    (void)sig;
    calls++;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    if (!strcmp(argv[1], "signal")) {
        if (signal(SIGUSR1, handler) == SIG_ERR)
            return 3;
    } else {
        struct sigaction sa, back;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = handler;
        sigemptyset(&sa.sa_mask);
        if (sigaction(SIGUSR1, &sa, NULL) != 0 || sigaction(SIGUSR1, NULL, &back) != 0 || back.sa_handler != handler)
            return 3;
    }
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return 4;
    CUresult (*init)(unsigned) = (CUresult (*)(unsigned))dlsym(h, "cuInit");
    CUresult (*get)(CUdevice *, int) = (CUresult (*)(CUdevice *, int))dlsym(h, "cuDeviceGet");
    CUresult (*retain)(CUcontext *, CUdevice) = (CUresult (*)(CUcontext *, CUdevice))dlsym(h, "cuDevicePrimaryCtxRetain");
    CUresult (*set)(CUcontext) = (CUresult (*)(CUcontext))dlsym(h, "cuCtxSetCurrent");
    CUresult (*alloc)(CUdeviceptr *, size_t) = (CUresult (*)(CUdeviceptr *, size_t))dlsym(h, "cuMemAlloc_v2");
    CUdevice d;
    CUcontext c;
    CUdeviceptr p;
    if (!init || !get || !retain || !set || !alloc || init(0) || get(&d, 0) || retain(&c, d) || set(c) ||
        alloc(&p, 1 << 20))
        return 5;
    raise(SIGUSR1);
    for (int i = 0; i < 200 && calls < 1; i++)
        usleep(10000);
    usleep(200000); /* the reporter writes the dump meanwhile */
    printf("latecuda: handler calls %d\n", (int)calls);
    return 0;
}
