/* pylines.c - see pylines.h. */
#include "core/pylines.h"

/* The location table (3.11-3.13, Objects/locations.md): entries of one
 * first byte 1ccccnnn (code c, n+1 code units) and continuation bytes.
 * Codes 0-9 short form and 10-12 one-line forms (line += c - 10) keep or
 * step the line; 13 (no columns) and 14 (long) carry a signed varint line
 * delta; 15 means "no line". */
static int read_varint(const uint8_t **p, const uint8_t *end, unsigned *out)
{
    unsigned v = 0, shift = 0;
    for (;;) {
        if (*p >= end || shift > 30) /* as CPython writes them: at most six bytes */
            return -1;
        unsigned b = *(*p)++;
        v |= (b & 63) << shift;
        shift += 6;
        if (!(b & 64))
            break;
    }
    *out = v;
    return 0;
}

int gmg_py_line_of(const uint8_t *t, int64_t n, int first, int64_t addr, int64_t *used)
{
    const uint8_t *p = t, *end = t + n;
    int r = -1;
    long long line = first; /* a corrupt table must not overflow an int */
    int64_t at = 0;
    while (p < end) {
        unsigned b = *p++;
        if (!(b & 128))
            break; /* not at an entry's first byte */
        unsigned code = (b >> 3) & 15;
        int64_t len = (int64_t)((b & 7) + 1) * 2;
        long long entry_line = line;
        if (code == 13 || code == 14) {
            unsigned u;
            if (read_varint(&p, end, &u))
                break;
            line += (u & 1) ? -(long long)(u >> 1) : (long long)(u >> 1);
            entry_line = line;
        } else if (code >= 10 && code <= 12) {
            line += (long long)code - 10;
            entry_line = line;
        }
        if (code == 15)
            entry_line = -1;
        while (p < end && !(*p & 128))
            p++; /* the entry's other bytes (columns) */
        if (addr >= at && addr < at + len) {
            r = entry_line < 0 || entry_line > 0x7fffffff ? -1 : (int)entry_line;
            break;
        }
        at += len;
    }
    if (used)
        *used = p - t;
    return r;
}


/* 3.10 (Objects/lnotab_notes.txt, PyLineTable_NextAddressRange): each pair
 * ends the current range `b` bytes further and moves the line by `d`
 * (-128: the range has no line). Empty ranges only carry their delta. */
int gmg_py_line_of_310(const uint8_t *t, int64_t n, int first, int64_t addr, int64_t *used)
{
    long long line = first;
    int64_t end = 0;
    for (int64_t i = 0; i + 1 < n; i += 2) {
        int64_t start = end;
        int d = (int8_t)t[i + 1];
        end += t[i];
        long long entry_line = -1;
        if (d != -128) {
            line += d;
            entry_line = line;
        }
        if (addr >= start && addr < end) {
            if (used)
                *used = i + 2;
            return entry_line < 0 || entry_line > 0x7fffffff ? -1 : (int)entry_line;
        }
    }
    if (used)
        *used = n;
    return -1;
}
