/* buf.c - see buf.h. */
#include "base/buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int reserve(struct gmg_buf *b, size_t more)
{
    if (b->failed)
        return 0;
    if (b->len + more + 1 <= b->cap)
        return 1;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + more + 1)
        cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
        b->failed = 1;
        return 0;
    }
    b->p = p;
    b->cap = cap;
    return 1;
}

void gmg_buf_put(struct gmg_buf *b, const char *s, size_t n)
{
    if (!reserve(b, n))
        return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = 0;
}

void gmg_buf_printf(struct gmg_buf *b, const char *fmt, ...)
{
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof small) {
        gmg_buf_put(b, small, (size_t)n);
        return;
    }
    if (!reserve(b, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

size_t gmg_utf8_seq(const char *p)
{
    const unsigned char *s = (const unsigned char *)p;
    unsigned char c = s[0];
    if (c < 0x80)
        return 1;
    size_t n;
    unsigned char lo = 0x80, hi = 0xbf; /* the second byte's range */
    if (c >= 0xc2 && c <= 0xdf)
        n = 2;
    else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        if (c == 0xe0)
            lo = 0xa0; /* no overlong form */
        else if (c == 0xed)
            hi = 0x9f; /* no surrogate */
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        if (c == 0xf0)
            lo = 0x90;
        else if (c == 0xf4)
            hi = 0x8f; /* at most U+10FFFF */
    } else
        return 0;
    if (s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xbf)
            return 0;
    return n;
}

size_t gmg_utf8_cut(const char *s, size_t n)
{
    size_t i = n;
    while (i > 0 && ((unsigned char)s[i - 1] & 0xc0) == 0x80) /* continuation bytes */
        i--;
    if (i == 0 || (unsigned char)s[i - 1] < 0xc0)
        return n; /* ends in ASCII (or stray continuation bytes, left as they are) */
    unsigned char lead = (unsigned char)s[i - 1];
    size_t len = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
    return n - (i - 1) < len ? i - 1 : n;
}

void gmg_buf_json_str(struct gmg_buf *b, const char *s)
{
    gmg_buf_put(b, "\"", 1);
    while (s && *s) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            char e[2] = { '\\', (char)c };
            gmg_buf_put(b, e, 2);
        } else if (c < 0x20) {
            gmg_buf_printf(b, "\\u%04x", c);
        } else if (c >= 0x80) {
            /* JSON is UTF-8 (RFC 8259): a byte of no well-formed sequence
             * (a path in another encoding) is U+FFFD, as decoders show it */
            size_t n = gmg_utf8_seq(s);
            if (n)
                gmg_buf_put(b, s, n);
            else
                gmg_buf_put(b, "\\ufffd", 6);
            s += n ? n : 1;
            continue;
        } else {
            gmg_buf_put(b, (const char *)&c, 1);
        }
        s++;
    }
    gmg_buf_put(b, "\"", 1);
}

/* A C1 control in UTF-8 (U+0080-U+009F, 0xc2 0x80-0x9f) at s? */
static int c1_at(const char *s)
{
    const unsigned char *u = (const unsigned char *)s;
    return u[0] == 0xc2 && u[1] >= 0x80 && u[1] <= 0x9f;
}

void gmg_buf_text_str(struct gmg_buf *b, const char *s)
{
    while (s && *s) {
        size_t n = 0, k;
        /* printable ASCII, whole UTF-8 characters but C1 controls, and
         * other bytes as the name has them (a file name in Latin-1) but
         * those of 0x80-0x9f, which an 8-bit terminal takes as C1 */
        while (s[n] && (unsigned char)s[n] >= 0x20 && s[n] != 0x7f && !c1_at(s + n) &&
               ((k = gmg_utf8_seq(s + n)) != 0 || (k = 1, (unsigned char)s[n] >= 0xa0)))
            n += k;
        gmg_buf_put(b, s, n);
        s += n;
        if (!*s)
            break;
        if (c1_at(s)) { /* U+0080-U+009F: a terminal may take U+009B as CSI */
            gmg_buf_printf(b, "\\x%02x\\x%02x", (unsigned char)s[0], (unsigned char)s[1]);
            s += 2;
            continue;
        }
        unsigned char c = (unsigned char)*s++;
        if (c == '\n')
            gmg_buf_put(b, "\\n", 2);
        else if (c == '\r')
            gmg_buf_put(b, "\\r", 2);
        else if (c == '\t')
            gmg_buf_put(b, "\\t", 2);
        else
            gmg_buf_printf(b, "\\x%02x", c);
    }
}

void gmg_buf_free(struct gmg_buf *b)
{
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

char *gmg_fmt_size(char *out, size_t n, unsigned long long bytes)
{
    static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
    if (bytes < 1024) {
        snprintf(out, n, "%llu byte%s", bytes, bytes == 1 ? "" : "s");
        return out;
    }
    double v = (double)bytes / 1024.0;
    int u = 0;
    while (v >= 1023.95 && u < 5) { /* 1048575 bytes read as 1.0 MiB, never as 1024.0 KiB */
        v /= 1024.0;
        u++;
    }
    snprintf(out, n, "%.1f %s (%llu bytes)", v, units[u], bytes);
    return out;
}
