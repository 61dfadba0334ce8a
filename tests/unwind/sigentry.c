/*
 * sigentry.c MODE - stacks that libunwind walks, ending or passing where
 * the walk used to go wrong (tests/unwind/unwind.sh):
 *   pad    a SIGILL handler allocates; the signal came at the first
 *          instruction of a function that follows alignment padding with
 *          no unwind information (an asynchronous signal may land there;
 *          a ud2 makes it land there every time): the stack goes on past
 *          the signal frame to entry_after_pad, caller_pad, outer, main
 *   noret  the same, the signal inside trap_mid, which caller_noret called
 *          as its last instruction (so its return address is the first
 *          byte past caller_noret): on to caller_noret, caller_nr, outer
 *   green  a hand-started green thread (its entry entered on a malloc'd
 *          stack with a return address of 0 above it, as small coroutine
 *          libraries start one) allocates: its stack ends at green_entry,
 *          with no frame for the 0
 * Prints "sigentry MODE done".
 */
#define _GNU_SOURCE
#include "../integration/testlib.h"

#include <setjmp.h>
#include <signal.h>
#include <ucontext.h>

static __attribute__((noinline)) void in_handler(void)
{
    CUdeviceptr p;
    TL_CHECK(cuMemAlloc(&p, 4099));
    __asm__ volatile("" ::: "memory");
}

static void on_ill(int sig, siginfo_t *si, void *ucv)
{
    (void)sig;
    (void)si;
    in_handler();
    ((ucontext_t *)ucv)->uc_mcontext.gregs[REG_RIP] += 2; /* past the ud2 */
}

void entry_after_pad(void);
void caller_noret(void);
__asm__(".text\n"
        ".p2align 6\n.type pad_before,@function\npad_before:\n.cfi_startproc\n  ret\n.cfi_endproc\n"
        ".size pad_before, .-pad_before\n"
        ".p2align 5, 0x90\n" /* padding: no unwind information */
        ".globl entry_after_pad\n.type entry_after_pad,@function\nentry_after_pad:\n"
        ".cfi_startproc\n  ud2\n  ret\n.cfi_endproc\n.size entry_after_pad, .-entry_after_pad\n"
        ".p2align 6\n.globl caller_noret\n.type caller_noret,@function\ncaller_noret:\n.cfi_startproc\n"
        "  push %rbp\n  .cfi_def_cfa_offset 16\n  .cfi_offset %rbp, -16\n  mov %rsp, %rbp\n"
        "  .cfi_def_cfa_register %rbp\n  call trap_mid\n.cfi_endproc\n.size caller_noret, .-caller_noret\n"
        ".p2align 5, 0x90\n"
        ".type trap_mid,@function\ntrap_mid:\n.cfi_startproc\n"
        "  push %rbp\n  .cfi_def_cfa_offset 16\n  .cfi_offset %rbp, -16\n"
        "  ud2\n"
        "  pop %rbp\n  .cfi_def_cfa_offset 8\n"
        "  add $8, %rsp\n  pop %rbp\n  ret\n" /* to caller_noret's caller: the call never returns there */
        ".cfi_endproc\n.size trap_mid, .-trap_mid\n");

__attribute__((noinline)) void caller_nr(void) { caller_noret(); __asm__ volatile(""); }
__attribute__((noinline)) void caller_pad(void) { entry_after_pad(); __asm__ volatile(""); }
__attribute__((noinline)) void outer(int noret)
{
    if (noret)
        caller_nr();
    else
        caller_pad();
    __asm__ volatile("");
}

static jmp_buf back;
__attribute__((noinline)) void green_leaf(void)
{
    CUdeviceptr p;
    TL_CHECK(cuMemAlloc(&p, 4097));
    __asm__ volatile("" ::: "memory");
}
__attribute__((noinline)) void green_mid(void) { green_leaf(); __asm__ volatile(""); }
void green_entry(void) { green_mid(); longjmp(back, 1); }
/* start_on(top, fn): rsp = top, a return address of 0 pushed, jmp fn */
void start_on(void *top, void (*fn)(void));
__asm__(".text\n.globl start_on\n.type start_on,@function\nstart_on:\n"
        "  mov %rdi, %rsp\n  pushq $0\n  jmp *%rsi\n.size start_on, .-start_on\n");

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "pad";
    tl_setup(0);
    if (!strcmp(mode, "green")) {
        char *stk = malloc(1 << 16);
        if (!stk)
            return 2;
        if (!setjmp(back))
            start_on(stk + (1 << 16) - 64, green_entry);
    } else {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_ill;
        sa.sa_flags = SA_SIGINFO;
        sigaction(SIGILL, &sa, NULL);
        outer(!strcmp(mode, "noret"));
    }
    printf("sigentry %s done\n", mode);
    return 0;
}
