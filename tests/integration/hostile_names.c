/*
 * hostile_names.c - functions whose names are markup: a symbol named
 * `</script><script>...` (an assembler name, as any language's compiler
 * may emit), C++ names that demangle to quotes and angle brackets
 * (`operator"" _x(char const*)`, `void leak<char>()`), each leaking one
 * allocation. The HTML page must show them as text and run none of them.
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <stdio.h>

#define NOINLINE __attribute__((noinline))

static CUdeviceptr alloc(size_t n)
{
    CUdeviceptr p = 0;
    cuMemAlloc_v2(&p, n);
    return p;
}

NOINLINE CUdeviceptr script_name(size_t n)
    __asm__("\"</script><script>document.title='PWNED-C';document.body.append('PWNED-C')</script>\"");
NOINLINE CUdeviceptr script_name(size_t n)
{
    CUdeviceptr p = alloc(n);
    __asm__ volatile("" ::: "memory"); /* a call, not a tail call: this frame stays */
    return p;
}

NOINLINE CUdeviceptr _Zli2_xPKc(const char *s); /* operator"" _x(char const*) */
NOINLINE CUdeviceptr _Zli2_xPKc(const char *s)
{
    CUdeviceptr p = alloc((size_t)s[0] << 16);
    __asm__ volatile("" ::: "memory");
    return p;
}

NOINLINE CUdeviceptr _Z4leakIcEvv(void); /* void leak<char>() */
NOINLINE CUdeviceptr _Z4leakIcEvv(void)
{
    CUdeviceptr p = alloc(3 << 20);
    __asm__ volatile("" ::: "memory");
    return p;
}

int main(void)
{
    CUcontext ctx;
    if (cuInit(0) || cuDevicePrimaryCtxRetain(&ctx, 0) || cuCtxSetCurrent(ctx))
        return 1;
    CUdeviceptr a = script_name(1 << 20);
    CUdeviceptr b = _Zli2_xPKc(" "); /* 32 << 16: 2 MiB */
    CUdeviceptr c = _Z4leakIcEvv();
    printf("leaked %d\n", (a != 0) + (b != 0) + (c != 0));
    return 0;
}
