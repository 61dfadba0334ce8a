/*
 * during_free.c - a context torn down (cuCtxDestroy) while another thread
 * frees memory of it (the simulated driver holds the free for
 * GPUSIM_FREE_DELAY_US): the record is reclaimed, its quota released.
 *
 *   teardown_race
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include "../integration/testlib.h"

#include <pthread.h>
#include <unistd.h>

static CUcontext doomed;
static CUdeviceptr doomed_ptr;

static void *late_free(void *arg)
{
    (void)arg;
    CHECK(cuCtxSetCurrent(doomed));
    CUresult r = cuMemFree_v2(doomed_ptr); /* the simulator holds it GPUSIM_FREE_DELAY_US */
    printf("late free: %d\n", (int)r);
    return NULL;
}

NOINLINE static void leak_in_doomed(void) { CHECK(cuMemAlloc_v2(&doomed_ptr, 1 << 20)); }

static void ctxrace(void)
{
    CUdevice d;
    CHECK(cuDeviceGet(&d, 0));
    CHECK(cuCtxCreate_v2(&doomed, 0, d));
    leak_in_doomed();
    pthread_t t;
    pthread_create(&t, NULL, late_free, NULL);
    usleep(30000);
    CHECK(cuCtxDestroy_v2(doomed));
    pthread_join(t, NULL);
    CHECK(cuCtxSetCurrent(tl_ctx));
    printf("after teardown: guard %llu sim %llu\n", tl_guard_live(0), (unsigned long long)tl_sim(0).live);
}

int main(void)
{
    tl_setup(0);
    ctxrace();
    fflush(stdout);
    return 0;
}
