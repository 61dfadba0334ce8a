/*
 * storms.c - make stress's storms (scripts/stress.sh): bounded, each a few
 * seconds. No main of its own: built into tests/stress/stress.c, which runs
 * them as
 *
 *   trust storm N           16 threads, every family, near the limit
 *   trust forkstorm N       N forks while 4 threads allocate
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include "../integration/testlib.h"

#include <pthread.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

static void *stormer(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    int iters = (int)((uintptr_t)arg >> 8);
    CHECK(cuCtxSetCurrent(tl_ctx));
    enum { SLOTS = 16 };
    struct { int kind; uint64_t h; } live[SLOTS];
    memset(live, 0, sizeof live);
    CUmemAllocationProp p = tl_vmm_prop(0);
    for (int i = 0; i < iters; i++) {
        int k = rand_r(&seed) % SLOTS;
        if (live[k].kind) {
            switch (live[k].kind) {
            case 1: case 2: case 3: cuMemFree_v2(live[k].h); break;
            case 4: cuMemFreeAsync(live[k].h, NULL); break;
            case 5: cuMemRelease(live[k].h); break;
            case 6: cuArrayDestroy((CUarray)(uintptr_t)live[k].h); break;
            }
            live[k].kind = 0;
            continue;
        }
        int kind = 1 + rand_r(&seed) % 6;
        size_t sz = (size_t)(1 + rand_r(&seed) % 4) << 20;
        CUresult r;
        CUdeviceptr d = 0;
        size_t pitch;
        switch (kind) {
        case 1: r = cuMemAlloc_v2(&d, sz); live[k].h = d; break;
        case 2: r = cuMemAllocPitch_v2(&d, &pitch, sz / 256, 256, 4); live[k].h = d; break;
        case 3: r = cuMemAllocManaged(&d, sz, CU_MEM_ATTACH_GLOBAL); live[k].h = d; break;
        case 4: r = cuMemAllocAsync(&d, sz, NULL); live[k].h = d; break;
        case 5: { CUmemGenericAllocationHandle h; r = cuMemCreate(&h, 2 << 20, &p, 0); live[k].h = h; break; }
        default: {
            CUarray a;
            CUDA_ARRAY_DESCRIPTOR ad = { 512, sz / 2048, CU_AD_FORMAT_FLOAT, 1 };
            r = cuArrayCreate_v2(&a, &ad);
            live[k].h = (uintptr_t)a;
        }
        }
        if (r == CUDA_SUCCESS)
            live[k].kind = kind;
        else if (r != CUDA_ERROR_OUT_OF_MEMORY)
            exit(10 + kind);
    }
    for (int k = 0; k < SLOTS; k++)
        if (live[k].kind) {
            switch (live[k].kind) {
            case 5: cuMemRelease(live[k].h); break;
            case 6: cuArrayDestroy((CUarray)(uintptr_t)live[k].h); break;
            default: cuMemFree_v2(live[k].h);
            }
        }
    return NULL;
}

static void storm(int iters)
{
    pthread_t t[16];
    for (int i = 0; i < 16; i++)
        pthread_create(&t[i], NULL, stormer, (void *)(uintptr_t)(((uintptr_t)iters << 8) | (uintptr_t)(i + 1)));
    for (int i = 0; i < 16; i++)
        pthread_join(t[i], NULL);
    struct sim_stats s = tl_sim(0);
    printf("storm: sim peak %llu sim live %llu guard %llu oom-by-driver %llu\n", (unsigned long long)s.peak,
           (unsigned long long)s.live, tl_guard_live(0), (unsigned long long)s.oom);
}

static void forkstorm(int n)
{
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, tl_churn, NULL);
    int ok = 0;
    for (int i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            alarm(10);
            CUdeviceptr d;
            CHECK(cuCtxSetCurrent(tl_ctx));
            CHECK(cuMemAlloc_v2(&d, 4096));
            _exit(tl_guard_live(0) == 4096 ? 0 : 1);
        }
        int st;
        waitpid(pid, &st, 0);
        ok += WIFEXITED(st) && WEXITSTATUS(st) == 0;
    }
    __atomic_store_n(&tl_stop, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    printf("forkstorm: %d forks, %d children clean\n", n, ok);
}

static int storms_mode(int argc, char **argv)
{
    const char *m = argv[1];
    int n = argc > 2 ? atoi(argv[2]) : 0;
    if (!strcmp(m, "storm")) storm(n);
    else if (!strcmp(m, "forkstorm")) forkstorm(n);
    else return 0;
    return 1;
}
