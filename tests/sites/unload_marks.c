/*
 * unload_marks.c - one call site refused on device 0 and then on device 1,
 * a library loaded and unloaded in between (a stack captured after an
 * unload is another stack id, even at the same addresses): one message,
 * and a mark on each device's timeline.
 *
 *   unload_marks LIB   LIB: a shared object to load and unload
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include "../integration/testlib.h"

static NOINLINE CUresult ask(size_t bytes)
{
    CUdeviceptr d;
    CUresult r = cuMemAlloc_v2(&d, bytes);
    __asm__ volatile("" ::: "memory"); /* not a tail call: the frame stays */
    return r;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: unload_marks LIB\n");
        return 2;
    }
    for (int dev = 0; dev < 2; dev++) {
        tl_setup(dev);
        printf("device %d: %d\n", dev, (int)ask(8u << 20)); /* one call site, refused */
        if (dev == 0) {
            void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
            if (!h || dlclose(h) != 0) {
                printf("FAIL %s\n", dlerror());
                return 1;
            }
        }
    }
    return 0;
}
