/* dump_restart.c - a program with no handler of its own, blocked in read()
 * on a pipe when the dump signal arrives: its read must be restarted (the
 * guard's handler is installed with SA_RESTART), as if no handler had run.
 * A thread sends the dump signal while main is blocked, waits for the dump
 * to be written, then writes one byte. Prints the read's result. */
#include "../integration/testlib.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

static int fds[2];

static void *poke(void *arg)
{
    (void)arg;
    usleep(200000);
    kill(getpid(), SIGUSR1);
    usleep(500000); /* the reporter thread writes the dump meanwhile */
    if (write(fds[1], "x", 1) != 1)
        return NULL;
    return NULL;
}

int main(void)
{
    tl_setup(0);
    CUdeviceptr p;
    TL_CHECK(cuMemAlloc(&p, 4096)); /* the first CUDA call arms the dump signal */
    if (pipe(fds) != 0)
        return 1;
    pthread_t t;
    pthread_create(&t, NULL, poke, NULL);
    char c = 0;
    errno = 0;
    ssize_t n = read(fds[0], &c, 1);
    printf("read: %zd '%c' errno %d\n", n, n == 1 ? c : '-', n < 0 ? errno : 0);
    pthread_join(t, NULL);
    TL_CHECK(cuMemFree(p));
    return 0;
}
