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
 *   managed under GPUMEM_LIMIT=64M: a managed pool (device 0 preferred)
 *           that keeps everything keeps 48 MiB freed, then 40 MiB of
 *           managed memory from it: prints what it still reserves
 *   kinds   pools of pinned host memory (8 MiB kept), managed memory (4 MiB
 *           kept) and device memory (2 MiB kept), each listed by the report
 *           (4 KiB leaked, so that the text report is written)
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

static CUmemoryPool pool_of(CUmemAllocationType type, CUmemLocationType where, int id)
{
    CUmemoryPool pool;
    CUmemPoolProps p;
    memset(&p, 0, sizeof p);
    p.allocType = type;
    p.location.type = where;
    p.location.id = id;
    TL_CHECK(cuMemPoolCreate(&pool, &p));
    cuuint64_t all = UINT64_MAX;
    TL_CHECK(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &all));
    return pool;
}

static unsigned long long reserved(CUmemoryPool pool)
{
    cuuint64_t res = 0;
    TL_CHECK(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &res));
    return (unsigned long long)res;
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
    } else if (strcmp(c, "managed") == 0) {
        CUmemoryPool m = pool_of(CU_MEM_ALLOCATION_TYPE_MANAGED, CU_MEM_LOCATION_TYPE_DEVICE, 0);
        TL_CHECK(cuMemAllocFromPoolAsync(&a, 48 * MiB, m, 0));
        TL_CHECK(cuMemFreeAsync(a, 0));
        TL_CHECK(cuStreamSynchronize(0));
        unsigned long long before = reserved(m);
        CUresult r = cuMemAllocFromPoolAsync(&b, 40 * MiB, m, 0);
        printf("managed: reserved before %llu; allocated %d; reserved after %llu\n", before, (int)r, reserved(m));
    } else if (strcmp(c, "kinds") == 0) {
        CUmemoryPool h = pool_of(CU_MEM_ALLOCATION_TYPE_PINNED, CU_MEM_LOCATION_TYPE_HOST, 0);
        CUmemoryPool m = pool_of(CU_MEM_ALLOCATION_TYPE_MANAGED, CU_MEM_LOCATION_TYPE_DEVICE, 0);
        CUmemoryPool d = pool_of(CU_MEM_ALLOCATION_TYPE_PINNED, CU_MEM_LOCATION_TYPE_DEVICE, 0);
        CUmemoryPool ps[3] = { h, m, d };
        size_t sz[3] = { 8 * MiB, 4 * MiB, 2 * MiB };
        for (int i = 0; i < 3; i++) {
            TL_CHECK(cuMemAllocFromPoolAsync(&a, sz[i], ps[i], 0));
            TL_CHECK(cuMemFreeAsync(a, 0));
        }
        TL_CHECK(cuStreamSynchronize(0));
        TL_CHECK(cuMemAlloc(&b, 4096)); /* a leak: the text report is written (a clean run's is quiet) */
        printf("kinds: %llu %llu %llu\n", reserved(h), reserved(m), reserved(d));
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
