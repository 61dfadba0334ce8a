/*
 * asyncpool.c - stream-ordered pools that keep freed memory: asyncpool CASE
 *   keep    release threshold "keep everything"; 3 MiB allocated and freed,
 *           1 MiB left live: the pool retains 3 MiB beyond what is in use
 *   quota   under GPUMEM_LIMIT=8M: 6 MiB allocated and freed into a pool
 *           that keeps everything, then 6 MiB with cuMemAlloc: prints the
 *           bytes counted and what the pool still retains
 *   quotafree the same, the 6 MiB freed with cuMemFree (which frees a
 *           stream-ordered allocation into its pool too)
 *   fork    as keep, then a child forked, which exits at once: its report
 *           is its own, without its parent's pools
 *   many    100 pools of the program's, each keeping the 1 MiB freed into
 *           it, then a 90 MiB cuMemAlloc (under GPUMEM_LIMIT=100M: every
 *           pool trimmed first): prints what the pools still reserve
 * Prints one line of numbers per case.
 */
#include "../integration/testlib.h"

#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

static CUmemoryPool keep_all(void)
{
    CUmemoryPool pool;
    TL_CHECK(cuDeviceGetMemPool(&pool, 0));
    cuuint64_t all = UINT64_MAX;
    TL_CHECK(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &all));
    return pool;
}

static unsigned long long retained(CUmemoryPool pool)
{
    cuuint64_t res = 0, used = 0;
    TL_CHECK(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &res));
    TL_CHECK(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &used));
    return (unsigned long long)(res - used);
}

int main(int argc, char **argv)
{
    const char *c = argc > 1 ? argv[1] : "keep";
    tl_setup(0);
    const size_t MiB = 1 << 20;
    CUmemoryPool pool = keep_all();
    CUdeviceptr a, b;
    if (strcmp(c, "keep") == 0 || strcmp(c, "fork") == 0) {
        TL_CHECK(cuMemAllocAsync(&a, 3 * MiB, 0));
        TL_CHECK(cuMemAllocAsync(&b, MiB, 0));
        TL_CHECK(cuMemFreeAsync(a, 0));
        TL_CHECK(cuStreamSynchronize(0));
        printf("keep: guard %llu retained %llu\n", tl_guard_live(0), retained(pool));
        if (strcmp(c, "fork") == 0) {
            fflush(stdout);
            pid_t pid = fork();
            if (pid == 0)
                exit(0); /* the child's exit report */
            int st = 0;
            waitpid(pid, &st, 0);
            printf("fork: child %d exited %d\n", (int)pid, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
        }
    } else if (strcmp(c, "many") == 0) {
        enum { N = 100 };
        CUmemoryPool pools[N];
        for (int i = 0; i < N; i++) {
            CUmemPoolProps p;
            memset(&p, 0, sizeof p);
            p.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
            p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
            p.location.id = 0;
            TL_CHECK(cuMemPoolCreate(&pools[i], &p));
            cuuint64_t all = UINT64_MAX;
            TL_CHECK(cuMemPoolSetAttribute(pools[i], CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &all));
            TL_CHECK(cuMemAllocFromPoolAsync(&a, MiB, pools[i], 0));
            TL_CHECK(cuMemFreeAsync(a, 0));
        }
        TL_CHECK(cuStreamSynchronize(0));
        unsigned long long before = 0, after = 0;
        for (int i = 0; i < N; i++)
            before += retained(pools[i]);
        CUresult r = getenv("ASYNCPOOL_NO_ALLOC") ? CUDA_SUCCESS : cuMemAlloc(&b, 90 * MiB);
        for (int i = 0; i < N; i++)
            after += retained(pools[i]);
        printf("many: retained before %llu; cuMemAlloc %d; retained after %llu\n", before, (int)r, after);
    } else if (strcmp(c, "quota") == 0 || strcmp(c, "quotafree") == 0) {
        TL_CHECK(cuMemAllocAsync(&a, 6 * MiB, 0));
        if (strcmp(c, "quota") == 0)
            TL_CHECK(cuMemFreeAsync(a, 0));
        else
            TL_CHECK(cuMemFree(a));
        TL_CHECK(cuStreamSynchronize(0));
        unsigned long long before = retained(pool);
        CUresult r = cuMemAlloc(&b, 6 * MiB);
        printf("quota: retained before %llu; cuMemAlloc %d; guard %llu retained %llu\n", before, (int)r,
               tl_guard_live(0), retained(pool));
    }
    return 0;
}
