/* closing.c - a program that leaks, linked with libclosing.so, whose
 * destructor completes a log (tests/exitcode/closing.sh). */
#include "../integration/testlib.h"

void closing_log(const char *line);

int main(void)
{
    tl_setup(0);
    closing_log("a line from main");
    CUdeviceptr p;
    TL_CHECK(cuMemAlloc_v2(&p, 1 << 20)); /* leaked */
    return 0;
}
