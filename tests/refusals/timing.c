/*
 * timing.c - when a refused call comes back, and its message is written:
 * before the call returns, or after a bounded wait when the report thread
 * cannot name frames yet.
 *
 *   refusal_timing ctor_refuse LIB  LIB loaded, whose constructor is refused an
 *                                   allocation (tests/refusals/ctorrefuse.c), with
 *                                   the loader's lock held
 *   refusal_timing refuse_timed     one refusal, timed, its return said on stderr
 *                                   (a write() preloaded beside the guard,
 *                                   tests/refusals/slowwrite.c, slows the message down)
 *   refusal_timing refuse_abort     one allocation refused (GPUMEM_LIMIT=1M), a line
 *                                   on stderr as soon as the call returns, then
 *                                   abort() (as CUDA_CHECK does)
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include "../integration/testlib.h"

#include <unistd.h>

static void ctor_refuse(const char *lib)
{
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    void *h = dlopen(lib, RTLD_NOW);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    usleep(500000); /* the whole message, once the loader's lock is free */
    printf("ctor_refuse: %s in %s 10 s\n", h ? "loaded" : "not loaded",
           t1.tv_sec - t0.tv_sec < 10 ? "under" : "over");
}

NOINLINE static CUresult refused_once(void) { CUdeviceptr d; return cuMemAlloc_v2(&d, 5ull << 40); }

static void refuse_timed(void)
{
    tl_timed_refusal("refuse_timed", refused_once, 10000);
}

NOINLINE static CUresult refused_then_abort(void) { CUdeviceptr p; return cuMemAlloc_v2(&p, 2 << 20); }

static void refuse_abort(void)
{
    CUresult r = refused_then_abort();
    dprintf(2, "refuse_abort: the refused call returned %d\n", (int)r);
    abort();
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: refusal_timing ctor_refuse LIB|refuse_timed|refuse_abort\n");
        return 2;
    }
    const char *m = argv[1];
    tl_setup(0);
    if (!strcmp(m, "ctor_refuse") && argc > 2) ctor_refuse(argv[2]);
    else if (!strcmp(m, "refuse_timed")) refuse_timed();
    else if (!strcmp(m, "refuse_abort")) refuse_abort();
    else {
        fprintf(stderr, "unknown mode %s\n", m);
        return 2;
    }
    fflush(stdout);
    return 0;
}
