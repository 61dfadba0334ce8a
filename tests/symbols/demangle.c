/*
 * demangle.c - a leak from a C++ plugin (tests/symbols/cxxplugin.cc) that
 * this C host loads RTLD_LOCAL, as Python loads extensions.
 *
 *   demangle LIB
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include "../integration/testlib.h"

/* a C host loading a C++ plugin privately (RTLD_LOCAL), as Python does */
static void cxx(const char *lib)
{
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "%s\n", dlerror());
        exit(1);
    }
    void (*run)(void) = (void (*)(void))dlsym(h, "plugin_run");
    run();
    printf("global __cxa_demangle: %s\n", dlsym(RTLD_DEFAULT, "__cxa_demangle") ? "yes" : "no");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: demangle LIB\n");
        return 2;
    }
    tl_setup(0);
    cxx(argv[1]);
    fflush(stdout);
    return 0;
}
