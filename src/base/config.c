/* config.c - see config.h. */
#define _GNU_SOURCE
#include "base/config.h"

#include "base/log.h"
#include "base/signame.h"

#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

struct gmg_config gmg_cfg = {
    .on_limit = GMG_ON_LIMIT_FAIL,
    .report = "stderr",
    .formats = GMG_FMT_TEXT,
    .signal = SIGUSR1,
    .stack_depth = 32,
    .log_level = GMG_LOG_INFO,
    .count_managed = 1,
    .metrics_interval = 15,
    .python = 1,
    .pools = 1,
};

/* A whole number's text starts with a digit: strtol would also take
 * leading white space (a tab, a newline) and a sign, which a setting never
 * has. */
static int first_digit(const char *v) { return v[0] >= '0' && v[0] <= '9'; }

/* The gpumemguard command's option that set `var` to `val`
 * (GPUMEMGUARD_CLI_OPTIONS, "GPUMEM_LIMIT=limit/HASH ..."), into opt; 0
 * when none did, or the variable has been set since to another value. */
static int cli_option(const char *var, const char *val, char *opt, size_t n)
{
    const char *list = getenv("GPUMEMGUARD_CLI_OPTIONS");
    size_t vl = strlen(var);
    for (const char *p = list; p && *p;) {
        const char *end = strchr(p, ' ');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len > vl + 1 && strncmp(p, var, vl) == 0 && p[vl] == '=') {
            const char *name = p + vl + 1, *slash = memchr(name, '/', len - vl - 1);
            size_t nl = slash ? (size_t)(slash - name) : len - vl - 1;
            char want[9];
            snprintf(want, sizeof want, "%08x", (unsigned)gmg_config_value_hash(val));
            if (slash && (len - vl - 1 - nl - 1 != 8 || strncmp(slash + 1, want, 8) != 0))
                return 0; /* set since, by someone else */
            if (nl >= n)
                return 0;
            memcpy(opt, name, nl);
            opt[nl] = 0;
            return 1;
        }
        p += len + (end != NULL);
    }
    return 0;
}

static int bad(char *err, unsigned len, const char *var, const char *val, const char *why, const char *accepted)
{
    char opt[64];
    if (cli_option(var, val, opt, sizeof opt)) /* the user typed the option, not the variable */
        snprintf(err, len, "--%s '%s' (%s) is not valid: %s. Accepted: %s.", opt, val, var, why, accepted);
    else
        snprintf(err, len, "%s='%s' is not valid: %s. Accepted: %s.", var, val, why, accepted);
    return -1;
}

static int parse_word(const char *val, const char *const *words, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(val, words[i]) == 0)
            return i;
    return -1;
}

void gmg_config_metrics_path(const char *tmpl, int pid, char *out, size_t n)
{
    size_t k = 0;
    for (const char *p = tmpl; *p && k + 24 < n; p++) {
        if (p[0] == '%' && p[1] == 'p') {
            k += (size_t)snprintf(out + k, n - k, "%d", pid);
            p++;
        } else {
            out[k++] = *p;
            if (p[0] == '%' && p[1] == '%')
                p++;
        }
    }
    out[k] = 0;
}

const char *gmg_path_dir(char *path)
{
    char *slash = strrchr(path, '/');
    if (!slash)
        return ".";
    if (slash == path)
        return "/";
    *slash = 0;
    return path;
}

/* GPUMEM_METRICS at start-up: its syntax. Whether the path can be written
 * (a missing directory, no permission, a directory in the file's place) is
 * the environment's, not the value's: said once, at the process's first
 * CUDA use (cluster/metrics.c), so that a process that never uses CUDA (a
 * shell under a job-wide LD_PRELOAD) prints nothing; each rewrite tries
 * again, since a deploy recipe may make the directory writable later. */
static int metrics_check(const char *v, char *why, size_t n)
{
    if (!*v) {
        snprintf(why, n, "empty");
        return -1;
    }
    if (strlen(v) >= sizeof gmg_cfg.metrics - 32 || v[strlen(v) - 1] == '/') {
        snprintf(why, n, "not a file path");
        return -1;
    }
    return gmg_config_bad_escape(v, GMG_METRICS_ESCAPES, why, n) ? -1 : 0;
}

int gmg_config_parse(const char *(*get)(const char *), struct gmg_config *c, char *err, unsigned errlen)
{
    const char *v;
    char why[256];

    if ((v = get("GPUMEM_LIMIT")) != NULL) {
        if (gmg_limit_parse(v, &c->limits, why, sizeof why) < 0)
            return bad(err, errlen, "GPUMEM_LIMIT", v, why, GMG_LIMIT_ACCEPTED);
        c->has_limit = 0;
        for (int i = 0; i < GMG_MAX_DEVICES; i++)
            if (c->limits.dev[i].kind != GMG_LIMIT_NONE)
                c->has_limit = 1;
    }
    if ((v = get("GPUMEM_ON_LIMIT")) != NULL) {
        static const char *const w[] = { "fail", "abort", "warn" };
        int k = parse_word(v, w, 3);
        if (k < 0)
            return bad(err, errlen, "GPUMEM_ON_LIMIT", v, "unknown action", "fail, abort, warn");
        c->on_limit = (enum gmg_on_limit)k;
    }
    if ((v = get("GPUMEM_REPORT")) != NULL) {
        if (!*v)
            return bad(err, errlen, "GPUMEM_REPORT", v, "empty", "stderr, stdout, none, or a file path (%p: pid, %n: dump number)");
        if (strlen(v) >= sizeof c->report - 16)
            return bad(err, errlen, "GPUMEM_REPORT", v, "path too long", "a path under 4080 bytes");
        /* a word mistyped is not taken for a file's name: STDOUT, '-' */
        static const char *const words[] = { "stderr", "stdout", "none" };
        for (int i = 0; i < 3; i++)
            if (strcasecmp(v, words[i]) == 0 && strcmp(v, words[i]) != 0)
                return bad(err, errlen, "GPUMEM_REPORT", v, "the words are lower case",
                           "stderr, stdout, none, or a file path (./STDOUT for a file of that name)");
        if (strcmp(v, "-") == 0)
            return bad(err, errlen, "GPUMEM_REPORT", v, "'-' names no stream here",
                       "stderr, stdout, none, or a file path (./- for a file of that name)");
        char why[48];
        if (gmg_config_bad_escape(v, GMG_REPORT_ESCAPES, why, sizeof why))
            return bad(err, errlen, "GPUMEM_REPORT", v, why,
                       "stderr, stdout, none, or a path where %p is the pid, %n the dump number, %% a percent sign");
        snprintf(c->report, sizeof c->report, "%s", v);
    }
    if ((v = get("GPUMEM_REPORT_FORMAT")) != NULL) {
        static const char *const w[] = { "text", "json", "folded", "html", "memviz", "trace" };
        int bits = 0;
        const char *p = v;
        for (;;) {
            const char *comma = strchr(p, ',');
            size_t n = comma ? (size_t)(comma - p) : strlen(p);
            char word[16];
            int k = -1;
            if (n > 0 && n < sizeof word) {
                memcpy(word, p, n);
                word[n] = 0;
                k = parse_word(word, w, 6);
            }
            if (k < 0)
                return bad(err, errlen, "GPUMEM_REPORT_FORMAT", v, n ? "unknown format" : "empty item",
                           "text, json, folded, html, memviz, trace, or a comma list of them");
            if (bits & (1 << k)) /* a list names a file per format by its extension */
                return bad(err, errlen, "GPUMEM_REPORT_FORMAT", v, "a format named twice",
                           "text, json, folded, html, memviz, trace, or a comma list of them, each once");
            bits |= 1 << k;
            if (!comma)
                break;
            p = comma + 1;
        }
        c->formats = bits;
    }
    if ((v = get("GPUMEM_SIGNAL")) != NULL) {
        const char *why_sig;
        int s = gmg_parse_signal_why(v, &why_sig);
        if (s < 0)
            return bad(err, errlen, "GPUMEM_SIGNAL", v, why_sig, GMG_SIGNAL_ACCEPTED);
        c->signal = s;
    }
    if ((v = get("GPUMEM_STACK_DEPTH")) != NULL) {
        char *end;
        errno = 0;
        long d = strtol(v, &end, 10);
        if (!*v || *end || !first_digit(v))
            return bad(err, errlen, "GPUMEM_STACK_DEPTH", v,
                       !*end && v[0] == '-' && v[1] ? "negative (0 turns stacks off)" : "not a whole number",
                       "0 (stacks off) to 256; default 32");
        if (errno == ERANGE || d > 256)
            return bad(err, errlen, "GPUMEM_STACK_DEPTH", v, "out of range (at most 256 frames)",
                       "0 (stacks off) to 256; default 32");
        c->stack_depth = (int)d;
    }
    if ((v = get("GPUMEM_LOG")) != NULL) {
        static const char *const w[] = { "quiet", "info", "debug" };
        int k = parse_word(v, w, 3);
        if (k < 0)
            return bad(err, errlen, "GPUMEM_LOG", v, "unknown level", "quiet, info, debug");
        c->log_level = k;
    }
    if ((v = get("GPUMEM_COUNT_MANAGED")) != NULL) {
        if (strcmp(v, "0") != 0 && strcmp(v, "1") != 0)
            return bad(err, errlen, "GPUMEM_COUNT_MANAGED", v, "not 0 or 1",
                       "1 (default: managed memory counts against the quota) or 0");
        c->count_managed = v[0] == '1';
    }
    if ((v = get("GPUMEM_GROUP")) != NULL) {
        size_t n = strlen(v);
        const char *why = !n ? "empty" : n > GMG_GROUP_NAME_MAX ? "longer than 64 characters"
                        : strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") != n
                            ? "a character other than a letter, digit, '.', '_' or '-'"
                        : v[0] == '.' ? "starts with '.'" : NULL;
        if (why)
            return bad(err, errlen, "GPUMEM_GROUP", v, why,
                       "a name of 1 to 64 letters, digits, '.', '_' or '-', not starting with '.' (job42, vllm.0)");
        snprintf(c->group, sizeof c->group, "%s", v);
    }
    if ((v = get("GPUMEM_METRICS")) != NULL && c->secure) {
        gmg_error("secure execution: GPUMEM_METRICS is not written (a path the user names, written with the "
                  "program's rights)");
    } else if (v) {
        char why_m[4400];
        if (metrics_check(v, why_m, sizeof why_m) < 0)
            return bad(err, errlen, "GPUMEM_METRICS", v, why_m,
                       "the path of a Prometheus text file (in node_exporter's textfile directory, *.prom), where "
                       "%p is the pid and %% a percent sign");
        snprintf(c->metrics, sizeof c->metrics, "%s", v);
    }
    if ((v = get("GPUMEM_METRICS_INTERVAL")) != NULL) {
        char *end;
        errno = 0;
        long sec = strtol(v, &end, 10);
        if (!*v || *end || !first_digit(v) || errno == ERANGE || sec < 1 || sec > 86400)
            return bad(err, errlen, "GPUMEM_METRICS_INTERVAL", v, "not a whole number of seconds from 1 to 86400",
                       "seconds between rewrites of GPUMEM_METRICS (default 15)");
        c->metrics_interval = (unsigned)sec;
    }
    if ((v = get("GPUMEM_PYTHON")) != NULL) {
        if (strcmp(v, "auto") != 0 && strcmp(v, "off") != 0)
            return bad(err, errlen, "GPUMEM_PYTHON", v, "unknown mode",
                       "auto (default: Python frames above the native ones when CPython 3.10-3.13 runs) or off");
        c->python = strcmp(v, "auto") == 0;
    }
    if ((v = get("GPUMEM_POOLS")) != NULL) {
        if (strcmp(v, "auto") != 0 && strcmp(v, "off") != 0)
            return bad(err, errlen, "GPUMEM_POOLS", v, "unknown mode",
                       "auto (default: segments of known caching pools, pool: lines and NVTX heaps are retained, "
                       "not leaks) or off (every live allocation at exit is a leak)");
        c->pools = strcmp(v, "auto") == 0;
    }
    if ((v = get("GPUMEM_EXITCODE")) != NULL) {
        char *end;
        errno = 0;
        long code = strtol(v, &end, 10);
        if (!*v || *end || !first_digit(v) || errno == ERANGE || code > 255)
            return bad(err, errlen, "GPUMEM_EXITCODE", v, "not a whole number from 0 to 255",
                       "0 (default: the program's own status) or 1-255, the status when leaks are found");
        c->exitcode = (int)code;
    }
    if ((v = get("GPUMEM_SUPPRESSIONS")) != NULL && c->secure) {
        gmg_error("secure execution: GPUMEM_SUPPRESSIONS is not read (a file the user names, read with the "
                  "program's rights); no leak is suppressed");
        c->suppressions_lost = 1;
    } else if (v) {
        char why[512];
        int got = *v ? gmg_suppressions_load(v, &c->suppressions, why, sizeof why) : -1;
        if (got == GMG_SUPPRESS_NOMEM) { /* not the file's fault: the program runs on, its leaks all reported */
            gmg_error("GPUMEM_SUPPRESSIONS=%s: %s: no leak is suppressed", v, why);
            c->suppressions_lost = 1;
        }
        else if (got < 0)
            return bad(err, errlen, "GPUMEM_SUPPRESSIONS", v, *v ? why : "empty",
                       "a readable file of 'leak:PATTERN' and 'pool:PATTERN' lines ('*' wildcards, '#' comments)");
    }
    return 0;
}

static const char *env(const char *name)
{
    return getenv(name);
}

/* Every setting of SPEC §3: any other GPUMEM_* variable is a typo. */
static const char *const known[] = {
    "GPUMEM_LIMIT", "GPUMEM_ON_LIMIT", "GPUMEM_REPORT", "GPUMEM_REPORT_FORMAT", "GPUMEM_SIGNAL",
    "GPUMEM_STACK_DEPTH", "GPUMEM_LOG", "GPUMEM_COUNT_MANAGED", "GPUMEM_EXITCODE", "GPUMEM_SUPPRESSIONS",
    "GPUMEM_PYTHON", "GPUMEM_METRICS", "GPUMEM_METRICS_INTERVAL", "GPUMEM_GROUP", "GPUMEM_POOLS",
};

/* Edit distance, for "did you mean" (names are short), letters compared
 * without case: GPUMEM_limit is GPUMEM_LIMIT mistyped. */
static unsigned distance(const char *a, const char *b)
{
    unsigned row[64], n = (unsigned)strlen(b);
    if (n >= 64 || strlen(a) >= 64)
        return 99;
    for (unsigned j = 0; j <= n; j++)
        row[j] = j;
    for (unsigned i = 1; a[i - 1]; i++) {
        unsigned diag = row[0];
        row[0] = i;
        for (unsigned j = 1; j <= n; j++) {
            unsigned up = row[j];
            unsigned best = diag + (toupper((unsigned char)a[i - 1]) != toupper((unsigned char)b[j - 1]));
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            if (up + 1 < best)
                best = up + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[n];
}

/* 1 when the words of `part` (after GPUMEM_) are the first or last words of
 * `whole`'s: REPORT_FILE -> REPORT, FORMAT -> REPORT_FORMAT, LOG_LEVEL -> LOG. */
static int word_part(const char *part, const char *whole)
{
    size_t p = strlen(part), w = strlen(whole);
    if (!p || p >= w)
        return 0;
    return (strncasecmp(whole, part, p) == 0 && whole[p] == '_') ||
           (strcasecmp(whole + w - p, part) == 0 && whole[w - p - 1] == '_');
}

/* The setting a name not known most likely meant, or NULL. */
static const char *nearest(const char *name)
{
    /* words people reach for that are no setting's */
    static const struct { const char *word, *setting; } synonyms[] = {
        { "VERBOSE", "GPUMEM_LOG" }, { "DEBUG", "GPUMEM_LOG" }, { "QUIET", "GPUMEM_LOG" },
        { "QUOTA", "GPUMEM_LIMIT" }, { "MAX", "GPUMEM_LIMIT" }, { "EXIT_CODE", "GPUMEM_EXITCODE" },
        { "SUPPRESS", "GPUMEM_SUPPRESSIONS" }, { "OUTPUT", "GPUMEM_REPORT" },
    };
    const char *suffix = name + 7, *best = NULL;
    for (size_t i = 0; i < sizeof synonyms / sizeof synonyms[0]; i++)
        if (strcasecmp(suffix, synonyms[i].word) == 0)
            return synonyms[i].setting;
    unsigned best_d = 99;
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        unsigned d = distance(suffix, known[i] + 7);
        if (d < best_d) {
            best_d = d;
            best = known[i];
        }
    }
    size_t len = strlen(suffix);
    if (best_d <= 3 && 2 * best_d <= len) /* a short name has few letters to get wrong */
        return best;
    /* words of one in the other, or the start of one (SIG, SUPP): the
     * shortest such setting; two as short, neither */
    best = NULL;
    int tie = 0;
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        const char *k = known[i] + 7;
        if (!word_part(k, suffix) && !word_part(suffix, k) && !(len >= 3 && strncasecmp(k, suffix, len) == 0))
            continue;
        if (!best || strlen(k) < strlen(best + 7)) {
            best = known[i];
            tie = 0;
        } else if (strlen(k) == strlen(best + 7)) {
            tie = 1;
        }
    }
    return tie ? NULL : best;
}

int gmg_config_check_names(char *const *envp, char *err, unsigned errlen)
{
    for (char *const *e = envp; e && *e; e++) {
        if (strncasecmp(*e, "GPUMEM_", 7) != 0) /* gpumem_limit too: a mistyped name, never ignored */
            continue;
        char name[128];
        size_t len = strcspn(*e, "=");
        if (len >= sizeof name)
            len = sizeof name - 1;
        memcpy(name, *e, len);
        name[len] = 0;
        int found = 0;
        for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
            found |= strcmp(name, known[i]) == 0;
        if (found)
            continue;
        const char *best = nearest(name);
        static const char why[] = "Every GPUMEM_* variable is read as a setting, so that a mistyped one is never "
                                  "ignored: unset it or correct its name";
        if (best) {
            snprintf(err, errlen, "%s is not a setting of the guard; did you mean %s? %s (the settings: "
                     "gpumemguard(1), ENVIRONMENT).", name, best, why);
        } else {
            char list[512];
            size_t k = 0;
            for (size_t i = 0; i < sizeof known / sizeof known[0] && k < sizeof list; i++)
                k += (size_t)snprintf(list + k, sizeof list - k, "%s%s", i ? ", " : "", known[i]);
            snprintf(err, errlen, "%s is not a setting of the guard; the settings are %s. %s.", name, list, why);
        }
        return -1;
    }
    return 0;
}

int gmg_config_load(char *err, unsigned errlen)
{
    extern char **environ;
    if (gmg_config_check_names(environ, err, errlen) < 0)
        return -1;
    gmg_cfg.secure = getauxval(AT_SECURE) != 0;
    return gmg_config_parse(env, &gmg_cfg, err, errlen);
}
