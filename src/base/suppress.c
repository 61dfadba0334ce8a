/* suppress.c - see suppress.h. */
#define _GNU_SOURCE
#include "base/suppress.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The template as a glob over the whole string: without '^' it may start
 * anywhere (a leading '*'), without '$' end anywhere (a trailing '*'); '*'
 * matches any run of characters, everything else itself; the first '$' ends
 * the template, as in LeakSanitizer's TemplateMatch. That function matches
 * each piece at its first occurrence and never backtracks, so "foo$" misses
 * "foofoo"; this one backtracks to the last '*' seen (the classic two-pointer
 * glob: at most length(t) x length(s) steps, no recursion, no memory). */
int gmg_template_match(const char *t, const char *s)
{
    if (!s || !*s || !t)
        return 0;
    int start_anchor = *t == '^';
    if (start_anchor)
        t++;
    size_t tlen = strcspn(t, "$");
    int end_anchor = t[tlen] == '$';
    const char *tend = t + tlen;
    /* an unanchored start is a leading '*' */
    const char *star_t = start_anchor ? NULL : t, *star_s = s;
    while (*s) {
        if (t < tend && *t == '*') {
            star_t = ++t;
            star_s = s;
        } else if (t < tend && *t == *s) {
            t++;
            s++;
        } else if (t == tend && !end_anchor) {
            return 1; /* an unanchored end: the rest of s is free */
        } else if (star_t) {
            t = star_t; /* the last '*' takes one more character */
            s = ++star_s;
        } else {
            return 0;
        }
    }
    while (t < tend && *t == '*')
        t++;
    return t == tend;
}

/* Append a copy of pattern to *v (n entries, room for *cap); -1 when
 * memory ran out. */
static int add(char ***v, size_t *n, size_t *cap, const char *pattern)
{
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 16;
        char **np = realloc(*v, c * sizeof *np);
        if (!np)
            return -1;
        *v = np;
        *cap = c;
    }
    if (!((*v)[*n] = strdup(pattern)))
        return -1;
    (*n)++;
    return 0;
}

int gmg_suppressions_load(const char *path, struct gmg_suppressions *out, char *err, unsigned errlen)
{
    memset(out, 0, sizeof *out);
    /* O_NONBLOCK: a FIFO with no writer must not hold the program at
     * start-up; only a regular file is read */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        snprintf(err, errlen, "cannot read it (%s)", strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    struct stat null;
    if (S_ISCHR(st.st_mode) && stat("/dev/null", &null) == 0 && S_ISCHR(null.st_mode) && st.st_rdev == null.st_rdev) {
        close(fd); /* /dev/null: no suppressions, as CI templates say it */
        return 0;
    }
    const char *what = S_ISDIR(st.st_mode)    ? "a directory, not a file"
                       : S_ISFIFO(st.st_mode) ? "a pipe or FIFO, not a file: every guarded process reads the file, and "
                                                "a pipe gives its text to one of them only (the gpumemguard command "
                                                "copies it to a file for its program: --suppressions <(...))"
                       : !S_ISREG(st.st_mode) ? "a device or socket, not a file"
                                              : NULL;
    if (what) {
        snprintf(err, errlen, "%s", what);
        close(fd);
        return -1;
    }
    FILE *f = fdopen(fd, "r");
    if (!f) {
        int e = errno;
        close(fd);
        if (e == ENOMEM) { /* fdopen's own buffer */
            snprintf(err, errlen, "out of memory while opening it");
            return GMG_SUPPRESS_NOMEM;
        }
        snprintf(err, errlen, "cannot read it (%s)", strerror(e));
        return -1;
    }
    char *line = NULL;
    size_t linecap = 0;
    unsigned lineno = 0;
    size_t cap = 0, pcap = 0;
    int ret = -1;
    for (;;) {
        errno = 0;
        if (getline(&line, &linecap, f) < 0) /* a line of any length */
            break;
        lineno++;
        char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        p[strcspn(p, "#\r\n")] = 0;
        size_t len = strlen(p);
        while (len && (p[len - 1] == ' ' || p[len - 1] == '\t'))
            p[--len] = 0;
        if (!len)
            continue;
        int pool = strncmp(p, "pool:", 5) == 0;
        char *pat = p + 5; /* blanks after the colon are layout ("leak: main"), no name begins with one */
        while (*pat == ' ' || *pat == '\t')
            pat++;
        if ((!pool && strncmp(p, "leak:", 5) != 0) || !*pat) {
            snprintf(err, errlen, "line %u: '%.200s' is not 'leak:PATTERN' or 'pool:PATTERN'", lineno, p);
            goto fail;
        }
        if (add(pool ? &out->pools : &out->patterns, pool ? &out->npools : &out->n, pool ? &pcap : &cap, pat))
            goto nomem;
    }
    if (errno == ENOMEM && !ferror(f))
        goto nomem; /* getline's own buffer */
    if (ferror(f)) { /* not the end of the file: a read failed (EIO) */
        snprintf(err, errlen, "cannot read it (%s)", strerror(errno));
        goto fail;
    }
    free(line);
    fclose(f);
    return 0;
nomem:
    snprintf(err, errlen, "out of memory while reading it (line %u)", lineno);
    ret = GMG_SUPPRESS_NOMEM;
fail:
    free(line);
    fclose(f);
    gmg_suppressions_free(out);
    return ret;
}

void gmg_suppressions_free(struct gmg_suppressions *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->patterns[i]);
    free(s->patterns);
    for (size_t i = 0; i < s->npools; i++)
        free(s->pools[i]);
    free(s->pools);
    memset(s, 0, sizeof *s);
}
