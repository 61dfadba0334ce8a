/*
 * selftest.c - the simulated driver itself, without the guard: it refuses
 * sizes that overflow, and a fork while other threads are inside it leaves
 * the child a driver that works.
 *
 *   sim_selftest sim_sizes   SIZE_MAX alloc, pitch and a 3D array that wraps
 *   sim_selftest sim_fork N  N forks while two threads allocate and free
 *   sim_selftest sim_shared  (GPUSIM_MEM=64M) a 40 MiB array, then 40 MiB of
 *                            linear memory: refused, the array holds the
 *                            device's memory too; free memory never above total
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include "../integration/testlib.h"

#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

static void sim_sizes(void)
{
    CUdeviceptr d;
    size_t pitch;
    CUarray a;
    CUDA_ARRAY3D_DESCRIPTOR ad = { (size_t)1 << 30, (size_t)1 << 30, (size_t)1 << 30, CU_AD_FORMAT_FLOAT, 4, 0 };
    printf("sim sizes: %d %d %d\n", (int)cuMemAlloc_v2(&d, SIZE_MAX), (int)cuMemAllocPitch_v2(&d, &pitch, SIZE_MAX, 2, 4),
           (int)cuArray3DCreate_v2(&a, &ad));
}

static void sim_shared(void)
{
    CUarray a;
    CUDA_ARRAY_DESCRIPTOR ad = { 2560, 4096, CU_AD_FORMAT_FLOAT, 1 }; /* 40 MiB */
    CHECK(cuArrayCreate_v2(&a, &ad));
    CUdeviceptr d;
    CUresult r = cuMemAlloc_v2(&d, 40u << 20);
    size_t fr = 0, total = 0;
    CHECK(cuMemGetInfo_v2(&fr, &total));
    printf("sim shared: %d, free %s total\n", (int)r, fr <= total ? "within" : "above");
}

static void sim_fork(int n)
{
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, tl_churn, NULL);
    int ok = 0;
    for (int i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            alarm(5); /* a child that inherited a held lock would hang here */
            CUdeviceptr d;
            CHECK(cuCtxSetCurrent(tl_ctx));
            _exit(cuMemAlloc_v2(&d, 4096) == CUDA_SUCCESS && cuMemFree_v2(d) == CUDA_SUCCESS ? 0 : 1);
        }
        int st;
        waitpid(pid, &st, 0);
        ok += WIFEXITED(st) && WEXITSTATUS(st) == 0;
    }
    __atomic_store_n(&tl_stop, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("forks %d, children fine %d\n", n, ok);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: sim_selftest sim_sizes|sim_fork N|sim_shared\n");
        return 2;
    }
    const char *m = argv[1];
    int n = argc > 2 ? atoi(argv[2]) : 0;
    tl_setup(0);
    if (!strcmp(m, "sim_sizes")) sim_sizes();
    else if (!strcmp(m, "sim_fork")) sim_fork(n);
    else if (!strcmp(m, "sim_shared")) sim_shared();
    else {
        fprintf(stderr, "unknown mode %s\n", m);
        return 2;
    }
    fflush(stdout);
    return 0;
}
