/* unwthr.c - libunwthr.so: a library that starts threads of its own, which
 * call back into the program and allocate. */
#include "unwlib.h"

#include <pthread.h>

static void *run(void *arg)
{
    ((void (*)(void))arg)();
    return NULL;
}

int lib_run_threads(void (*body)(void), int n)
{
    pthread_t t[16];
    if (n > 16)
        n = 16;
    for (int i = 0; i < n; i++)
        if (pthread_create(&t[i], NULL, run, (void *)body))
            return -1;
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    return 0;
}
