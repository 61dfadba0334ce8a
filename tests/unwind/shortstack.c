/*
 * shortstack.c MODE SIZE - allocations made where little stack is left
 * (tests/unwind/unwind.sh):
 *   alt SIZE     a SIGUSR1 handler on an alternate signal stack of SIZE
 *                bytes, with an inaccessible page below it, allocates
 *   altlocal     the same on an 8 KiB alternate stack that is a local
 *                array of main's, inside the thread's own stack; a canary
 *                below it must be intact after
 *   thread SIZE  a thread with a SIZE-byte stack allocates through a stub
 *                of machine code in an anonymous page (no unwind
 *                information: the fast walker gives such a stack up)
 * Prints "shortstack MODE allocated" from where it allocated, then
 * "shortstack done" and exits 0; a walk that ran off the stack would end
 * it with SIGSEGV.
 */
#define _GNU_SOURCE
#include "../integration/testlib.h"

#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

static CUcontext ctx;

static void on_usr1(int sig)
{
    (void)sig;
    CUdeviceptr p;
    static const char ok[] = "shortstack alt allocated\n", no[] = "shortstack alt: allocation failed\n"; /* (altlocal too) */
    if (cuMemAlloc(&p, 4001) == CUDA_SUCCESS) {
        if (write(1, ok, sizeof ok - 1) < 0)
            _exit(3);
    } else if (write(1, no, sizeof no - 1) < 0) {
        _exit(3);
    }
}

/* SIGUSR1 handled on the alternate stack [sp, sp + size), then raised. */
static int usr1_on(void *sp, size_t size)
{
    stack_t ss = { .ss_sp = sp, .ss_size = size, .ss_flags = 0 };
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sa.sa_flags = SA_ONSTACK;
    if (sigaltstack(&ss, NULL) != 0 || sigaction(SIGUSR1, &sa, NULL) != 0)
        return -1;
    raise(SIGUSR1);
    return 0;
}

__attribute__((noinline)) static void thread_alloc(void)
{
    CUdeviceptr p;
    printf("shortstack thread %s\n", cuMemAlloc(&p, 3001) == CUDA_SUCCESS ? "allocated" : "allocation failed");
    __asm__ volatile("" ::: "memory");
}

static void (*stub)(void);

static void *thread_main(void *arg)
{
    (void)arg;
    TL_CHECK(cuCtxSetCurrent(ctx));
    stub();
    return NULL;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc < 3)
        return 2;
    size_t size = strtoul(argv[2], NULL, 0);
    ctx = tl_setup(0);
    if (strcmp(argv[1], "altlocal") == 0) {
        volatile char canary[16384];
        memset((char *)canary, 0x5a, sizeof canary);
        char alt[8192];
        if (usr1_on(alt, sizeof alt) != 0)
            return 2;
        for (size_t i = 0; i < sizeof canary; i++)
            if (canary[i] != 0x5a) {
                printf("shortstack altlocal: the stack below was overwritten\n");
                return 1;
            }
        stack_t off = { .ss_sp = NULL, .ss_size = 0, .ss_flags = SS_DISABLE };
        sigaltstack(&off, NULL);
    } else if (strcmp(argv[1], "alt") == 0) {
        char *m = mmap(NULL, size + 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED || mprotect(m, 4096, PROT_NONE) != 0)
            return 2;
        if (usr1_on(m + 4096, size) != 0)
            return 2;
    } else {
        /* mov rax, thread_alloc; sub rsp, 8; call rax; add rsp, 8; ret */
        unsigned char code[] = { 0x48, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0x48, 0x83, 0xec, 0x08,
                                 0xff, 0xd0, 0x48, 0x83, 0xc4, 0x08, 0xc3 };
        void *target = (void *)thread_alloc;
        memcpy(code + 2, &target, sizeof target);
        unsigned char *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
            return 2;
        memcpy(m, code, sizeof code);
        stub = (void (*)(void))(void *)m;
        pthread_attr_t at;
        pthread_t th;
        if (pthread_attr_init(&at) || pthread_attr_setstacksize(&at, size) || pthread_create(&th, &at, thread_main, NULL))
            return 2;
        pthread_join(th, NULL);
    }
    printf("shortstack done\n");
    return 0;
}
