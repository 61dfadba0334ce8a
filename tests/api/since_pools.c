/* since_pools.c - gpumemguard_since with GPUMEMGUARD_SINCE_NO_POOLS: the
 * segments a caching pool grew since a mark (here under my_pool_grow, which
 * the suppressions file names with a pool: line) are left out, a leak beside
 * them is not; flags 0 counts both, an unknown flag is refused. */
#include "../integration/testlib.h"
#include "../../include/gpumemguard.h"

#define NOINLINE __attribute__((noinline))

NOINLINE static void my_pool_grow(size_t n) { CUdeviceptr p; TL_CHECK(cuMemAlloc(&p, n)); __asm__ volatile(""); }
NOINLINE static void leak_here(size_t n) { CUdeviceptr p; TL_CHECK(cuMemAlloc(&p, n)); __asm__ volatile(""); }

int main(void)
{
    tl_setup(0);
    int (*mark)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "gpumemguard_mark");
    int (*since)(int, int, int, unsigned long long *, unsigned long long *) =
        (int (*)(int, int, int, unsigned long long *, unsigned long long *))dlsym(RTLD_DEFAULT, "gpumemguard_since");
    long (*text)(int, int, int, int, char *, unsigned long) =
        (long (*)(int, int, int, int, char *, unsigned long))dlsym(RTLD_DEFAULT, "gpumemguard_since_text");
    if (!mark || !since || !text) {
        printf("FAIL: no API\n");
        return 1;
    }
    my_pool_grow(1 << 20); /* before the mark */
    int m = mark();
    my_pool_grow(2 << 20);
    my_pool_grow(4 << 20);
    leak_here(3000);
    unsigned long long all = 0, alln = 0, no = 0, non = 0;
    int r0 = since(m, -1, 0, &all, &alln);
    int r1 = since(m, -1, GPUMEMGUARD_SINCE_NO_POOLS, &no, &non);
    int r2 = since(m, -1, 2, NULL, NULL);
    char buf[8192];
    long n = text(m, -1, GPUMEMGUARD_SINCE_NO_POOLS, -1, buf, sizeof buf);
    printf("since: all %d %llu %llu; no pools %d %llu %llu; bad flag %d; text %s %s\n", r0, all, alln, r1, no, non, r2,
           n > 0 && strstr(buf, "leak_here") ? "leak" : "-", n > 0 && strstr(buf, "my_pool_grow") ? "pool" : "-");
    return 0;
}
