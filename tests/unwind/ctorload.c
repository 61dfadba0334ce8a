/*
 * ctorload.c - dlopens tests/unwind/ctorthr.c's library, whose constructor
 * runs a thread that allocates through host_alloc below (the process's
 * first allocation, while this thread holds the loader's lock), then
 * allocates once more itself. Prints "ctorload done".
 *
 *   ctorload LIBDIR
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include "../integration/testlib.h"

#include <dlfcn.h>

__attribute__((noinline)) void host_alloc(size_t n)
{
    CUdeviceptr p;
    CHECK(cuCtxSetCurrent(tl_ctx));
    CHECK(cuMemAlloc_v2(&p, n));
    __asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    tl_setup(0);
    char path[4096];
    snprintf(path, sizeof path, "%s/libctorthr.so", argv[1]);
    void *h = dlopen(path, RTLD_NOW);
    if (!h) {
        fprintf(stderr, "ctorload: %s\n", dlerror());
        return 1;
    }
    host_alloc(6002);
    printf("ctorload done\n");
    fflush(stdout);
    return 0;
}
