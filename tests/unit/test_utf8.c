/*
 * test_utf8.c - strings in JSON reports (base/buf.c): a well-formed UTF-8
 * sequence is kept as it is, and each byte of no well-formed sequence is
 * written as U+FFFD, as decoders show it (RFC 3629's table of well-formed
 * sequences: no overlong forms, no surrogates, nothing above U+10FFFF, no
 * sequence cut short), so that a report stays valid JSON whatever a path or
 * a name holds. Prints "utf8: N checks, M failed"; exits 1 on a failed check.
 */
#include "base/buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int checks, failed;
#define CHECK(cond, ...) do { checks++; if (!(cond)) { failed++; printf("FAIL %s:%d: ", __FILE__, __LINE__); \
    printf(__VA_ARGS__); printf("\n"); } } while (0)

static void json(const char *in, const char *want)
{
    struct gmg_buf b = { 0 };
    gmg_buf_json_str(&b, in);
    CHECK(b.p && strlen(want) == b.len && memcmp(b.p, want, b.len) == 0, "json of %s: got %.*s, want %s", in,
          (int)b.len, b.p ? b.p : "", want);
    gmg_buf_free(&b);
}

int main(void)
{
    static const struct { const char *s; size_t n; } seq[] = {
        { "a", 1 },
        { "\xc2\x80", 2 },             /* U+0080, the first two-byte */
        { "\xdf\xbf", 2 },             /* U+07FF */
        { "\xc0\x80", 0 },             /* overlong NUL */
        { "\xc1\xbf", 0 },             /* overlong */
        { "\xe0\xa0\x80", 3 },         /* U+0800 */
        { "\xe0\x9f\xbf", 0 },         /* overlong three-byte */
        { "\xe6\x95\xb0", 3 },         /* U+6570 */
        { "\xed\x9f\xbf", 3 },         /* U+D7FF, the last before the surrogates */
        { "\xed\xa0\x80", 0 },         /* U+D800, a surrogate */
        { "\xed\xbf\xbf", 0 },         /* U+DFFF, a surrogate */
        { "\xee\x80\x80", 3 },         /* U+E000 */
        { "\xef\xbf\xbf", 3 },         /* U+FFFF */
        { "\xf0\x90\x80\x80", 4 },     /* U+10000 */
        { "\xf0\x8f\xbf\xbf", 0 },     /* overlong four-byte */
        { "\xf4\x8f\xbf\xbf", 4 },     /* U+10FFFF */
        { "\xf4\x90\x80\x80", 0 },     /* above U+10FFFF */
        { "\xf5\x80\x80\x80", 0 },
        { "\xe6\x95", 0 },             /* cut short */
        { "\xe6\x95" "a", 0 },         /* a continuation missing */
        { "\x80", 0 },                 /* a continuation alone */
        { "\xff", 0 },
    };
    for (size_t i = 0; i < sizeof seq / sizeof seq[0]; i++) {
        size_t n = gmg_utf8_seq(seq[i].s);
        CHECK(n == seq[i].n, "sequence %zu: %zu bytes, want %zu", i, n, seq[i].n);
    }
    json("plain", "\"plain\"");
    json("q\"b\\c\n", "\"q\\\"b\\\\c\\u000a\"");
    json("\xe6\x95\xb0\xe6\x8d\xae", "\"\xe6\x95\xb0\xe6\x8d\xae\"");
    json("\xf0\x9f\x98\x80", "\"\xf0\x9f\x98\x80\"");
    json("a\xed\xa0\x80z", "\"a\\ufffd\\ufffd\\ufffdz\"");
    json("\xc0\x80", "\"\\ufffd\\ufffd\"");
    json("x\xe6\x95", "\"x\\ufffd\\ufffd\"");
    printf("utf8: %d checks, %d failed\n", checks, failed);
    return failed != 0;
}
