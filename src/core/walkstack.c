/*
 * walkstack.c - see walkstack.h.
 *
 * The switch is a small function of x86_64 assembly with its own call frame
 * information: it saves the caller's frame pointer, keeps the caller's
 * stack pointer in it, makes the walk stack's top the stack pointer, calls
 * fn, and restores both. Its CFI says the caller's frame is at rbp + 16 for
 * the whole call, so that anything unwinding through it (libunwind in a
 * signal handler that interrupts a walk, a profiler, gdb) goes from fn's
 * frames on the walk stack back to the program's stack exactly. fn's frames
 * (the walk's) live on the walk stack; what the walk reads (the program's
 * stack, from a context taken before the switch) stays where it was. A
 * thread's walk stack is in use while fn runs: a signal handler on the same
 * thread that walks meanwhile is told no, and walks in place
 * (core/stacks.c), with the room gmg_walkstack_room says is left.
 */
#define _GNU_SOURCE
#include "core/walkstack.h"

#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>

/* libunwind's walk takes about 16 KiB; the rest is for the program's own
 * signal handlers that interrupt a walk and run here (untouched pages cost
 * no memory). */
#define WALK_STACK (256u << 10)
#define GUARD_PAGE 4096u
#define OWN_MAX 4096u

#if defined(__x86_64__)
/* gmg_walkstack_call(arg, fn, top): fn(arg) with the stack pointer at top. */
void gmg_walkstack_call(void *arg, void (*fn)(void *), void *top);
__asm__(".text\n"
        ".p2align 4\n"
        ".globl gmg_walkstack_call\n"
        ".hidden gmg_walkstack_call\n"
        ".type gmg_walkstack_call, @function\n"
        "gmg_walkstack_call:\n"
        ".cfi_startproc\n"
        "\tpushq %rbp\n"
        ".cfi_def_cfa_offset 16\n"
        ".cfi_offset %rbp, -16\n"
        "\tmovq %rsp, %rbp\n"
        ".cfi_def_cfa_register %rbp\n"
        "\tmovq %rdx, %rsp\n"
        "\tcall *%rsi\n"
        "\tmovq %rbp, %rsp\n"
        "\tpopq %rbp\n"
        ".cfi_def_cfa %rsp, 8\n"
        "\tret\n"
        ".cfi_endproc\n"
        ".size gmg_walkstack_call, .-gmg_walkstack_call\n");

static __thread char *tl_stack __attribute__((tls_model("initial-exec")));
static __thread char *tl_top __attribute__((tls_model("initial-exec"))); /* below the taker's bytes */
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
    tl_top = end - ((n + 15) & ~(size_t)15); /* 16-byte aligned: the call pushes the return address */
    return tl_top;
}

void gmg_walkstack_run(void (*fn)(void *), void *arg) { gmg_walkstack_call(arg, fn, tl_top); }

void gmg_walkstack_give_back(void)
{
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    tl_busy = 0;
}

long gmg_walkstack_room(uintptr_t sp)
{
    char *base = tl_stack;
    if (!base || sp < (uintptr_t)base + GUARD_PAGE || sp >= (uintptr_t)base + GUARD_PAGE + WALK_STACK)
        return -1;
    return (long)(sp - ((uintptr_t)base + GUARD_PAGE));
}
#else
void *gmg_walkstack_take(size_t n)
{
    (void)n;
    return NULL;
}
void gmg_walkstack_run(void (*fn)(void *), void *arg) { fn(arg); }
void gmg_walkstack_give_back(void) {}
long gmg_walkstack_room(uintptr_t sp)
{
    (void)sp;
    return -1;
}
#endif
