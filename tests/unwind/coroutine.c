/*
 * coroutine.c MODE - allocations whose stacks the fast walker gives up,
 * for libunwind's walk on the guard's walk stack (tests/unwind/unwind.sh):
 *   heap SIZE   a makecontext coroutine on a SIZE-byte stack from malloc
 *               (no bounds the guard can know; memory of the heap's below)
 *   mapped SIZE the same on a mapping with an inaccessible page below
 *   depth       a coroutine on a 64 KiB stack from malloc, filled with a
 *               pattern: prints "stack used N", the bytes of it that the
 *               allocation took (the program built with -z now: no lazy
 *               binding of its own, which saves every vector register, in
 *               the figure)
 *   nounwind    main -> caller_two -> caller_one -> nounw_outer ->
 *               nounw_inner (both in libnounwind.so, built without unwind
 *               tables) -> do_alloc: the stack must end at nounw_inner,
 *               never skip to caller_two by a frame-pointer guess
 * Prints "coroutine MODE allocated" and "coroutine done"; exits 0.
 */
#define _GNU_SOURCE
#include "../integration/testlib.h"

#include <sys/mman.h>
#include <ucontext.h>

static ucontext_t main_uc, co_uc;

NOINLINE void do_alloc(int k)
{
    CUdeviceptr p;
    if (cuMemAlloc_v2(&p, 4096 + (size_t)k) != CUDA_SUCCESS)
        exit(1);
    __asm__ volatile("" ::: "memory");
}

#define DEPTH_STACK 65536
static int depth_mode;             /* depth: the stack is filled with a pattern */
static unsigned char *depth_stack; /* then: the stack, its pattern below what was used */

static void co_body(void)
{
    do_alloc(1);
    if (depth_stack) {
        size_t i = 0;
        while (i < DEPTH_STACK && depth_stack[i] == 0xa5)
            i++;
        printf("stack used %zu\n", (size_t)DEPTH_STACK - i);
    }
    printf("coroutine stack allocated\n");
}

/* co_body on a stack of `size` bytes, from malloc or mapped */
NOINLINE static int run_coroutine(int mapped, size_t size)
{
    static char *stack;
    if (mapped) {
        char *m = mmap(NULL, size + 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED || mprotect(m, 4096, PROT_NONE) != 0)
            return -1;
        stack = m + 4096;
    } else {
        stack = malloc(size);
        if (stack && depth_mode) {
            memset(stack, 0xa5, size);
            depth_stack = (unsigned char *)stack;
        }
    }
    if (!stack || getcontext(&co_uc) != 0)
        return -1;
    co_uc.uc_stack.ss_sp = stack;
    co_uc.uc_stack.ss_size = size;
    co_uc.uc_link = &main_uc;
    makecontext(&co_uc, co_body, 0);
    return swapcontext(&main_uc, &co_uc);
}

int nounw_outer(int k);
NOINLINE static void caller_one(void)
{
    volatile int x = 0;
    nounw_outer(0);
    x++;
}
NOINLINE static void caller_two(void)
{
    volatile int x = 0;
    caller_one();
    x++;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc < 2)
        return 2;
    tl_setup(0);
    if (strcmp(argv[1], "nounwind") == 0) {
        caller_two();
        printf("coroutine nounwind allocated\n");
    } else if (strcmp(argv[1], "depth") == 0) {
        depth_mode = 1;
        if (run_coroutine(0, DEPTH_STACK) != 0)
            return 1;
    } else if (run_coroutine(strcmp(argv[1], "mapped") == 0, argc > 2 ? strtoul(argv[2], NULL, 0) : 8192) != 0) {
        return 1;
    }
    printf("coroutine done\n");
    return 0;
}
