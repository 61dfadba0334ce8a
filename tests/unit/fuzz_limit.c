/* fuzz_limit.c - libFuzzer target for the GPUMEM_LIMIT parser. Beyond not
 * crashing, it checks invariants: an accepted value re-parses to the same
 * result, percentages are in (0, 100], and a refusal always says why. And an
 * oracle: a single size is also evaluated here in arbitrary precision (a
 * decimal big number, times the unit, divided by 10^decimals); the parser
 * must accept exactly the values below 2^64 and give their bytes, but for a
 * number of bytes with a fraction (no unit, or B), which it refuses. */
#include "base/limit_parse.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Little-endian base-10^9 big number. */
struct big { uint32_t d[64]; int n; };

static void big_muladd(struct big *b, uint64_t m, uint64_t add)
{
    unsigned __int128 carry = add;
    for (int i = 0; i < b->n; i++) {
        unsigned __int128 v = (unsigned __int128)b->d[i] * m + carry;
        b->d[i] = (uint32_t)(v % 1000000000u);
        carry = v / 1000000000u;
    }
    while (carry && b->n < 64) {
        b->d[b->n++] = (uint32_t)(carry % 1000000000u);
        carry /= 1000000000u;
    }
    if (carry)
        abort(); /* 576 digits: inputs are shorter than 256 bytes */
}

static void big_div10(struct big *b)
{
    uint64_t rem = 0;
    for (int i = b->n - 1; i >= 0; i--) {
        uint64_t v = rem * 1000000000u + b->d[i];
        b->d[i] = (uint32_t)(v / 10);
        rem = v % 10;
    }
    while (b->n && !b->d[b->n - 1])
        b->n--;
}

/* 1 and *v when b < 2^64; 0 otherwise. */
static int big_u64(const struct big *b, uint64_t *v)
{
    unsigned __int128 x = 0;
    for (int i = b->n - 1; i >= 0; i--) {
        x = x * 1000000000u + b->d[i];
        if (x > UINT64_MAX)
            return 0;
    }
    *v = (uint64_t)x;
    return 1;
}

/* The reference for "DIGITS[.DIGITS]UNIT" with at most 18 decimals: 1 and
 * the exact value's floor in *fits and *bytes (*fits 0 also for bytes with
 * a fraction that is not 0: refused); 0 for any other form. */
static int reference(const char *t, int *fits, uint64_t *bytes)
{
    static const struct { const char *u; uint64_t m; } units[] = {
        { "", 1 }, { "B", 1 }, { "K", 1ull << 10 }, { "M", 1ull << 20 }, { "G", 1ull << 30 }, { "T", 1ull << 40 },
        { "KiB", 1ull << 10 }, { "MiB", 1ull << 20 }, { "GiB", 1ull << 30 }, { "TiB", 1ull << 40 },
        { "kB", 1000ull }, { "MB", 1000000ull }, { "GB", 1000000000ull }, { "TB", 1000000000000ull },
    };
    struct big b = { .n = 0 };
    const char *p = t;
    int frac = 0, digits = 0, fraction = 0;
    for (; *p >= '0' && *p <= '9'; p++, digits++)
        big_muladd(&b, 10, (uint64_t)(*p - '0'));
    if (!digits)
        return 0;
    if (*p == '.') {
        for (p++; *p >= '0' && *p <= '9'; p++, frac++) {
            big_muladd(&b, 10, (uint64_t)(*p - '0'));
            fraction |= *p != '0';
        }
        if (!frac || frac > 18)
            return 0;
    }
    for (size_t k = 0; k < sizeof units / sizeof units[0]; k++) {
        if (strcmp(p, units[k].u) != 0)
            continue;
        big_muladd(&b, units[k].m, 0);
        while (frac--)
            big_div10(&b);
        *fits = big_u64(&b, bytes) && !(units[k].m == 1 && fraction);
        return 1;
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char text[256];
    if (size >= sizeof text)
        return 0;
    memcpy(text, data, size);
    text[size] = 0;
    struct gmg_limits a, b;
    char err[256] = "";
    int fits = 0;
    uint64_t want = 0;
    int known = reference(text, &fits, &want);
    if (gmg_limit_parse(text, &a, err, sizeof err) != 0) {
        if (!err[0])
            abort();
        if (known && fits && want) /* a value that fits is never refused */
            abort();
        return 0;
    }
    if (known && (!fits || a.dev[0].bytes != want)) /* the parser's bytes are the exact value's */
        abort();
    if (gmg_limit_parse(text, &b, err, sizeof err) != 0 || memcmp(&a, &b, sizeof a) != 0)
        abort();
    for (int i = 0; i < GMG_MAX_DEVICES; i++) {
        const struct gmg_limit *l = &a.dev[i];
        if (l->kind == GMG_LIMIT_PERCENT &&
            (l->pct_num == 0 || l->pct_den == 0 || (unsigned __int128)l->pct_num > (unsigned __int128)l->pct_den * 100))
            abort();
        if (l->kind == GMG_LIMIT_PERCENT && gmg_limit_resolve(l, 1ull << 40) > (1ull << 40))
            abort();
    }
    return 0;
}
