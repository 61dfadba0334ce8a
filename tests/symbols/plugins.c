/*
 * plugins PATH... - plug-ins (paths to one file, so each its own library,
 * all loaded at one address one after another), each loaded, asked to
 * allocate 4096 + i bytes for the i-th (plug, tests/symbols/plugalloc.c),
 * and closed; the last one stays loaded. The exit report names every plug-in's frames, each by its
 * own file (tests/symbols/unloaded.sh).
 */
#include "../integration/testlib.h"

#include <dlfcn.h>

int main(int argc, char **argv)
{
    int n = argc - 1;
    tl_setup(0);
    for (int i = 0; i < n; i++) {
        void *h = dlopen(argv[i + 1], RTLD_NOW);
        void (*plug)(size_t) = h ? (void (*)(size_t))dlsym(h, "plug") : NULL;
        if (!plug) {
            printf("plugins: %s\n", dlerror());
            return 1;
        }
        plug(4096 + (size_t)i);
        if (i < n - 1)
            dlclose(h);
    }
    printf("plugins done\n");
    return 0;
}
