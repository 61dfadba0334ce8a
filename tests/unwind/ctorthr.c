/*
 * ctorthr.c - a library whose constructor starts a thread and waits for it
 * (inside dlopen, holding the loader's lock), and that thread makes the
 * process's first allocation with a stack (tests/unwind/unwind.sh, with
 * ctorload.c). Without the guard the program ends at once.
 */
#include <pthread.h>
#include <stddef.h>

extern void host_alloc(size_t n);

__attribute__((noinline)) static void *body(void *arg)
{
    host_alloc((size_t)arg);
    return NULL;
}

__attribute__((constructor)) static void start_and_join(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, body, (void *)6001) == 0)
        pthread_join(t, NULL);
}
