/*
 * view.c - see view.h. The file must be one well-formed JSON document (a
 * strict reader below: RFC 8259, nesting at most 512 deep) whose top-level
 * object says "tool": "gpumemguard" and a "schema" this command knows;
 * anything else is refused with a message saying which, and status 1.
 */
#define _GNU_SOURCE
#include "cli/view.h"

#include <gpumemguard.h>

#include "base/buf.h"
#include "base/page.h"

#include <errno.h>
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
    int tool_ok, have_schema;
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

/* Just past the value at p. */
static const char *skip(const char *p)
{
    if (*p == '"') {
        for (p++; *p != '"'; p++)
            if (*p == '\\')
                p++;
        return p + 1;
    }
    if (*p == '{' || *p == '[') {
        int depth = 0;
        for (;; p++) {
            if (*p == '"')
                p = skip(p) - 1;
            else if (*p == '{' || *p == '[')
                depth++;
            else if ((*p == '}' || *p == ']') && --depth == 0)
                return p + 1;
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
    if (!r.tool_ok || !r.have_schema) {
        fprintf(stderr, "gpumemguard view: %s is JSON but not a gpumemguard report (it has no %s); write one with "
                "GPUMEM_REPORT_FORMAT=json\n", in, !r.tool_ok ? "\"tool\": \"gpumemguard\"" : "\"schema\"");
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
        FILE *f = fopen(out, "wb");
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
