/*
 * view.c - see view.h. The file must be one well-formed JSON document (a
 * strict reader below: RFC 8259, nesting at most 512 deep) whose top-level
 * object says "tool": "gpumemguard" and a "schema" this command knows,
 * and whose parts the page reads have a report's types (report_shape);
 * anything else is refused with a message saying which, and status 1. The
 * page gets the report with its lists cut as the run's page cuts them.
 */
#define _GNU_SOURCE
#include "cli/view.h"

#include <gpumemguard.h>

#include "base/buf.h"
#include "base/page.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct reader {
    const char *p, *start, *end;
    const char *why;        /* the first error */
    int depth;
    /* the top-level object's "tool" and "schema" */
    int tool_ok, have_schema; /* have_schema: 1 a number, -1 a value of another type */
    double schema;
};

static void ws(struct reader *r)
{
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r'))
        r->p++;
}

static int fail(struct reader *r, const char *why)
{
    if (!r->why)
        r->why = why;
    return -1;
}

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* A string; its bytes (escapes kept as written) into [*s, *e). */
static int string(struct reader *r, const char **s, const char **e)
{
    if (r->p >= r->end || *r->p != '"')
        return fail(r, "a string expected");
    *s = ++r->p;
    while (r->p < r->end && *r->p != '"') {
        unsigned char c = (unsigned char)*r->p;
        if (c < 0x20)
            return fail(r, "a control character inside a string");
        if (c == '\\') {
            r->p++;
            if (r->p >= r->end)
                break;
            if (*r->p == 'u') {
                for (int i = 1; i <= 4; i++)
                    if (r->p + i >= r->end || hexval(r->p[i]) < 0)
                        return fail(r, "a bad \\u escape");
                r->p += 4;
            } else if (!strchr("\"\\/bfnrt", *r->p)) {
                return fail(r, "a bad escape");
            }
        } else if (c >= 0x80) {
            size_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
            if (!n || c > 0xF4 || r->p + n > r->end)
                return fail(r, "bytes that are not UTF-8");
            for (size_t i = 1; i < n; i++)
                if (((unsigned char)r->p[i] & 0xC0) != 0x80)
                    return fail(r, "bytes that are not UTF-8");
            r->p += n - 1;
        }
        r->p++;
    }
    if (r->p >= r->end)
        return fail(r, "a string not closed");
    *e = r->p++;
    return 0;
}

static int number(struct reader *r, double *out)
{
    const char *s = r->p;
    if (r->p < r->end && *r->p == '-')
        r->p++;
    if (r->p < r->end && *r->p == '0')
        r->p++;
    else if (r->p < r->end && *r->p >= '1' && *r->p <= '9')
        while (r->p < r->end && *r->p >= '0' && *r->p <= '9')
            r->p++;
    else
        return fail(r, "a value expected");
    if (r->p < r->end && *r->p == '.') {
        r->p++;
        if (r->p >= r->end || *r->p < '0' || *r->p > '9')
            return fail(r, "a bad number");
        while (r->p < r->end && *r->p >= '0' && *r->p <= '9')
            r->p++;
    }
    if (r->p < r->end && (*r->p == 'e' || *r->p == 'E')) {
        r->p++;
        if (r->p < r->end && (*r->p == '+' || *r->p == '-'))
            r->p++;
        if (r->p >= r->end || *r->p < '0' || *r->p > '9')
            return fail(r, "a bad number");
        while (r->p < r->end && *r->p >= '0' && *r->p <= '9')
            r->p++;
    }
    if (out) {
        char tmp[64];
        size_t n = (size_t)(r->p - s) < sizeof tmp - 1 ? (size_t)(r->p - s) : sizeof tmp - 1;
        memcpy(tmp, s, n);
        tmp[n] = 0;
        *out = strtod(tmp, NULL);
    }
    return 0;
}

static int literal(struct reader *r, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(r->end - r->p) < n || memcmp(r->p, word, n) != 0)
        return fail(r, "a value expected");
    r->p += n;
    return 0;
}

static int value(struct reader *r, int top);

static int object(struct reader *r, int top)
{
    r->p++;
    ws(r);
    if (r->p < r->end && *r->p == '}') {
        r->p++;
        return 0;
    }
    for (;;) {
        const char *ks, *ke;
        ws(r);
        if (string(r, &ks, &ke) < 0)
            return -1;
        ws(r);
        if (r->p >= r->end || *r->p != ':')
            return fail(r, "':' expected");
        r->p++;
        ws(r);
        size_t kn = (size_t)(ke - ks);
        if (top && kn == 4 && memcmp(ks, "tool", 4) == 0 && r->p < r->end && *r->p == '"') {
            const char *vs, *ve;
            if (string(r, &vs, &ve) < 0)
                return -1;
            r->tool_ok = ve - vs == 11 && memcmp(vs, "gpumemguard", 11) == 0;
        } else if (top && kn == 6 && memcmp(ks, "schema", 6) == 0 && r->p < r->end &&
                   (*r->p == '-' || (*r->p >= '0' && *r->p <= '9'))) {
            if (number(r, &r->schema) < 0)
                return -1;
            r->have_schema = 1;
        } else if (top && kn == 6 && memcmp(ks, "schema", 6) == 0) { /* a string, null ...: not a number */
            if (value(r, 0) < 0)
                return -1;
            r->have_schema = -1;
        } else if (value(r, 0) < 0) {
            return -1;
        }
        ws(r);
        if (r->p < r->end && *r->p == ',') {
            r->p++;
            continue;
        }
        if (r->p < r->end && *r->p == '}') {
            r->p++;
            return 0;
        }
        return fail(r, "',' or '}' expected");
    }
}

static int array(struct reader *r)
{
    r->p++;
    ws(r);
    if (r->p < r->end && *r->p == ']') {
        r->p++;
        return 0;
    }
    for (;;) {
        ws(r);
        if (value(r, 0) < 0)
            return -1;
        ws(r);
        if (r->p < r->end && *r->p == ',') {
            r->p++;
            continue;
        }
        if (r->p < r->end && *r->p == ']') {
            r->p++;
            return 0;
        }
        return fail(r, "',' or ']' expected");
    }
}

static int value(struct reader *r, int top)
{
    ws(r);
    if (r->p >= r->end)
        return fail(r, "a value expected");
    if (++r->depth > 512)
        return fail(r, "nesting deeper than 512");
    int rc;
    const char *s, *e;
    switch (*r->p) {
    case '{': rc = object(r, top); break;
    case '[': rc = array(r); break;
    case '"': rc = string(r, &s, &e); break;
    case 't': rc = literal(r, "true"); break;
    case 'f': rc = literal(r, "false"); break;
    case 'n': rc = literal(r, "null"); break;
    default: rc = number(r, NULL); break;
    }
    r->depth--;
    return rc;
}

/* ---- the checked document, read in place ----
 * Once the reader above has accepted the whole document, its values are
 * walked without bounds checks: every string is closed, every bracket
 * matched, and the top-level object closes it. */

static const char *sws(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    return p;
}

/* Just past the value at p. (strcspn: read_all ends the document with a
 * NUL, and a report of hundreds of megabytes is walked a few times.) */
static const char *skip(const char *p)
{
    if (*p == '"') {
        for (p++;; p += 2) {
            p += strcspn(p, "\"\\");
            if (*p == '"')
                return p + 1;
        }
    }
    if (*p == '{' || *p == '[') {
        int depth = 0;
        for (;;) {
            p += strcspn(p, "\"{}[]");
            if (*p == '"') {
                p = skip(p);
                continue;
            }
            if (*p == '{' || *p == '[')
                depth++;
            else if (--depth == 0)
                return p + 1;
            p++;
        }
    }
    while (!strchr(",]} \t\n\r", *p)) /* a number or a literal: an object or array follows it */
        p++;
    return p;
}

struct member {
    const char *k;  /* the key's bytes, escapes as written */
    size_t kn;
    const char *v;  /* its value */
};

/* The next member of an object: *pp at its '{' first, then where the last
 * call left it. 0 past the last. */
static int next_member(const char **pp, struct member *m)
{
    const char *p = sws(*pp);
    if (*p == '{' || *p == ',')
        p = sws(p + 1);
    if (*p == '}') {
        *pp = p + 1;
        return 0;
    }
    m->k = p + 1;
    p = skip(p);
    m->kn = (size_t)(p - 1 - m->k);
    m->v = sws(sws(p) + 1); /* past the ':' */
    *pp = skip(m->v);
    return 1;
}

/* The next element of an array, as next_member; *e its value. */
static int next_elem(const char **pp, const char **e)
{
    const char *p = sws(*pp);
    if (*p == '[' || *p == ',')
        p = sws(p + 1);
    if (*p == ']') {
        *pp = p + 1;
        return 0;
    }
    *e = p;
    *pp = skip(p);
    return 1;
}

/* Whether a key reads `want` once its escapes are decoded, as JSON.parse
 * reads it in the page ("liv\u0065" is "live"). */
static int key_is(const struct member *m, const char *want)
{
    const char *k = m->k, *e = m->k + m->kn;
    while (k < e) {
        unsigned c = (unsigned char)*k++;
        if (c == '\\') {
            char x = *k++;
            if (x == 'u') {
                c = 0;
                for (int i = 0; i < 4; i++)
                    c = c * 16 + (unsigned)hexval(*k++);
            } else {
                c = x == 'b' ? '\b' : x == 'f' ? '\f' : x == 'n' ? '\n' : x == 'r' ? '\r' : x == 't' ? '\t' : (unsigned char)x;
            }
        }
        if (!*want || c != (unsigned char)*want++)
            return 0;
    }
    return !*want;
}

/* ---- the shape of a report: what the page reads ----
 * The page draws whatever JSON it is given; a value of another type than a
 * report's (a number for a list, null for a frame) would make its script
 * throw, and a document without the report's parts would read as a clean
 * run. So every key the page reads is checked for its type, the ones every
 * report has for being there, down to each frame and sample. */

enum { T_NULL = 1, T_BOOL = 2, T_UINT = 4, T_INT = 8, T_NUM = 16, T_STR = 32, T_ARR = 64, T_OBJ = 128 };

static unsigned type_of(const char *v)
{
    switch (*v) {
    case '{': return T_OBJ;
    case '[': return T_ARR;
    case '"': return T_STR;
    case 't': case 'f': return T_BOOL;
    case 'n': return T_NULL;
    default: break;
    }
    const char *e = skip(v);
    for (const char *p = v; p < e; p++)
        if (*p == '.' || *p == 'e' || *p == 'E')
            return T_NUM;
    return *v == '-' ? T_INT | T_NUM : T_UINT | T_INT | T_NUM;
}

static const char *type_name(unsigned t)
{
    return t & T_OBJ ? "an object" : t & T_ARR ? "a list" : t & T_STR ? "a string" : t & T_BOOL ? "true or false" :
           t & T_NULL ? "null" : t & T_UINT ? "a whole number of 0 or more" : t & T_INT ? "a negative whole number" :
           "a number";
}

struct shape {
    char path[256];     /* where the check is, as jq writes it: .live[3].frames */
    size_t len;
    char why[512];      /* the first thing wrong */
};

static size_t enter(struct shape *c, const char *fmt, const char *key, size_t i)
{
    size_t was = c->len;
    int w = key ? snprintf(c->path + c->len, sizeof c->path - c->len, fmt, key)
                : snprintf(c->path + c->len, sizeof c->path - c->len, fmt, i);
    if (w > 0)
        c->len = c->len + (size_t)w < sizeof c->path ? c->len + (size_t)w : sizeof c->path - 1;
    return was;
}

static void leave(struct shape *c, size_t was)
{
    c->len = was;
    c->path[was] = 0;
}

static int wrong(struct shape *c, const char *what)
{
    if (!c->why[0])
        snprintf(c->why, sizeof c->why, "%s %s", c->len ? c->path : "the document", what);
    return -1;
}

/* "a string or null": the types of mask t, the loosest number only. */
static void types_said(char *out, size_t n, unsigned t)
{
    static const unsigned order[] = { T_OBJ, T_ARR, T_STR, T_BOOL, T_NUM, T_INT, T_UINT, T_NULL };
    out[0] = 0;
    for (size_t i = 0; i < sizeof order / sizeof *order; i++) {
        unsigned b = order[i];
        if (!(t & b) || ((b == T_INT || b == T_UINT) && (t & T_NUM)) || (b == T_UINT && (t & T_INT)))
            continue;
        size_t len = strlen(out);
        snprintf(out + len, n - len, "%s%s", len ? " or " : "", b == T_INT ? "a whole number" : type_name(b));
    }
}

/* A value of one of the types `t`: 0, or -1 with what is wrong. */
static int is(struct shape *c, const char *v, unsigned t)
{
    unsigned got = type_of(v);
    if (got & t)
        return 0;
    char want[96], what[160];
    types_said(want, sizeof want, t);
    snprintf(what, sizeof what, "is %s, where %s is expected", type_name(got), want);
    return wrong(c, what);
}

static int missing(struct shape *c, unsigned t)
{
    char want[96], what[160];
    types_said(want, sizeof want, t);
    snprintf(what, sizeof what, "is missing (%s is expected)", want);
    return wrong(c, what);
}

struct field {
    const char *key;
    unsigned types;
    int required;
};

/* The object at v: each field's value (the last of a repeated key, as
 * JSON.parse keeps it) into val[], checked for its types and, when
 * required, for being there. */
static int fields(struct shape *c, const char *v, const struct field *f, size_t n, const char **val)
{
    if (is(c, v, T_OBJ) < 0)
        return -1;
    for (size_t i = 0; i < n; i++)
        val[i] = NULL;
    const char *p = v;
    struct member m;
    while (next_member(&p, &m))
        for (size_t i = 0; i < n; i++)
            if (key_is(&m, f[i].key))
                val[i] = m.v;
    for (size_t i = 0; i < n; i++) {
        if (val[i] ? (type_of(val[i]) & f[i].types) != 0 : !f[i].required)
            continue; /* the path is written only for what is wrong */
        size_t was = enter(c, ".%s", f[i].key, 0);
        if (val[i])
            is(c, val[i], f[i].types);
        else
            missing(c, f[i].types);
        leave(c, was);
        return -1;
    }
    return 0;
}

#define FIELDS(c, v, f, val) fields(c, v, f, sizeof f / sizeof *f, val)

/* Each element of the list at v (NULL or null: none) through check(). */
static int each(struct shape *c, const char *v, int (*check)(struct shape *, const char *))
{
    if (!v || *v == 'n')
        return 0;
    const char *p = v, *e;
    for (size_t i = 0; next_elem(&p, &e); i++) {
        size_t was = enter(c, "[%zu]", NULL, i);
        int bad = check(c, e);
        leave(c, was);
        if (bad)
            return -1;
    }
    return 0;
}

/* check() of the value of member `key` (NULL: none), or each() of it. */
static int one_in(struct shape *c, const char *key, const char *v, int (*check)(struct shape *, const char *))
{
    size_t was = enter(c, ".%s", key, 0);
    int bad = v && *v != 'n' ? check(c, v) : 0;
    leave(c, was);
    return bad;
}

static int each_in(struct shape *c, const char *key, const char *v, int (*check)(struct shape *, const char *))
{
    size_t was = enter(c, ".%s", key, 0);
    int bad = each(c, v, check);
    leave(c, was);
    return bad;
}

static int frame(struct shape *c, const char *v)
{
    static const struct field f[] = {
        { "lang", T_STR, 0 }, { "function", T_STR | T_NULL, 1 }, { "file", T_STR | T_NULL, 0 },
        { "line", T_INT, 0 }, { "module", T_STR | T_NULL, 0 }, { "offset", T_STR, 0 }, { "pc", T_STR, 0 },
        { "unloaded", T_BOOL, 0 }, { "left_out", T_UINT, 0 },
    };
    const char *val[sizeof f / sizeof *f];
    return FIELDS(c, v, f, val);
}

static int group(struct shape *c, const char *v)
{
    static const struct field f[] = {
        { "bytes", T_UINT, 1 }, { "count", T_UINT, 1 }, { "api", T_STR, 1 }, { "device", T_INT, 1 },
        { "frames", T_ARR, 1 }, { "stack_id", T_UINT, 0 }, { "owner", T_STR | T_NULL, 0 },
        { "pool", T_STR | T_NULL, 0 }, { "regions_bytes", T_UINT, 0 },
    };
    const char *val[sizeof f / sizeof *f];
    return FIELDS(c, v, f, val) < 0 ? -1 : each_in(c, "frames", val[4], frame);
}

static int folded(struct shape *c, const char *v)
{
    static const struct field f[] = {
        { "groups", T_UINT, 1 }, { "bytes", T_UINT, 1 }, { "count", T_UINT, 1 }, { "regions_bytes", T_UINT, 0 },
    };
    const char *val[sizeof f / sizeof *f];
    return FIELDS(c, v, f, val);
}

static int peak(struct shape *c, const char *v)
{
    static const struct field f[] = {
        { "device", T_INT, 1 }, { "bytes", T_UINT, 1 }, { "groups", T_ARR, 1 }, { "groups_folded", T_OBJ, 0 },
    };
    const char *val[sizeof f / sizeof *f];
    return FIELDS(c, v, f, val) < 0 || each_in(c, "groups", val[2], group) < 0 ||
           one_in(c, "groups_folded", val[3], folded) < 0 ? -1 : 0;
}

static int device(struct shape *c, const char *v)
{
    static const struct field f[] = {
        { "device", T_INT, 1 }, { "limit", T_UINT, 1 }, { "in_use", T_UINT, 1 }, { "peak", T_UINT, 1 },
        { "refused", T_UINT, 0 }, { "driver_oom", T_UINT, 0 },
    };
    const char *val[sizeof f / sizeof *f];
    return FIELDS(c, v, f, val);
}

static int sample(struct shape *c, const char *v)
{
    if (is(c, v, T_ARR) < 0)
        return -1;
    const char *p = v, *e;
    size_t n = 0;
    while (next_elem(&p, &e))
        if (n++ < 2 && is(c, e, T_NUM) < 0)
            return -1;
    return n < 2 ? wrong(c, "is a sample without its time and bytes") : 0;
}

static int series(struct shape *c, const char *v)
{
    static const struct field f[] = { { "device", T_INT, 1 }, { "samples", T_ARR, 1 } };
    const char *val[sizeof f / sizeof *f];
    return FIELDS(c, v, f, val) < 0 ? -1 : each_in(c, "samples", val[1], sample);
}

static int event(struct shape *c, const char *v)
{
    static const struct field f[] = {
        { "t_ms", T_NUM, 1 }, { "kind", T_STR, 1 }, { "device", T_INT, 1 }, { "bytes", T_UINT, 0 },
    };
    const char *val[sizeof f / sizeof *f];
    return FIELDS(c, v, f, val);
}

static int timeline(struct shape *c, const char *v)
{
    static const struct field f[] = {
        { "devices", T_ARR, 1 }, { "group", T_ARR | T_NULL, 0 }, { "events", T_ARR, 0 },
        { "start_unix_ms", T_NUM, 0 }, { "interval_ms", T_NUM, 0 }, { "events_dropped", T_UINT, 0 },
    };
    const char *val[sizeof f / sizeof *f];
    if (FIELDS(c, v, f, val) < 0)
        return -1;
    return each_in(c, "devices", val[0], series) < 0 || each_in(c, "group", val[1], series) < 0 ||
           each_in(c, "events", val[2], event) < 0 ? -1 : 0;
}

static int block(struct shape *c, const char *v)
{
    if (is(c, v, T_ARR) < 0)
        return -1;
    const char *p = v, *e;
    size_t n = 0;
    while (next_elem(&p, &e))
        if (n++ < 4 && is(c, e, T_NUM) < 0)
            return -1;
    return n < 4 ? wrong(c, "is a block without its offset, bytes, allocations and granted bytes") : 0;
}

static int frag(struct shape *c, const char *v)
{
    static const struct field f[] = {
        { "device", T_INT, 1 }, { "live_allocations", T_UINT, 1 }, { "granted_bytes", T_UINT, 1 },
        { "span_start", T_STR, 1 }, { "span_end", T_STR, 1 }, { "span_bytes", T_UINT, 1 }, { "gaps", T_UINT, 1 },
        { "gap_bytes", T_UINT, 1 }, { "largest_gap", T_UINT, 1 }, { "span_utilisation", T_NUM, 1 },
        { "rounding_waste", T_UINT, 1 }, { "map", T_ARR, 0 }, { "map_merged", T_BOOL, 0 },
        { "device_free", T_UINT | T_NULL, 0 }, { "device_total", T_UINT | T_NULL, 0 },
        { "device_free_from", T_STR | T_NULL, 0 },
    };
    const char *val[sizeof f / sizeof *f];
    return FIELDS(c, v, f, val) < 0 ? -1 : each_in(c, "map", val[11], block);
}

static int totals(struct shape *c, const char *v)
{
    static const struct field f[] = {
        { "live_bytes", T_UINT, 1 }, { "live_allocations", T_UINT, 1 }, { "reclaimed_bytes", T_UINT, 0 },
        { "reclaimed_allocations", T_UINT, 0 }, { "refused", T_UINT, 0 }, { "unknown_frees", T_UINT, 0 },
        { "allocations_made", T_UINT, 0 }, { "retained_bytes", T_UINT, 0 }, { "retained_allocations", T_UINT, 0 },
        { "host_driver_oom", T_UINT, 0 },
    };
    const char *val[sizeof f / sizeof *f];
    return FIELDS(c, v, f, val);
}

static int owner(struct shape *c, const char *v)
{
    return is(c, v, T_OBJ);
}

static int text(struct shape *c, const char *v)
{
    return is(c, v, T_STR);
}

static int group_info(struct shape *c, const char *v)
{
    static const struct field f[] = { { "name", T_STR, 1 }, { "members", T_UINT, 1 }, { "devices", T_ARR, 0 } };
    const char *val[sizeof f / sizeof *f];
    return FIELDS(c, v, f, val) < 0 ? -1 : each_in(c, "devices", val[2], device);
}

/* The whole report: 0, or -1 with c->why saying what is wrong where. */
static int report_shape(struct shape *c, const char *json)
{
    static const struct field f[] = {
        { "tool", T_STR, 1 }, { "schema", T_NUM, 1 }, { "trigger", T_STR, 1 }, { "pid", T_INT, 1 },
        { "exe", T_STR | T_NULL, 1 }, { "devices", T_ARR, 1 }, { "totals", T_OBJ, 1 }, { "live", T_ARR, 1 },
        { "reclaimed", T_ARR, 0 }, { "address_ranges", T_ARR, 0 }, { "growth", T_ARR | T_NULL, 0 },
        { "live_folded", T_OBJ, 0 }, { "reclaimed_folded", T_OBJ, 0 }, { "address_ranges_folded", T_OBJ, 0 },
        { "growth_folded", T_OBJ, 0 }, { "at_peak", T_ARR | T_NULL, 0 }, { "at_peak_since_dump", T_ARR | T_NULL, 0 },
        { "group", T_OBJ | T_NULL, 0 }, { "timeline", T_OBJ | T_NULL, 0 }, { "fragmentation", T_ARR, 0 },
        { "owners", T_ARR | T_NULL, 0 }, { "incomplete", T_ARR, 0 }, { "version", T_STR, 0 }, { "dump", T_UINT, 0 },
        { "cmdline", T_STR | T_NULL, 0 }, { "dynamic_symbols_only", T_BOOL, 0 },
        { "debuginfo_error", T_STR | T_NULL, 0 },
    };
    const char *val[sizeof f / sizeof *f];
    if (FIELDS(c, json, f, val) < 0)
        return -1;
    if (one_in(c, "totals", val[6], totals) < 0 || each_in(c, "devices", val[5], device) < 0)
        return -1;
    for (size_t i = 0; i < 4; i++) /* live, reclaimed, address_ranges, growth and their folded rests */
        if (each_in(c, f[7 + i].key, val[7 + i], group) < 0 || one_in(c, f[11 + i].key, val[11 + i], folded) < 0)
            return -1;
    return each_in(c, "at_peak", val[15], peak) < 0 || each_in(c, "at_peak_since_dump", val[16], peak) < 0 ||
           one_in(c, "group", val[17], group_info) < 0 || one_in(c, "timeline", val[18], timeline) < 0 ||
           each_in(c, "fragmentation", val[19], frag) < 0 || each_in(c, "owners", val[20], owner) < 0 ||
           each_in(c, "incomplete", val[21], text) < 0 ? -1 : 0;
}

/* ---- the page's copy: each list cut as the run's page cuts it ---- */

struct cut {
    struct gmg_buf *b;
    const char *done;   /* the document is copied up to here */
};

/* A list of groups at `a` under `key`: past its GMG_PAGE_GROUPS first
 * (biggest) groups, the rest are summed into "KEY_folded" right after the
 * list, as report/json.c writes it for the run's page, to the byte. */
static void cut_list(struct cut *c, const char *a, const char *key)
{
    const char *p = a, *e, *kept = NULL;
    size_t n = 0;
    unsigned long long groups = 0, bytes = 0, count = 0, regions = 0;
    while (next_elem(&p, &e)) {
        if (n++ < GMG_PAGE_GROUPS) {
            kept = p;
            continue;
        }
        groups++;
        struct member m;
        const char *q = e;
        while (*e == '{' && next_member(&q, &m)) {
            unsigned long long *to = key_is(&m, "bytes") ? &bytes : key_is(&m, "count") ? &count :
                                     key_is(&m, "regions_bytes") ? &regions : NULL;
            if (to)
                *to += strtoull(m.v, NULL, 10);
        }
    }
    if (!groups)
        return;
    gmg_buf_put(c->b, c->done, (size_t)(kept - c->done));
    gmg_buf_printf(c->b, "],\"%s_folded\":{\"groups\":%llu,\"bytes\":%llu,\"count\":%llu", key, groups, bytes, count);
    if (regions)
        gmg_buf_printf(c->b, ",\"regions_bytes\":%llu", regions);
    gmg_buf_printf(c->b, "}");
    c->done = p; /* past the list's ']' */
}

/* The page's copy of the report at `json` (n bytes, checked). */
static void cut_report(struct gmg_buf *b, const char *json, size_t n)
{
    static const char *const lists[] = { "live", "reclaimed", "address_ranges", "growth" };
    struct cut c = { .b = b, .done = json };
    const char *p = sws(json);
    struct member m;
    while (next_member(&p, &m)) {
        for (size_t i = 0; i < sizeof lists / sizeof *lists; i++)
            if (*m.v == '[' && key_is(&m, lists[i]))
                cut_list(&c, m.v, lists[i]);
        if (*m.v == '[' && (key_is(&m, "at_peak") || key_is(&m, "at_peak_since_dump"))) {
            const char *q = m.v, *e;
            while (next_elem(&q, &e)) {
                const char *o = e;
                struct member g;
                while (*e == '{' && next_member(&o, &g))
                    if (*g.v == '[' && key_is(&g, "groups"))
                        cut_list(&c, g.v, "groups");
            }
        }
    }
    gmg_buf_put(b, c.done, (size_t)(json + n - c.done));
}

/* The most a report is read to, far above what a run writes (reports
 * group allocations by call stack): past it is no report. */
#define VIEW_MAX ((size_t)4 << 30)

/* The whole input; reading stops early once its first byte that is not
 * white space is not '{' (no report: the parser says so, whatever follows,
 * an endless pipe included). NULL with errno on failure (EFBIG past
 * VIEW_MAX). */
static char *read_all(const char *path, size_t *n)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, len = 0;
    int judged = 0;
    char *p = malloc(cap);
    while (p) {
        size_t got = fread(p + len, 1, cap - len, f);
        for (size_t i = len; !judged && i < len + got; i++)
            if (p[i] != ' ' && p[i] != '\t' && p[i] != '\n' && p[i] != '\r')
                judged = p[i] == '{' ? 1 : -1;
        len += got;
        if (len < cap || judged < 0) {
            if (ferror(f)) {
                free(p);
                p = NULL;
            }
            break;
        }
        char *q = cap < VIEW_MAX ? realloc(p, cap * 2) : NULL;
        if (!q) {
            free(p);
            p = NULL;
            errno = cap < VIEW_MAX ? ENOMEM : EFBIG;
            break;
        }
        p = q;
        cap *= 2;
    }
    int err = errno;
    if (f != stdin)
        fclose(f);
    if (p && len == cap) { /* room for the NUL that ends it (the walk after the check reads to it) */
        char *q = realloc(p, cap + 1);
        if (!q) {
            free(p);
            p = NULL;
            err = ENOMEM;
        }
        p = q;
    }
    if (p)
        p[len] = 0;
    errno = err;
    *n = len;
    return p;
}

static const char usage_text[] =
    "usage: gpumemguard view REPORT.json [-o OUT.html]\n"
    "  the HTML page of a JSON report (GPUMEM_REPORT_FORMAT=json); OUT.html (-o, --output) defaults to\n"
    "  REPORT.html beside it ('-' reads standard input or writes standard output)\n";

static int usage(void)
{
    fputs(usage_text, stderr);
    return 2;
}

int gmg_view_main(int argc, char **argv)
{
    const char *in = NULL, *out = NULL;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "-o") == 0 || strcmp(argv[i], "--output") == 0) {
            if (i + 1 >= argc)
                return fprintf(stderr, "gpumemguard view: %s needs a file name\n", argv[i]), usage();
            out = argv[++i];
        } else if (strncmp(argv[i], "--output=", 9) == 0) {
            out = argv[i] + 9;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage_text, stdout); /* asked for: on standard output, status 0 once written */
            if (fflush(stdout) == 0 && !ferror(stdout))
                return 0;
            fprintf(stderr, "gpumemguard view: cannot write to standard output: %s\n", strerror(errno));
            return 1;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return fprintf(stderr, "gpumemguard view: unknown option '%s'\n", argv[i]), usage();
        } else if (!in) {
            in = argv[i];
        } else {
            return fprintf(stderr, "gpumemguard view: one report at a time ('%s' is a second)\n", argv[i]), usage();
        }
    }
    if (!in)
        return fprintf(stderr, "gpumemguard view: missing REPORT.json\n"), usage();
    size_t n;
    char *json = read_all(in, &n);
    if (!json) {
        fprintf(stderr, "gpumemguard view: cannot read %s: %s\n", in, strerror(errno));
        return 1;
    }
    struct reader r = { .p = json, .start = json, .end = json + n };
    ws(&r);
    int ok = r.p < r.end && *r.p == '{' && value(&r, 1) == 0;
    if (ok) {
        ws(&r);
        if (r.p != r.end)
            ok = fail(&r, "text after the JSON document") == 0;
    }
    if (!ok) {
        if (!r.why)
            r.why = "a JSON object expected";
        fprintf(stderr, "gpumemguard view: %s is not a gpumemguard JSON report: not JSON (%s at byte %zu)\n", in,
                r.why, (size_t)(r.p - r.start));
        free(json);
        return 1;
    }
    if (!r.tool_ok || r.have_schema != 1) {
        fprintf(stderr, "gpumemguard view: %s is JSON but not a gpumemguard report (it has no %s); write one with "
                "GPUMEM_REPORT_FORMAT=json\n", in,
                !r.tool_ok ? "\"tool\": \"gpumemguard\"" : r.have_schema ? "\"schema\" that is a number" : "\"schema\"");
        free(json);
        return 1;
    }
    if (r.schema > GMG_REPORT_SCHEMA || r.schema < 1 || r.schema != (double)(long)r.schema) {
        fprintf(stderr, "gpumemguard view: %s is a report of schema %g, which this gpumemguard (%s) cannot read: it "
                "reads schema 1 to %d; use the gpumemguard that wrote it, or a newer one\n", in, r.schema,
                GPUMEMGUARD_VERSION, GMG_REPORT_SCHEMA);
        free(json);
        return 1;
    }
    struct shape c = { .len = 0 };
    if (report_shape(&c, json) < 0) {
        fprintf(stderr, "gpumemguard view: %s is not a whole gpumemguard report: %s\n", in, c.why);
        free(json);
        return 1;
    }
    /* the page the run writes: each list cut to its biggest groups */
    struct gmg_buf data = { 0 }, page = { 0 };
    cut_report(&data, json, n);
    free(json);
    if (!data.failed)
        gmg_page_write(&page, data.p, data.len);
    gmg_buf_free(&data);
    if (data.failed || page.failed) {
        fprintf(stderr, "gpumemguard view: out of memory\n");
        return 1;
    }
    char *def = NULL;
    if (!out) {
        if (strcmp(in, "-") == 0) {
            out = "-";
        } else {
            size_t len = strlen(in);
            const char *slash = strrchr(in, '/'), *dot = strrchr(in, '.');
            if (dot && (!slash || dot > slash + 1))
                len = (size_t)(dot - in);
            if (asprintf(&def, "%.*s.html", (int)len, in) < 0) {
                fprintf(stderr, "gpumemguard view: out of memory\n");
                gmg_buf_free(&page);
                return 1;
            }
            out = def;
        }
    }
    int rc = 0;
    struct stat sin, sout; /* the report read from a file, or from standard input redirected from one */
    if (strcmp(out, "-") != 0 && (strcmp(in, "-") != 0 ? stat(in, &sin) : fstat(STDIN_FILENO, &sin)) == 0 &&
        stat(out, &sout) == 0 && sin.st_dev == sout.st_dev && sin.st_ino == sout.st_ino) {
        /* the page over its own report: the report would be lost */
        fprintf(stderr, "gpumemguard view: %s is the report itself; the page would overwrite it: name another "
                "file with -o OUT.html\n", out);
        rc = 1;
    } else if (strcmp(out, "-") == 0) {
        if (fwrite(page.p, 1, page.len, stdout) != page.len || fflush(stdout) != 0) {
            fprintf(stderr, "gpumemguard view: cannot write standard output: %s\n", strerror(errno));
            rc = 1;
        }
    } else {
        /* mode 0600, as the run writes the same report and page (a program's
         * names and paths); a file that is there keeps its own mode */
        int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
        if (fd >= 0 && !f)
            close(fd);
        struct stat st;
        int regular = f && fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode);
        int ok = f && fwrite(page.p, 1, page.len, f) == page.len;
        int err = errno;
        if (f && fclose(f) != 0 && ok) {
            ok = 0;
            err = errno;
        }
        if (!ok) {
            fprintf(stderr, "gpumemguard view: cannot write %s: %s\n", out, strerror(err));
            if (regular)
                unlink(out); /* no page cut short (a device or FIFO is left alone) */
            rc = 1;
        } else {
            printf("%s\n", out);
        }
    }
    gmg_buf_free(&page);
    free(def);
    return rc;
}
