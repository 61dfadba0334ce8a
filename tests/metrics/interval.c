/* interval.c - allocates 1 MiB, says "a", waits for a line on stdin,
 * allocates 1 MiB more, says "b", waits for another line, and exits with
 * both live: tests/metrics/interval.sh looks for the metrics file in between. */
#include "../integration/testlib.h"

static void wait_line(void)
{
    char line[16];
    if (!fgets(line, sizeof line, stdin))
        exit(3);
}

int main(void)
{
    tl_setup(0);
    CUdeviceptr a, b;
    TL_CHECK(cuMemAlloc(&a, 1 << 20));
    printf("a\n");
    fflush(stdout);
    wait_line();
    TL_CHECK(cuMemAlloc(&b, 1 << 20));
    printf("b\n");
    fflush(stdout);
    wait_line();
    printf("interval: done\n");
    return 0;
}
