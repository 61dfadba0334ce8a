/*
 * walkstack.c - see walkstack.h.
 *
 * The switch is a few instructions of x86_64 assembly: the caller's stack
 * pointer is kept in a callee-saved register, the walk stack's top made the
 * stack pointer, fn called, the caller's stack pointer restored. fn's
 * frames above it (the walk's) then live on the walk stack, while what the
 * walk reads (the program's stack, from a context taken before the switch)
 * stays where it was. A thread's walk stack is in use while fn runs: a
 * signal handler on the same thread that walks meanwhile is told no, and
 * walks in place (core/stacks.c).
 */
#define _GNU_SOURCE
#include "core/walkstack.h"

#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>

#define WALK_STACK (64u << 10)
#define GUARD_PAGE 4096u

#if defined(__x86_64__)
static __thread char *tl_stack __attribute__((tls_model("initial-exec")));
static __thread int tl_busy __attribute__((tls_model("initial-exec")));
static pthread_key_t key;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int keyed;

static void unmap(void *p)
{
    tl_stack = NULL;
    munmap(p, GUARD_PAGE + WALK_STACK);
}
static void key_make(void) { keyed = pthread_key_create(&key, unmap) == 0; }

static char *stack_of_thread(void)
{
    if (tl_stack)
        return tl_stack;
    pthread_once(&once, key_make);
    if (!keyed)
        return NULL;
    char *p = mmap(NULL, GUARD_PAGE + WALK_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    if (mprotect(p, GUARD_PAGE, PROT_NONE) != 0 || pthread_setspecific(key, p) != 0) {
        munmap(p, GUARD_PAGE + WALK_STACK);
        return NULL;
    }
    return tl_stack = p;
}

#define OWN_MAX 4096u
static __thread char *tl_top __attribute__((tls_model("initial-exec"))); /* below the caller's bytes */

void *gmg_walkstack_take(size_t n)
{
    if (tl_busy || n > OWN_MAX)
        return NULL;
    tl_busy = 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    char *base = stack_of_thread();
    if (!base) {
        tl_busy = 0;
        return NULL;
    }
    char *end = base + GUARD_PAGE + WALK_STACK;
    tl_top = end - ((n + 15) & ~(size_t)15); /* 16-byte aligned: a call pushes the return address */
    return tl_top;
}

void gmg_walkstack_run(void (*fn)(void *), void *arg)
{
    void *top = tl_top;
    __asm__ volatile("mov %%rsp, %%rbx\n\t"
                     "mov %[top], %%rsp\n\t"
                     "call *%[fn]\n\t"
                     "mov %%rbx, %%rsp"
                     : "+D"(arg), [fn] "+r"(fn), [top] "+r"(top)
                     :
                     : "rbx", "rax", "rcx", "rdx", "rsi", "r8", "r9", "r10", "r11", "memory", "cc", "xmm0", "xmm1",
                       "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12",
                       "xmm13", "xmm14", "xmm15");
}

void gmg_walkstack_give_back(void)
{
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    tl_busy = 0;
}
#else
void *gmg_walkstack_take(size_t n)
{
    (void)n;
    return NULL;
}
void gmg_walkstack_run(void (*fn)(void *), void *arg) { fn(arg); }
void gmg_walkstack_give_back(void) {}
#endif
