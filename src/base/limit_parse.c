/* limit_parse.c - see limit_parse.h. */
#include "base/limit_parse.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

typedef unsigned __int128 u128;

static int fail(char *err, unsigned len, const char *fmt, ...)
{
    if (err && len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, len, fmt, ap);
        va_end(ap);
    }
    return -1;
}

struct unit { const char *name; uint64_t mult; };

static const struct unit units[] = {
    { "", 1 }, { "B", 1 },
    { "K", 1ull << 10 }, { "M", 1ull << 20 }, { "G", 1ull << 30 }, { "T", 1ull << 40 },
    { "KiB", 1ull << 10 }, { "MiB", 1ull << 20 }, { "GiB", 1ull << 30 }, { "TiB", 1ull << 40 },
    { "kB", 1000ull }, { "MB", 1000000ull }, { "GB", 1000000000ull }, { "TB", 1000000000000ull },
};

/* Parse one size in s[0..n). The value is ip + fnum / den (den = 10^frac),
 * kept apart so that no digit string, however long, can wrap a counter: ip
 * is refused past 2^64 (a size at least ip bytes, or a percentage over 100,
 * could not fit anyway), fnum < den <= 10^18, and ip * unit + fnum * unit /
 * den stays below 2^128 for every unit. */
static int parse_size(const char *s, size_t n, struct gmg_limit *out, char *err, unsigned errlen)
{
    size_t i = 0;
    u128 ip = 0, fnum = 0, den = 1;
    int digits = 0, frac = 0;
    if (n == 0)
        return fail(err, errlen, "empty size");
    if (s[0] == '-')
        return fail(err, errlen, "negative size '%.*s'", (int)n, s);
    while (i < n && s[i] >= '0' && s[i] <= '9') {
        ip = ip * 10 + (u128)(s[i] - '0');
        if (ip > UINT64_MAX)
            return fail(err, errlen, "size '%.*s' overflows 64 bits", (int)n, s);
        i++;
        digits++;
    }
    if (digits == 0)
        return fail(err, errlen, "size '%.*s' does not start with a digit", (int)n, s);
    if (i < n && s[i] == '.') {
        i++;
        while (i < n && s[i] >= '0' && s[i] <= '9') {
            if (frac >= 18)
                return fail(err, errlen, "size '%.*s' has too many decimals", (int)n, s);
            fnum = fnum * 10 + (u128)(s[i] - '0');
            den *= 10;
            i++;
            frac++;
        }
        if (frac == 0)
            return fail(err, errlen, "size '%.*s' has a '.' with no digits after it", (int)n, s);
        while (den > 1 && fnum % 10 == 0) { /* 1.50 is 1.5 */
            fnum /= 10;
            den /= 10;
        }
    }
    const char *u = s + i;
    size_t ulen = n - i;
    if (ulen == 1 && u[0] == '%') {
        /* percent = ip + fnum / den, must be in (0, 100] */
        if (ip == 0 && fnum == 0)
            return fail(err, errlen, "0%% is not a quota (use 0 for no limit)");
        if (ip > 100 || (ip == 100 && fnum))
            return fail(err, errlen, "percentage '%.*s' is over 100%%", (int)n, s);
        u128 num = ip * den + fnum; /* <= 100 * 10^18: may not fit 64 bits */
        if (num > UINT64_MAX)
            return fail(err, errlen, "percentage '%.*s' has too many decimals", (int)n, s);
        out->kind = GMG_LIMIT_PERCENT;
        out->pct_num = (uint64_t)num;
        out->pct_den = (uint64_t)den;
        return 0;
    }
    for (size_t k = 0; k < sizeof units / sizeof units[0]; k++) {
        if (strlen(units[k].name) != ulen || memcmp(units[k].name, u, ulen) != 0)
            continue;
        if (units[k].mult == 1 && fnum) /* a byte is not divided: what would "1.5" bytes be? */
            return fail(err, errlen, "size '%.*s' is not a whole number of bytes", (int)n, s);
        u128 bytes = ip * units[k].mult + fnum * units[k].mult / den;
        if (bytes > UINT64_MAX)
            return fail(err, errlen, "size '%.*s' overflows 64 bits", (int)n, s);
        out->kind = bytes ? GMG_LIMIT_BYTES : GMG_LIMIT_NONE;
        out->bytes = (uint64_t)bytes;
        if (bytes == 0 && (ip || fnum))
            return fail(err, errlen, "size '%.*s' is less than one byte", (int)n, s);
        return 0;
    }
    return fail(err, errlen, "unknown unit '%.*s' in '%.*s'", (int)ulen, u, (int)n, s);
}

int gmg_limit_parse(const char *text, struct gmg_limits *out, char *err, unsigned errlen)
{
    memset(out, 0, sizeof *out);
    if (!text)
        return 0;
    size_t len = strlen(text);
    if (len == 0)
        return fail(err, errlen, "empty value");
    if (!memchr(text, ':', len)) {
        if (memchr(text, ',', len))
            return fail(err, errlen, "a list needs device numbers (0:4G,1:2G)");
        return parse_size(text, len, &out->dev[0], err, errlen);
    }
    out->per_device = 1;
    int seen[GMG_MAX_DEVICES] = { 0 };
    const char *p = text, *end = text + len;
    while (p <= end) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        const char *item_end = comma ? comma : end;
        if (item_end == p)
            return fail(err, errlen, "empty item in the list");
        const char *colon = memchr(p, ':', (size_t)(item_end - p));
        if (!colon)
            return fail(err, errlen, "item '%.*s' has no device number (0:4G)", (int)(item_end - p), p);
        if (colon == p)
            return fail(err, errlen, "item '%.*s' has no device number", (int)(item_end - p), p);
        unsigned dev = 0;
        for (const char *d = p; d < colon; d++) {
            if (*d < '0' || *d > '9')
                return fail(err, errlen, "device '%.*s' is not a number", (int)(colon - p), p);
            dev = dev * 10 + (unsigned)(*d - '0');
            if (dev >= GMG_MAX_DEVICES)
                return fail(err, errlen, "device '%.*s' is out of range (0-%d)", (int)(colon - p), p,
                            GMG_MAX_DEVICES - 1);
        }
        if (seen[dev]++)
            return fail(err, errlen, "device %u is given twice", dev);
        if (parse_size(colon + 1, (size_t)(item_end - colon - 1), &out->dev[dev], err, errlen) < 0)
            return -1;
        if (!comma)
            break;
        p = comma + 1;
        if (p == end)
            return fail(err, errlen, "empty item at the end of the list");
    }
    return 0;
}

uint64_t gmg_limit_resolve(const struct gmg_limit *l, uint64_t total)
{
    switch (l->kind) {
    case GMG_LIMIT_BYTES:
        return l->bytes;
    case GMG_LIMIT_PERCENT: {
        u128 v = (u128)total * l->pct_num / ((u128)l->pct_den * 100);
        return v ? (uint64_t)v : 1; /* a percentage never means "no limit" */
    }
    default:
        return 0;
    }
}
