/* test_limit.c - table tests of the GPUMEM_LIMIT parser: every accepted
 * form with its exact value, every refused form. */
#include "base/limit_parse.h"

#include <stdio.h>
#include <string.h>

static int failures, checks;

static void ok(const char *in, int dev, enum gmg_limit_kind kind, unsigned long long bytes, unsigned long long total,
               unsigned long long resolved)
{
    struct gmg_limits l;
    char err[256] = "";
    checks++;
    int rc = gmg_limit_parse(in, &l, err, sizeof err);
    const struct gmg_limit *x = &l.dev[dev];
    unsigned long long got = gmg_limit_resolve(x, total);
    if (rc != 0 || x->kind != kind || (kind == GMG_LIMIT_BYTES && x->bytes != bytes) || got != resolved) {
        printf("FAIL accept '%s': rc %d (%s) kind %d bytes %llu resolved %llu, want kind %d bytes %llu resolved %llu\n",
               in, rc, err, x->kind, (unsigned long long)x->bytes, got, kind, bytes, resolved);
        failures++;
    }
}

static void refused(const char *in, const char *why)
{
    struct gmg_limits l;
    char err[256] = "";
    checks++;
    if (gmg_limit_parse(in, &l, err, sizeof err) == 0 || !strstr(err, why)) {
        printf("FAIL refuse '%s': got '%s', want a reason containing '%s'\n", in, err, why);
        failures++;
    }
}

int main(void)
{
    const unsigned long long K = 1024, M = K * K, G = M * K, T = G * K;
    ok("0", 0, GMG_LIMIT_NONE, 0, 0, 0);
    ok("1", 0, GMG_LIMIT_BYTES, 1, 0, 1);
    ok("1073741824", 0, GMG_LIMIT_BYTES, G, 0, G);
    ok("512B", 0, GMG_LIMIT_BYTES, 512, 0, 512);
    ok("4K", 0, GMG_LIMIT_BYTES, 4 * K, 0, 4 * K);
    ok("4M", 0, GMG_LIMIT_BYTES, 4 * M, 0, 4 * M);
    ok("4G", 0, GMG_LIMIT_BYTES, 4 * G, 0, 4 * G);
    ok("2T", 0, GMG_LIMIT_BYTES, 2 * T, 0, 2 * T);
    ok("4KiB", 0, GMG_LIMIT_BYTES, 4 * K, 0, 4 * K);
    ok("4MiB", 0, GMG_LIMIT_BYTES, 4 * M, 0, 4 * M);
    ok("4GiB", 0, GMG_LIMIT_BYTES, 4 * G, 0, 4 * G);
    ok("1TiB", 0, GMG_LIMIT_BYTES, T, 0, T);
    ok("4kB", 0, GMG_LIMIT_BYTES, 4000, 0, 4000);
    ok("4MB", 0, GMG_LIMIT_BYTES, 4000000, 0, 4000000);
    ok("4GB", 0, GMG_LIMIT_BYTES, 4000000000ull, 0, 4000000000ull);
    ok("1TB", 0, GMG_LIMIT_BYTES, 1000000000000ull, 0, 1000000000000ull);
    ok("1.5G", 0, GMG_LIMIT_BYTES, G + G / 2, 0, G + G / 2);
    ok("0.5K", 0, GMG_LIMIT_BYTES, 512, 0, 512);
    ok("1.0", 0, GMG_LIMIT_BYTES, 1, 0, 1); /* no fraction: 1.0 bytes is 1 */
    ok("2.25MB", 0, GMG_LIMIT_BYTES, 2250000, 0, 2250000);
    ok("18446744073709551615", 0, GMG_LIMIT_BYTES, 18446744073709551615ull, 0, 18446744073709551615ull);
    ok("50%", 0, GMG_LIMIT_PERCENT, 0, 8 * G, 4 * G);
    ok("100%", 0, GMG_LIMIT_PERCENT, 0, 8 * G, 8 * G);
    ok("12.5%", 0, GMG_LIMIT_PERCENT, 0, 8 * G, G);
    ok("0:4G,1:2G", 1, GMG_LIMIT_BYTES, 2 * G, 0, 2 * G);
    ok("0:4G,1:2G", 0, GMG_LIMIT_BYTES, 4 * G, 0, 4 * G);
    ok("0:4G,1:2G", 2, GMG_LIMIT_NONE, 0, 0, 0);
    ok("3:25%", 3, GMG_LIMIT_PERCENT, 0, 4 * G, G);
    ok("63:1M", 63, GMG_LIMIT_BYTES, M, 0, M);

    refused("", "empty");
    refused("1gb", "unknown unit 'gb'");
    refused("1g", "unknown unit 'g'");
    refused("1.5g", "unknown unit 'g'");
    refused("4 G", "unknown unit ' G'");
    refused(" 4G", "does not start with a digit");
    refused("4G ", "unknown unit 'G '");
    refused("-1", "negative");
    refused("-4G", "negative");
    refused("+4G", "does not start with a digit");
    refused("4GG", "unknown unit 'GG'");
    refused("4Gx", "unknown unit");
    refused("abc", "does not start with a digit");
    refused("1.", "no digits after");
    refused(".5G", "does not start with a digit");
    refused("1e9", "unknown unit 'e9'");
    refused("0x100", "unknown unit 'x100'");
    refused("18446744073709551616", "overflows");
    refused("16777216T", "overflows");
    refused("99999999999999999999999999999", "overflows");
    refused("101%", "over 100%");
    refused("0%", "0%");
    refused("50%%", "unknown unit");
    refused("0.1", "not a whole number of bytes");
    refused("1.5", "not a whole number of bytes");
    refused("2.5B", "not a whole number of bytes");
    refused("0.0001K", "less than one byte");
    refused("4G,2G", "device numbers");
    refused("0:4G,", "empty item at the end");
    refused("0:4G,,1:2G", "empty item");
    refused(",0:4G", "empty item");
    refused("0:4G,0:2G", "given twice");
    refused("0:4G,1", "no device number");
    refused(":4G", "no device number");
    refused("x:4G", "not a number");
    refused("64:4G", "out of range");
    refused("0:", "empty size");
    refused("0:4gb", "unknown unit 'gb'");
    refused("0:-1G", "negative");
    refused("1.0000000000000000001G", "too many decimals");
    /* a fraction never hides an overflow: the same number with and without it */
    refused("350000000000000000000.000000000000000000", "overflows");
    refused("350000000000000000000", "overflows");
    refused("35978900000000000000.000000000000000000TB", "overflows");
    refused("18446744073709551615.5", "not a whole number of bytes");
    refused("16777216.000000000000000000T", "overflows");
    ok("18446744073709551615.000000000000000000", 0, GMG_LIMIT_BYTES, 18446744073709551615ull, 0, 18446744073709551615ull);
    ok("16777215.5T", 0, GMG_LIMIT_BYTES, 16777215ull * (1ull << 40) + (1ull << 39), 0,
       16777215ull * (1ull << 40) + (1ull << 39));
    ok("0.5K", 0, GMG_LIMIT_BYTES, 512, 0, 512);
    ok("1.0", 0, GMG_LIMIT_BYTES, 1, 0, 1); /* no fraction: 1.0 bytes is 1 */
    /* percentages with every decimal: exact, never wrapped */
    ok("99.99999999999999999%", 0, GMG_LIMIT_PERCENT, 0, 100000000000000000ull, 99999999999999999ull);
    refused("99.999999999999999999%", "too many decimals");
    ok("100.000000000000000000%", 0, GMG_LIMIT_PERCENT, 0, 8 * G, 8 * G);
    refused("100.000000000000000001%", "over 100%");
    refused("0.000000000000000000%", "0%");

    printf("limit parser: %d checks, %d failed\n", checks, failures);
    return failures != 0;
}
