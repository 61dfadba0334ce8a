/*
 * debugfile.c - frames of a program whose DWARF is in a separate file
 * (.gnu_debuglink), and of one with none: leaks 1 MiB from debugfile_site,
 * waits for the report thread to name frames (its warm-up), then prints
 * how many of its mappings are of libdebuginfod (the guard never loads it:
 * tests/symbols/debugfile.sh).
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

__attribute__((noinline)) static CUdeviceptr debugfile_site(void)
{
    CUdeviceptr p = 0;
    cuMemAlloc(&p, 1 << 20);
    return p;
}

int main(void)
{
    CUdevice d;
    CUcontext c;
    if (cuInit(0) || cuDeviceGet(&d, 0) || cuDevicePrimaryCtxRetain(&c, d) || cuCtxSetCurrent(c))
        return 1;
    debugfile_site();
    usleep(500000);
    FILE *f = fopen("/proc/self/maps", "r");
    char line[1024];
    int n = 0;
    while (f && fgets(line, sizeof line, f))
        n += strstr(line, "libdebuginfod") != NULL;
    printf("libdebuginfod mappings: %d\n", n);
    return 0;
}
