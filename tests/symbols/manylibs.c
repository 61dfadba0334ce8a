/*
 * manylibs.c - leaks from many libraries, one each: the report names a frame
 * in every one, so its symbolizer keeps a descriptor for each of their
 * files (more than its first 16 slots).
 *
 *   manylibs DIR N   loads DIR/libgmgmany0.so .. libgmgmany(N-1).so
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include "../integration/testlib.h"

#include <dlfcn.h>

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    tl_setup(0);
    int n = atoi(argv[2]);
    for (int i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/libgmgmany%d.so", argv[1], i);
        void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        void (*leak)(void) = h ? (void (*)(void))dlsym(h, "many_leak") : NULL;
        if (!leak) {
            fprintf(stderr, "%s: %s\n", path, dlerror());
            return 1;
        }
        leak();
    }
    printf("manylibs: %d leaks\n", n);
    return 0;
}
