/* anchors.c - leaks under names that '^' and '$' suppressions must tell
 * apart, in a real process's stacks: alloc_and_alloc (whose last piece
 * "alloc" also occurs earlier), foofoo, two call sites under one pattern
 * (leak_pair_a, leak_pair_b), and one that no pattern names (keep_me). */
#include "../integration/testlib.h"

#define NOINLINE __attribute__((noinline))

static CUdeviceptr leak(size_t bytes)
{
    CUdeviceptr p;
    TL_CHECK(cuMemAlloc(&p, bytes));
    return p;
}

NOINLINE void alloc_and_alloc(void) { leak(100000); __asm__ volatile(""); }
NOINLINE void foofoo(void) { leak(200000); __asm__ volatile(""); }
NOINLINE void leak_pair_a(void) { for (int i = 0; i < 3; i++) leak(30000); __asm__ volatile(""); }
NOINLINE void leak_pair_b(void) { leak(50000); __asm__ volatile(""); }
NOINLINE void keep_me(void) { leak(7000); __asm__ volatile(""); }

int main(void)
{
    tl_setup(0);
    alloc_and_alloc();
    foofoo();
    leak_pair_a();
    leak_pair_b();
    keep_me();
    return 0;
}
