/* mockcu.c - a library that is not the driver but exports a function of a
 * driver entry point's name, as a mock or another tool may
 * (tests/library/othercu.sh): its cuMemAlloc_v2 hands out 0xdead0000 and
 * counts its calls. */
#include <stddef.h>

int mock_calls;

int cuMemAlloc_v2(unsigned long long *p, size_t n)
{
    (void)n;
    mock_calls++;
    *p = 0xdead0000ull;
    return 0;
}
