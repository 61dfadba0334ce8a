/* slowctor.c - a library whose constructor says "ready" and sleeps 30 s:
 * dlopen holds the loader's lock meanwhile (tests/fatal/fatal.sh). */
#include <stdio.h>
#include <unistd.h>

__attribute__((constructor)) static void slow(void)
{
    printf("ready\n");
    fflush(stdout);
    sleep(30);
}
