/*
 * unwindtest.c - stacks walked by the guard's fast walker and by libunwind
 * on the same calls (tests/unwind/unwind.sh runs it with GMG_UNWIND_CHECK=1,
 * under which every capture is walked both ways and compared).
 *
 *   unwindtest mixed      recursion alternating between this program (built
 *                         with frame pointers) and libunwmix.so (built
 *                         without), 1 to 48 frames deep, one allocation each
 *   unwindtest hostile    calls through hand-made frames: rbp garbage, rbp
 *                         pointing at a fake frame on the stack (both with
 *                         call frame information that says where the real
 *                         rbp is), and code without any unwind information
 *                         that leaves garbage in rbp
 *   unwindtest signal     allocations in signal handlers, on the thread's
 *                         stack and on an alternate signal stack
 *   unwindtest dlclose    libunwA.so allocates, is unloaded; libunwB.so (the
 *                         same code with other frame sizes) is loaded,
 *                         likely at the same address, and allocates
 *   unwindtest threads    threads started by libunwthr.so allocate
 *   unwindtest twins      two callers of one frame size, so that both reach
 *                         the allocation at one stack and frame pointer
 *                         (the walker's memo of its last walk starts alike),
 *                         their stacks differing in one return address: in
 *                         the allocation's caller frame, or one further out;
 *                         and two call sites without frame pointers, of
 *                         two frame sizes, called from one frame (one rbp,
 *                         two stack pointers)
 *   unwindtest runs       the same callers in runs of one after another,
 *                         each run's first allocation kept, then freed and
 *                         kept in turn: after a run's first few calls, the
 *                         thread's last capture is given again
 *                         (core/stacks.c, struct last_capture)
 * Each leaves one allocation live per case (freed ones are walked too), its
 * stack in the exit report.
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unwlib.h"

static void fail(const char *what)
{
    printf("FAIL %s\n", what);
    fflush(stdout);
    exit(1);
}

/* One allocation freed, one left live when keep. */
__attribute__((noinline)) void leaf_alloc(int keep)
{
    CUdeviceptr p;
    if (cuMemAlloc_v2(&p, 4096) != CUDA_SUCCESS)
        fail("cuMemAlloc_v2");
    if (!keep && cuMemFree_v2(p) != CUDA_SUCCESS)
        fail("cuMemFree_v2");
    __asm__ volatile("" ::: "memory");
}

/* ---- mixed: this side keeps frame pointers, libunwmix.so's does not */
__attribute__((noinline)) long fp_level(int n, int keep)
{
    volatile long pad = n;
    if (n <= 0)
        leaf_alloc(keep);
    else
        pad += nofp_level(n - 1, keep);
    return pad;
}

/* ---- hostile frames (x86-64 assembly, below) */
void garbage_rbp_call(void (*fn)(int), int arg);  /* rbp = 0xdeadbeefcafebabe during the call; CFI right */
void fake_frame_call(void (*fn)(int), int arg);   /* rbp -> a fake frame on the stack; CFI right */
void nocfi_call(void (*fn)(int), int arg);        /* no unwind information; rbp garbage */
__asm__(
    ".text\n"
    ".globl garbage_rbp_call\n.type garbage_rbp_call,@function\n"
    "garbage_rbp_call:\n"
    "  .cfi_startproc\n"
    "  push %rbp\n  .cfi_adjust_cfa_offset 8\n  .cfi_rel_offset %rbp, 0\n"
    "  mov %rdi, %rax\n  mov %esi, %edi\n"
    "  movabs $0xdeadbeefcafebabe, %rbp\n"
    "  call *%rax\n"
    "  pop %rbp\n  .cfi_adjust_cfa_offset -8\n  .cfi_restore %rbp\n"
    "  ret\n"
    "  .cfi_endproc\n"
    ".size garbage_rbp_call, .-garbage_rbp_call\n"
    ".globl fake_frame_call\n.type fake_frame_call,@function\n"
    "fake_frame_call:\n"
    "  .cfi_startproc\n"
    "  push %rbp\n  .cfi_adjust_cfa_offset 8\n  .cfi_rel_offset %rbp, 0\n"
    "  lea main(%rip), %rax\n  add $1, %rax\n"
    "  push %rax\n  .cfi_adjust_cfa_offset 8\n"          /* fake return address: inside main */
    "  push %rsp\n  .cfi_adjust_cfa_offset 8\n"          /* fake saved rbp: points at itself */
    "  mov %rsp, %rbp\n"
    "  mov %rdi, %rax\n  mov %esi, %edi\n"
    "  call *%rax\n"
    "  add $16, %rsp\n  .cfi_adjust_cfa_offset -16\n"
    "  pop %rbp\n  .cfi_adjust_cfa_offset -8\n  .cfi_restore %rbp\n"
    "  ret\n"
    "  .cfi_endproc\n"
    ".size fake_frame_call, .-fake_frame_call\n"
    ".globl nocfi_call\n.type nocfi_call,@function\n"
    "nocfi_call:\n"
    "  push %rbp\n"
    "  mov %rdi, %rax\n  mov %esi, %edi\n"
    "  movabs $0x0000000012345678, %rbp\n"
    "  call *%rax\n"
    "  pop %rbp\n"
    "  ret\n"
    ".size nocfi_call, .-nocfi_call\n");

static void hostile_leaf(int keep) { fp_level(3, keep); }

/* ---- signals */
static void on_signal(int sig)
{
    (void)sig;
    fp_level(2, 1);
}

__attribute__((noinline)) void signal_outer(int sig)
{
    volatile int n = 0;
    raise(sig);
    n++;
}

/* ---- twins: one frame size each pair (-O1: no identical code folding) */
__attribute__((noinline)) void twin_a(int keep)
{
    volatile int pad = 1;
    leaf_alloc(keep);
    pad++;
}

__attribute__((noinline)) void twin_b(int keep)
{
    volatile int pad = 2;
    leaf_alloc(keep);
    pad++;
}

__attribute__((noinline)) void twin_mid(int keep)
{
    volatile int pad = 3;
    leaf_alloc(keep);
    pad++;
}

__attribute__((noinline)) void twin_deep_a(int keep)
{
    volatile int pad = 4;
    twin_mid(keep);
    pad++;
}

__attribute__((noinline)) void twin_deep_b(int keep)
{
    volatile int pad = 5;
    twin_mid(keep);
    pad++;
}

/* and two call sites without frame pointers, of two frame sizes, called
 * from this one frame: the allocation at two stack pointers, one rbp */
__attribute__((noinline)) void twin_nofp(int i)
{
    volatile int pad = 6;
    nofp_site_small(i < 6);
    nofp_site_big(i < 7);
    pad++;
}

/* ---- threads: libunwthr.so starts them */
static CUcontext ctx;

static void thread_body(void)
{
    if (cuCtxSetCurrent(ctx))
        fail("cuCtxSetCurrent");
    fp_level(6, 0);
    fp_level(7, 1);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        fail("usage: unwindtest mixed|hostile|signal|dlclose|threads|twins|runs");
    CUdevice d;
    if (cuInit(0) || cuDeviceGet(&d, 0) || cuDevicePrimaryCtxRetain(&ctx, d) || cuCtxSetCurrent(ctx))
        fail("context");
    const char *what = argv[1];
    if (!strcmp(what, "mixed")) {
        for (int round = 0; round < 3; round++)
            for (int n = 0; n <= 48; n++)
                fp_level(n, round == 0 && n == 40);
    } else if (!strcmp(what, "hostile")) {
        for (int i = 0; i < 3; i++) {
            garbage_rbp_call(hostile_leaf, i == 0);
            fake_frame_call(hostile_leaf, i == 0);
            nocfi_call(hostile_leaf, i == 0);
        }
    } else if (!strcmp(what, "signal")) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigaction(SIGUSR2, &sa, NULL);
        signal_outer(SIGUSR2);
        /* and on an alternate stack */
        stack_t ss = { .ss_sp = malloc(1 << 16), .ss_size = 1 << 16 };
        if (!ss.ss_sp || sigaltstack(&ss, NULL))
            fail("sigaltstack");
        sa.sa_flags = SA_ONSTACK;
        sigaction(SIGURG, &sa, NULL);
        signal_outer(SIGURG);
    } else if (!strcmp(what, "dlclose")) {
        const char *dir = argc > 2 ? argv[2] : ".";
        char path[4096];
        for (int i = 0; i < 2; i++) {
            snprintf(path, sizeof path, "%s/libunw%c.so", dir, i ? 'B' : 'A');
            void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
            if (!h)
                fail(dlerror());
            long (*f)(int, int) = (long (*)(int, int))dlsym(h, "lib_alloc");
            if (!f)
                fail("lib_alloc");
            printf("%s at %p\n", path, (void *)f);
            for (int r = 0; r < 3; r++)
                f(4, r == 0);
            if (i == 0 && dlclose(h))
                fail("dlclose");
        }
    } else if (!strcmp(what, "twins")) { /* kept: 3 from twin_a, 5 from twin_b, 2 and 4 through twin_mid, 6 and 7 */
        for (int i = 0; i < 20; i++) {
            twin_a(i < 3);
            twin_b(i < 5);
            twin_deep_a(i < 2);
            twin_deep_b(i < 4);
            twin_nofp(i);
        }
    } else if (!strcmp(what, "runs")) { /* kept: 11 from twin_a, 13 from twin_b, 8 and 9 through twin_mid */
        static const struct { void (*f)(int); int kept; } run[] = {
            { twin_a, 5 }, { twin_b, 6 }, { twin_deep_a, 3 }, { twin_a, 4 }, { twin_deep_b, 8 }, { twin_b, 5 }, { twin_deep_a, 3 },
        };
        for (unsigned r = 0; r < sizeof run / sizeof *run; r++)
            for (int i = 0; i < 2 * run[r].kept + 6; i++) /* the first kept (where the memos change), */
                run[r].f(i == 0 || (i >= 6 && i % 2 == 0)); /* freed, then kept and freed in turn */
    } else if (!strcmp(what, "threads")) {
        if (lib_run_threads(thread_body, 4))
            fail("threads");
    } else {
        fail("unknown case");
    }
    printf("done %s\n", what);
    return 0;
}
