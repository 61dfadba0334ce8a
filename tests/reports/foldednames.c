/*
 * foldednames.c - native frames whose names flame graph tools must read in
 * the folded report (tests/reports.sh): long_fn's symbol is "xy" and 800
 * characters of U+00E4, 1,602 bytes of UTF-8 (past the 1,400 a folded frame
 * keeps); bad_fn's is not UTF-8 (bytes 0xff 0xfe). Each allocates once.
 */
#include "../integration/testlib.h"

__attribute__((noinline)) void long_fn(void) __asm__("xyääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääääää");
__attribute__((noinline)) void bad_fn(void) __asm__("bad\xff\xfeutf8");

void long_fn(void)
{
    CUdeviceptr p;
    TL_CHECK(cuMemAlloc(&p, 4097));
    __asm__ volatile("" ::: "memory");
}

void bad_fn(void)
{
    CUdeviceptr p;
    TL_CHECK(cuMemAlloc(&p, 4099));
    __asm__ volatile("" ::: "memory");
}

int main(void)
{
    tl_setup(0);
    long_fn();
    bad_fn();
    return 0;
}
