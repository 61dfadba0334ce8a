/*
 * test_symbolize.c - report/symbolize.c on its own: a frame is named with a
 * symbolizer, and also without one (NULL: gmg_symbolizer_get could not make
 * one, out of memory), from the loader alone, without crashing the program
 * whose report it is. Prints "symbolize: N checks, M failed"; exit status 1
 * on failure. Linked with -rdynamic so that dladdr knows named_here.
 */
#define _GNU_SOURCE
#include "report/symbolize.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* core/pyframes.c, stubbed: no Python frame here */
int gmg_py_frame(uintptr_t w, const char **function, const char **file, int *line)
{
    (void)w; (void)function; (void)file; (void)line;
    return 0;
}

static int checks, failed;
#define CHECK(cond, what) do { checks++; if (!(cond)) { failed++; printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, what); } } while (0)

__attribute__((noinline)) void named_here(void);
__attribute__((noinline)) void named_here(void) { __asm__ volatile(""); }

static int is(const char *s, const char *want) { return s && strcmp(s, want) == 0; }

int main(void)
{
    uintptr_t pc = (uintptr_t)&named_here + 1; /* as a return address into it */
    struct gmg_frame_info fi;

    struct gmg_symbolizer *s = gmg_symbolizer_new();
    memset(&fi, 0, sizeof fi);
    gmg_symbolize(s, pc, NULL, &fi);
    CHECK(is(fi.function, "named_here") && is(fi.module, "test_symbolize"), "a frame named with a symbolizer");
    gmg_symbolizer_free(s);

    memset(&fi, 0xff, sizeof fi);
    gmg_symbolize(NULL, pc, NULL, &fi); /* the guard's out-of-memory case: no crash */
    CHECK(fi.pc == pc && is(fi.function, "named_here") && is(fi.module, "test_symbolize") && fi.module_path &&
              fi.offset != 0 && !fi.python,
          "without a symbolizer, the loader's names");

    memset(&fi, 0xff, sizeof fi);
    gmg_symbolize(NULL, 8, NULL, &fi); /* an address no object holds */
    CHECK(fi.pc == 8 && !fi.function && !fi.module && !fi.file, "without a symbolizer, nothing known: nothing named");

    printf("symbolize: %d checks, %d failed\n", checks, failed);
    return failed != 0;
}
