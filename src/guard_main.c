/*
 * guard_main.c - running libgpumemguard.so itself, as libc.so.6 can be run:
 * it prints its version and how to use it, then exits 0.
 *
 * The Makefile links the library with -Wl,-e,gmg_selfrun, and .interp below
 * names the dynamic loader, so the kernel starts it like a PIE: the loader
 * maps it and its dependencies, then jumps to gmg_selfrun. Nothing here runs
 * when the library is preloaded or dlopen'd (the entry point and .interp are
 * ignored then). gmg_selfrun is entered with no return address and must not
 * return: it writes with write(2) and leaves with _exit.
 */
#define _GNU_SOURCE
#include "../include/gpumemguard.h"

#include <unistd.h>

#if defined(__x86_64__)
#define GMG_INTERP "/lib64/ld-linux-x86-64.so.2"
#elif defined(__aarch64__)
#define GMG_INTERP "/lib/ld-linux-aarch64.so.1"
#elif defined(__i386__)
#define GMG_INTERP "/lib/ld-linux.so.2"
#elif defined(__powerpc64__) && defined(__LITTLE_ENDIAN__)
#define GMG_INTERP "/lib64/ld64.so.2"
#endif

#ifdef GMG_INTERP
__attribute__((used, section(".interp"))) const char gmg_interp[] = GMG_INTERP;
#endif

static void put(int fd, const char *s, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, s, n);
        if (w <= 0)
            return;
        s += w;
        n -= (size_t)w;
    }
}

/* x86: the kernel enters with %rsp 16-byte aligned and no return address,
 * not as a call would; realign for the ABI. */
#if defined(__x86_64__) || defined(__i386__)
__attribute__((force_align_arg_pointer))
#endif
__attribute__((noreturn, used)) void gmg_selfrun(void);

void gmg_selfrun(void)
{
    static const char text[] =
        "libgpumemguard.so " GPUMEMGUARD_VERSION " - GPU memory guard for CUDA programs\n"
        "usage: LD_PRELOAD=/path/to/libgpumemguard.so PROGRAM, or: gpumemguard [OPTIONS] -- PROGRAM "
        "(see gpumemguard --help)\n";
    put(1, text, sizeof text - 1);
    _exit(0);
}
