/*
 * test_suppress.c - GPUMEM_SUPPRESSIONS read at start-up (base/suppress.c
 * through base/config.c): a valid file, a line that is not valid (the
 * process stops: -1), and memory running out while the file is read
 * (strdup and fopen fail here on demand), and a path that cannot be read
 * as a file (a directory, a read that fails): the process stops; under
 * secure execution the file is not read, nor a metrics file kept. Out of
 * memory is not the file's fault:
 * the loader says so apart (GMG_SUPPRESS_NOMEM) and the configuration goes
 * on without suppressions instead of stopping the program. Prints
 * "suppress: N checks, M failed"; exits 1 on a failed check.
 */
#define _GNU_SOURCE
#include "base/config.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* suppress.c copies each pattern with strdup: this one, the program's own,
 * fails from the `fail_from`th call on (0: never). */
static int strdup_calls, fail_from;
char *strdup(const char *s)
{
    if (fail_from && ++strdup_calls >= fail_from) {
        errno = ENOMEM;
        return NULL;
    }
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    return p ? memcpy(p, s, n) : NULL;
}

/* fdopen allocates its FILE: this one fails with ENOMEM while fopen_nomem
 * is set, and is the next one's otherwise. */
static int fopen_nomem;
FILE *fdopen(int fd, const char *mode)
{
    static FILE *(*next)(int, const char *);
    if (fopen_nomem) {
        errno = ENOMEM;
        return NULL;
    }
    if (!next)
        next = (FILE * (*)(int, const char *))dlsym(RTLD_NEXT, "fdopen");
    return next(fd, mode);
}

static int checks, failed;
#define CHECK(cond, what) do { checks++; if (!(cond)) { failed++; printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, what); } } while (0)

static char path[64];
static int metrics_too; /* GPUMEM_METRICS set as well, to a file in /tmp */
static const char *get(const char *name)
{
    if (metrics_too && strcmp(name, "GPUMEM_METRICS") == 0)
        return "/tmp/gmg-test-metrics.prom";
    return strcmp(name, "GPUMEM_SUPPRESSIONS") == 0 ? path : NULL;
}

static void write_file(const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
        perror(path);
        exit(2);
    }
}

static void start(int from)
{
    strdup_calls = 0;
    fail_from = from;
}

int main(void)
{
    snprintf(path, sizeof path, "/tmp/gmg-test-supp-%d", (int)getpid());
    struct gmg_suppressions s;
    struct gmg_config c;
    char err[512];

    /* 1. a valid file: comments and blank lines skipped */
    write_file("# comment\nleak:alpha\n\n  leak:*beta*  # trailing\nleak:^gamma$\n");
    start(0);
    CHECK(gmg_suppressions_load(path, &s, err, sizeof err) == 0 && s.n == 3, "three patterns");
    CHECK(s.n == 3 && strcmp(s.patterns[1], "*beta*") == 0, "blanks and comments cut");
    gmg_suppressions_free(&s);

    /* 1b. blanks after the colon are layout: "leak: train_step" suppresses train_step; "leak:  " is no pattern */
    write_file("leak: alpha\npool:\tbeta\n");
    CHECK(gmg_suppressions_load(path, &s, err, sizeof err) == 0 && s.n == 1 && s.npools == 1
          && strcmp(s.patterns[0], "alpha") == 0 && strcmp(s.pools[0], "beta") == 0, "blanks after the colon cut");
    gmg_suppressions_free(&s);
    write_file("leak:alpha\nleak:   \n");
    CHECK(gmg_suppressions_load(path, &s, err, sizeof err) == -1 && strstr(err, "line 2"), "a pattern of blanks refused");

    /* 2. a line that is not valid: -1, named by its number */
    write_file("leak:alpha\nleek:beta\n");
    CHECK(gmg_suppressions_load(path, &s, err, sizeof err) == -1 && strstr(err, "line 2") && s.n == 0,
          "a bad line is refused with its number");
    memset(&c, 0, sizeof c);
    CHECK(gmg_config_parse(get, &c, err, sizeof err) == -1 && strstr(err, "GPUMEM_SUPPRESSIONS"),
          "and stops the process through the configuration");

    /* 2b. not a file: a directory (fopen opens it, reading fails) and a file
     * whose reading fails (EIO): refused, not taken as an empty file */
    char saved[sizeof path];
    memcpy(saved, path, sizeof path);
    static const char *const unreadable[] = { "/tmp", "/proc/self/mem" };
    for (size_t i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s", unreadable[i]);
        CHECK(gmg_suppressions_load(path, &s, err, sizeof err) == -1 && s.n == 0
              && strstr(err, i == 0 ? "a directory" : "cannot read it"), "a directory, a failed read: refused");
        memset(&c, 0, sizeof c);
        CHECK(gmg_config_parse(get, &c, err, sizeof err) == -1 && strstr(err, "GPUMEM_SUPPRESSIONS='")
              && strstr(err, unreadable[i]), "and stop the process through the configuration");
    }
    memcpy(path, saved, sizeof path);

    /* 2c. a FIFO (no writer: read, it would hold the program for ever) and
     * a device: refused at once, saying what they are */
    char fifo[80];
    snprintf(fifo, sizeof fifo, "/tmp/gmg-test-supp-fifo-%d", (int)getpid());
    unlink(fifo);
    CHECK(mkfifo(fifo, 0600) == 0, "a FIFO made");
    CHECK(gmg_suppressions_load(fifo, &s, err, sizeof err) == -1 && strstr(err, "a pipe or FIFO, not a file"),
          "a FIFO is refused, not waited on");
    unlink(fifo);
    CHECK(gmg_suppressions_load("/dev/zero", &s, err, sizeof err) == -1 && strstr(err, "a device or socket"),
          "a device is refused, not read for ever");
    CHECK(gmg_suppressions_load("/dev/null", &s, err, sizeof err) == 0 && s.n == 0 && s.npools == 0,
          "/dev/null is no suppressions, as CI templates say it");

    /* 2d. lines of any length: a long pattern kept whole, a long bad line
     * named by its own number */
    static char longer[6000];
    memcpy(longer, "leak:", 5);
    memset(longer + 5, 'a', 5000);
    snprintf(longer + 5005, sizeof longer - 5005, "\nleak:b\n");
    write_file(longer);
    start(0);
    CHECK(gmg_suppressions_load(path, &s, err, sizeof err) == 0 && s.n == 2 && strlen(s.patterns[0]) == 5000,
          "a pattern of 5,000 characters is one pattern");
    memcpy(longer, "leek:", 5);
    write_file(longer);
    CHECK(gmg_suppressions_load(path, &s, err, sizeof err) == -1 && strstr(err, "line 1:"),
          "a bad line of 5,005 characters is line 1");

    /* 3. out of memory on the second pattern: told apart, nothing kept */
    write_file("leak:alpha\nleak:beta\nleak:gamma\n");
    start(2);
    int r = gmg_suppressions_load(path, &s, err, sizeof err);
    CHECK(r == GMG_SUPPRESS_NOMEM && s.n == 0 && !s.patterns && strstr(err, "out of memory"),
          "out of memory is GMG_SUPPRESS_NOMEM, with nothing half kept");

    /* 4. the configuration goes on without suppressions (and says so) */
    start(1);
    memset(&c, 0, sizeof c);
    CHECK(gmg_config_parse(get, &c, err, sizeof err) == 0 && c.suppressions.n == 0 && c.suppressions_lost,
          "out of memory does not stop the program, and is remembered for the reports");

    /* 4b. fdopen itself out of memory: the same, not "cannot read it" */
    start(0);
    fopen_nomem = 1;
    r = gmg_suppressions_load(path, &s, err, sizeof err);
    memset(&c, 0, sizeof c);
    int rc = gmg_config_parse(get, &c, err, sizeof err);
    fopen_nomem = 0;
    CHECK(r == GMG_SUPPRESS_NOMEM && rc == 0 && c.suppressions_lost, "fdopen out of memory: goes on, remembered");

    /* 5. memory back: the same file loads */
    start(0);
    memset(&c, 0, sizeof c);
    CHECK(gmg_config_parse(get, &c, err, sizeof err) == 0 && c.suppressions.n == 3 && !c.suppressions_lost,
          "then loads whole");

    /* 6. secure execution (a setuid program): the file is not read, and the
     * program goes on without suppressions, remembered for the reports */
    memset(&c, 0, sizeof c);
    c.secure = 1;
    CHECK(gmg_config_parse(get, &c, err, sizeof err) == 0 && c.suppressions.n == 0 && c.suppressions_lost,
          "secure execution: not read, the program goes on, remembered");
    memset(&c, 0, sizeof c);
    c.secure = 1;
    metrics_too = 1;
    CHECK(gmg_config_parse(get, &c, err, sizeof err) == 0 && !c.metrics[0], "secure execution: no metrics file");
    metrics_too = 0;

    unlink(path);
    printf("suppress: %d checks, %d failed\n", checks, failed);
    return failed != 0;
}
