/*
 * pylines.h - CPython's line tables (co_linetable: 3.10's, and 3.11-3.13's
 * location tables), decoded without the interpreter (core layer; used by
 * pyframes.c, tested on its own by tests/unit/test_pylines.c against
 * CPython's co_lines()).
 */
#ifndef GMG_CORE_PYLINES_H
#define GMG_CORE_PYLINES_H

#include <stdint.h>

/* The line of the instruction at byte offset addr of a code object whose
 * table is t[0..n) and first line `first`; -1 for "no line" or a table that
 * does not decode. Reads nothing outside t[0..n). *used (if not NULL): how
 * many of the table's first bytes the answer depends on (t[0..*used)):
 * another table that begins with the same bytes gives the same line. */
int gmg_py_line_of(const uint8_t *t, int64_t n, int first, int64_t addr, int64_t *used);

/* The same for 3.10's table, of (byte delta, signed line delta) pairs. */
int gmg_py_line_of_310(const uint8_t *t, int64_t n, int first, int64_t addr, int64_t *used);

#endif
