/*
 * unloaded.c - a leak from a library (tests/integration/module.c) then
 * unloaded with dlclose, another library loaded after it (maybe where the
 * first was) that leaks too.
 *
 *   unloaded LIB1 LIB2 [NEW]
 *
 * With NEW, the file NEW is renamed over LIB1 once LIB1 is unloaded (a
 * plugin rebuilt and loaded again from its path: LIB2 names LIB1's path).
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include "../integration/testlib.h"

static void dlclose_case(const char *lib1, const char *lib2, const char *replace)
{
    void *h = dlopen(lib1, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "%s\n", dlerror());
        exit(1);
    }
    void (*leak)(void) = (void (*)(void))dlsym(h, "module_leak");
    leak();
    dlclose(h);
    if (replace && rename(replace, lib1) != 0) {
        perror("rename");
        exit(1);
    }
    void *h2 = dlopen(lib2, RTLD_NOW | RTLD_LOCAL);
    if (!h2) {
        fprintf(stderr, "%s\n", dlerror());
        exit(1);
    }
    void (*other)(void) = (void (*)(void))dlsym(h2, "other_function");
    other(); /* a leak of the library still loaded, maybe where the first was */
    printf("loaded %s after unloading %s\n", lib2, lib1);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: unloaded LIB1 LIB2 [NEW]\n");
        return 2;
    }
    tl_setup(0);
    dlclose_case(argv[1], argv[2], argc > 3 ? argv[3] : NULL);
    fflush(stdout);
    return 0;
}
