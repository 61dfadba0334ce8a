/*
 * mangled.c - C++ names in a process with no C++ runtime (the way an
 * nvcc- or g++-built program that calls nothing of libstdc++ runs). C code
 * may name its functions as a C++ compiler would mangle them, so this C
 * program, linked without libstdc++, leaks from
 *
 *   model::load_weights(unsigned long)  _ZN5model12load_weightsEm  1 MiB   (dladdr names it)
 *   kv::Cache::grow(int)                _ZN2kv5Cache4growEi        64 KiB
 *   hidden(unsigned long)               _ZL6hiddenm                (static: only DWARF names it)
 *
 * and the guard must show the demangled names. Under the guard it then asks
 * for a report (gpumemguard_dump, looked up: the program runs without the
 * guard too) and prints whether any C++ runtime is mapped afterwards: the
 * guard must not have loaded one to demangle.
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))

NOINLINE CUdeviceptr _ZN5model12load_weightsEm(unsigned long n);
NOINLINE CUdeviceptr _ZN5model12load_weightsEm(unsigned long n)
{
    CUdeviceptr p = 0;
    cuMemAlloc_v2(&p, n);
    __asm__ volatile("" ::: "memory"); /* a call, not a tail call: this frame stays */
    return p;
}

NOINLINE CUdeviceptr _ZN2kv5Cache4growEi(int n);
NOINLINE CUdeviceptr _ZN2kv5Cache4growEi(int n)
{
    CUdeviceptr p = 0;
    cuMemAlloc_v2(&p, (size_t)n * 1024);
    __asm__ volatile("" ::: "memory");
    return p;
}

static NOINLINE CUdeviceptr _ZL6hiddenm(unsigned long n)
{
    CUdeviceptr p = _ZN5model12load_weightsEm(n);
    __asm__ volatile("" ::: "memory");
    return p;
}

/* prints the first C++ runtime among the process's mappings, or "none" */
static void print_cxx_runtime(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[4096];
    int found = 0;
    while (f && !found && fgets(line, sizeof line, f))
        if (strstr(line, "libstdc++") || strstr(line, "libc++")) {
            line[strcspn(line, "\n")] = 0;
            printf("after the report, C++ runtime mapped: %s\n", strrchr(line, ' ') ? strrchr(line, ' ') + 1 : line);
            found = 1;
        }
    if (!found)
        printf("after the report, C++ runtime mapped: %s\n", f ? "none" : "(no /proc/self/maps)");
    if (f)
        fclose(f);
}

int main(void)
{
    CUdevice d;
    CUcontext c;
    if (cuInit(0) || cuDeviceGet(&d, 0) || cuDevicePrimaryCtxRetain(&c, d) || cuCtxSetCurrent(c)) {
        fprintf(stderr, "mangled: no device\n");
        return 1;
    }
    _ZL6hiddenm(1 << 20);
    _ZN2kv5Cache4growEi(64);
    int (*dump)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "gpumemguard_dump");
    if (dump)
        dump();
    print_cxx_runtime();
    printf("global __cxa_demangle: %s\n", dlsym(RTLD_DEFAULT, "__cxa_demangle") ? "yes" : "no");
    return 0;
}
