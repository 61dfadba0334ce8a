/*
 * test_pylines.c FILE - gmg_py_line_of, or gmg_py_line_of_310 when FILE
 * comes from 3.10 (src/core/pylines.c), against CPython's own co_lines()
 * for every instruction of every code object that
 * tests/python/linetables.py wrote into FILE; then the decoder on truncated
 * and corrupted tables (it must stay inside them and never crash).
 * Prints "N instructions, M code objects: all lines match" or the first
 * mismatches.
 */
#include "core/pylines.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint8_t table[1 << 20];
static int64_t tlen;

static int unhex(const char *h)
{
    tlen = 0;
    if (strcmp(h, "-") == 0)
        return 0;
    for (; h[0] && h[1] && h[0] != '\n'; h += 2) {
        unsigned v;
        if (sscanf(h, "%2x", &v) != 1 || tlen >= (int64_t)sizeof table)
            return -1;
        table[tlen++] = (uint8_t)v;
    }
    return 0;
}

int main(int argc, char **argv)
{
    FILE *f = argc > 1 ? fopen(argv[1], "r") : NULL;
    if (!f) {
        fprintf(stderr, "usage: test_pylines FILE (from linetables.py)\n");
        return 2;
    }
    static char line[1 << 22];
    long codes = 0, checked = 0, bad = 0;
    int first = 0;
    int (*line_of)(const uint8_t *, int64_t, int, int64_t, int64_t *) = gmg_py_line_of;
    while (fgets(line, sizeof line, f)) {
        int minor;
        if (line[0] == 'V' && sscanf(line, "V %d", &minor) == 1) {
            if (minor == 10)
                line_of = gmg_py_line_of_310;
        } else if (line[0] == 'T') {
            char *hex = malloc(strlen(line));
            if (!hex || sscanf(line, "T %d %s", &first, hex) != 2 || unhex(hex) < 0) {
                fprintf(stderr, "bad line: %.60s\n", line);
                return 2;
            }
            free(hex);
            codes++;
            /* every prefix of the table, and the table with bytes
             * flipped: any answer, but inside the table */
            for (int64_t cut = 0; cut < tlen && cut < 64; cut++)
                (void)line_of(table, cut, first, cut * 2, NULL);
        } else if (line[0] == 'A') {
            long off, want;
            sscanf(line, "A %ld %ld", &off, &want);
            int64_t used = -1, used2 = -1;
            int got = line_of(table, tlen, first, off, &used);
            checked++;
            if (got != want && bad++ < 10)
                fprintf(stderr, "code %ld (first line %d): offset %ld: line %d, CPython says %ld\n", codes, first,
                        off, got, want);
            /* the answer depends on the table's first `used` bytes only:
             * the table cut there gives it too */
            if ((used < 0 || used > tlen || line_of(table, used, first, off, &used2) != got || used2 != used) &&
                bad++ < 10)
                fprintf(stderr, "code %ld: offset %ld: line %d from the first %lld bytes, %d from them alone\n",
                        codes, off, got, (long long)used, line_of(table, used < 0 ? 0 : used, first, off, NULL));
        }
    }
    /* corrupted tables: random bytes, no entry marks, endless varints */
    srand(1);
    for (int round = 0; round < 20000; round++) {
        int64_t n = rand() % 64;
        for (int64_t i = 0; i < n; i++)
            table[i] = (uint8_t)rand();
        (void)line_of(table, n, rand() % 1000, rand() % 256, NULL);
    }
    memset(table, 0xff, 64); /* 1111 1111: code 15, and varint bytes with the continuation bit */
    (void)line_of(table, 64, 1, 100, NULL);
    memset(table, 0xf0 | 0x0f, 1);
    memset(table + 1, 0x7f, 63); /* a long entry whose varint never ends */
    (void)line_of(table, 64, 1, 100, NULL);
    if (bad || checked == 0) {
        fprintf(stderr, "%ld of %ld instructions wrong\n", bad, checked);
        return 1;
    }
    printf("%ld instructions of %ld code objects: every line as CPython's co_lines() says\n", checked, codes);
    return 0;
}
