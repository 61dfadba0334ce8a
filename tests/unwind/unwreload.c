/*
 * unwreload.c DIR WAIT - a plug-in unloaded behind the guard's back, and
 * another mapped where it was (tests/unwind/unwind.sh): the loader
 * (DIR/libunwrelload.so, opened with RTLD_DEEPBIND, so that its dlclose is
 * the C library's) runs plug-in A (a frame-pointer frame at plug+6), which
 * allocates 2001 bytes in cbA, closes it, and after WAIT seconds runs
 * plug-in B, mapped at the same address, whose frame at plug+6 is not a
 * frame-pointer one, allocating 2002 bytes in cbB. B's stack must be its
 * own: cbB, plug, loader_run, main. A's range is held (an inaccessible
 * mapping) while the program waits, so that nothing else takes it before B.
 */
#define _GNU_SOURCE
#include "../integration/testlib.h"

#include <dlfcn.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

__attribute__((noinline)) static void cbA(void)
{
    CUdeviceptr p;
    TL_CHECK(cuMemAlloc(&p, 2001));
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void cbB(void)
{
    CUdeviceptr p;
    TL_CHECK(cuMemAlloc(&p, 2002));
    __asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    tl_setup(0);
    char path[4096];
    snprintf(path, sizeof path, "%s/libunwrelload.so", argv[1]);
    void *l = dlopen(path, RTLD_NOW | RTLD_DEEPBIND);
    if (!l) {
        fprintf(stderr, "%s\n", dlerror());
        return 1;
    }
    void (*run)(const char *, void (*)(void)) = (void (*)(const char *, void (*)(void)))dlsym(l, "loader_run");
    snprintf(path, sizeof path, "%s/libunwrelA.so", argv[1]);
    run(path, cbA);
    uintptr_t *base = dlsym(l, "loader_base"), *len = dlsym(l, "loader_len");
    void *hold = base && len && *len ? mmap((void *)*base, *len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0)
                                     : MAP_FAILED;
    usleep((useconds_t)(atof(argv[2]) * 1e6));
    if (hold != MAP_FAILED)
        munmap(hold, *len);
    snprintf(path, sizeof path, "%s/libunwrelB.so", argv[1]);
    run(path, cbB);
    return 0;
}
