/*
 * buffered_stdout.c - a leak, and a line on stdout left in its buffer for
 * exit to write: GPUMEM_EXITCODE's _exit must not lose it.
 *
 *   buffered_stdout
 */
#define _GNU_SOURCE
#include "../integration/testlib.h"

int main(void)
{
    CUdeviceptr p;
    tl_setup(0);
    cuMemAlloc(&p, 1 << 20);
    printf("program output, still buffered at exit\n"); /* no flush: exit's job */
    return 0;
}
