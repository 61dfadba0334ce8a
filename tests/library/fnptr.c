/*
 * fnptr.c - a program built without PIC that takes cuMemAlloc's address
 * (a dispatch table): its PLT entry is then the address every object finds
 * for the name first. tests/library/scope.sh: the guard must still guard.
 * Prints "alloc R" for a cuMemAlloc of 2 MiB.
 */
#define __CUDA_API_VERSION_INTERNAL 1
#include "../integration/testlib.h"

typedef CUresult (*alloc_fn)(CUdeviceptr *, size_t);
__attribute__((noinline)) static alloc_fn pick(void) { return cuMemAlloc_v2; }

int main(void)
{
    CUdeviceptr p;
    tl_setup(0);
    printf("alloc %d\n", (int)pick()(&p, 2 << 20));
    return 0;
}
