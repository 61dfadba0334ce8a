/*
 * unload_marks.c - one call site refused on device 0 and then on device 1,
 * a library loaded and unloaded in between (a stack captured after an
 * unload is another stack id, even at the same addresses): one message,
 * and a mark on each device's timeline.
 *
 *   unload_marks LIB   LIB: a shared object to load and unload
 *   unload_marks fork  the site refused on device 0, then by a child
 *                      forked after it, whose timeline starts empty
 *   unload_marks order LIB
 *                      with the report thread held after its first message
 *                      (tests/refusals/slowwrite.c): the site refused for
 *                      8 MiB on device 0 (its message), for 9 MiB on
 *                      device 1 (a mark, the site known by this stack),
 *                      then after an unload for 10 MiB on device 1 again
 *                      (another stack id: queued to be explained); device
 *                      1's mark is the first refusal there, the 9 MiB
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include "../integration/testlib.h"

#include <sys/wait.h>
#include <unistd.h>

static NOINLINE CUresult ask(size_t bytes)
{
    CUdeviceptr d;
    CUresult r = cuMemAlloc_v2(&d, bytes);
    __asm__ volatile("" ::: "memory"); /* not a tail call: the frame stays */
    return r;
}

/* Each step: make the device current, load and unload LIB if asked, then
 * ask at the one call site. */
struct step {
    int dev, unload;
    unsigned mib;
};

static int run(const struct step *steps, int n, const char *lib)
{
    for (int i = 0; i < n; i++) {
        tl_setup(steps[i].dev);
        if (steps[i].unload) {
            void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
            if (!h || dlclose(h) != 0) {
                printf("FAIL %s\n", dlerror());
                return 1;
            }
        }
        printf("device %d, %u MiB: %d\n", steps[i].dev, steps[i].mib, (int)ask((size_t)steps[i].mib << 20));
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: unload_marks LIB | fork | order LIB\n");
        return 2;
    }
    if (!strcmp(argv[1], "order") && argc > 2) {
        static const struct step order[] = { { 0, 0, 8 }, { 1, 0, 9 }, { 1, 1, 10 } };
        return run(order, 3, argv[2]);
    }
    if (!strcmp(argv[1], "fork")) {
        tl_setup(0);
        for (int i = 0; i < 2; i++) { /* one call site: the parent's refusal, then the child's */
            printf("%s: %d\n", i ? "child" : "parent", (int)ask(8u << 20));
            fflush(stdout);
            if (i == 0) {
                pid_t p = fork();
                if (p < 0)
                    return 1;
                if (p > 0) {
                    int st;
                    waitpid(p, &st, 0);
                    return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
                }
                printf("pid %d\n", (int)getpid());
            }
        }
        return 0;
    }
    static const struct step two[] = { { 0, 0, 8 }, { 1, 1, 8 } };
    return run(two, 2, argv[1]);
}
