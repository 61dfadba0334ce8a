/*
 * config.h - the GPUMEM_* environment, read once at start-up (SPEC §3).
 * A bad value stops the process with a message naming the variable, the
 * value and what is accepted: a mistyped quota never means "no quota".
 */
#ifndef GMG_BASE_CONFIG_H
#define GMG_BASE_CONFIG_H

#include "base/limit_parse.h"
#include "base/suppress.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

enum gmg_on_limit { GMG_ON_LIMIT_FAIL, GMG_ON_LIMIT_ABORT, GMG_ON_LIMIT_WARN };

/* GPUMEM_GROUP: 1 to 64 of A-Z a-z 0-9 . _ - (it names a file in /dev/shm). */
#define GMG_GROUP_NAME_MAX 64

enum { GMG_FMT_TEXT = 1, GMG_FMT_JSON = 2, GMG_FMT_FOLDED = 4, GMG_FMT_HTML = 8, GMG_FMT_MEMVIZ = 16, GMG_FMT_TRACE = 32 };

struct gmg_config {
    struct gmg_limits limits;
    int has_limit;
    enum gmg_on_limit on_limit;
    char report[4096];      /* "stderr" or a path pattern with %p and %n */
    int formats;            /* GMG_FMT_* bits */
    int signal;             /* 0: none */
    int stack_depth;
    int log_level;
    int count_managed;      /* GPUMEM_COUNT_MANAGED, default 1 */
    int exitcode;           /* GPUMEM_EXITCODE: 0, or the status on leaks */
    struct gmg_suppressions suppressions;   /* GPUMEM_SUPPRESSIONS */
    int suppressions_lost;  /* out of memory while it was read: none applied */
    char metrics[4096];     /* GPUMEM_METRICS: a path, "" for none */
    unsigned metrics_interval;  /* GPUMEM_METRICS_INTERVAL, seconds (15) */
    int python;             /* GPUMEM_PYTHON: 1 auto (default), 0 off */
    int pools;              /* GPUMEM_POOLS: 1 auto (default), 0 off */
    char group[GMG_GROUP_NAME_MAX + 1]; /* GPUMEM_GROUP: a name, "" for none */
    /* Secure execution (AT_SECURE: a setuid program), set before parsing: no
     * file the user names is read (GPUMEM_SUPPRESSIONS) or written
     * (GPUMEM_METRICS) with the program's rights; each is said and left out. */
    int secure;
};

extern struct gmg_config gmg_cfg;

/* GPUMEM_METRICS's path for process pid: %p the pid, %% a percent sign
 * (the template is checked at start-up: no other escape gets here). */
/* The hash the gpumemguard command notes for each value it sets
 * (GPUMEMGUARD_CLI_OPTIONS), FNV-1a. */
static inline uint32_t gmg_config_value_hash(const char *val)
{
    uint32_t h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)val; *p; p++)
        h = (h ^ *p) * 16777619u;
    return h;
}

void gmg_config_metrics_path(const char *tmpl, int pid, char *out, size_t n);

/* The escapes a path setting takes after '%': GPUMEM_REPORT's (the pid,
 * the dump's number, a percent sign) and GPUMEM_METRICS's. */
#define GMG_REPORT_ESCAPES "pn%"
#define GMG_METRICS_ESCAPES "p%"

/* The first '%' of path that is no escape of `known` (another letter
 * after it, or none), or NULL when every one is; with a message for it in
 * why when one is not. Shared with the command, which leaves such a path
 * as typed for the library to name. */
static inline const char *gmg_config_bad_escape(const char *path, const char *known, char *why, size_t n)
{
    for (const char *p = path; *p; p++) {
        if (*p != '%')
            continue;
        if (!p[1] || !strchr(known, p[1])) {
            if (p[1])
                snprintf(why, n, "unknown %% escape '%%%.1s'", p + 1);
            else
                snprintf(why, n, "a %% at the end (%%%% is a percent sign)");
            return p;
        }
        p++;
    }
    return NULL;
}

/* The directory of a file's path, for checking it at start-up: "." for a
 * bare name, "/" for one at the root; otherwise path itself, cut at its
 * last '/'. */
const char *gmg_path_dir(char *path);

/* Parse the environment into gmg_cfg. On a bad value, writes the message
 * into err and returns -1 (the caller exits). */
int gmg_config_load(char *err, unsigned errlen);

/* Any GPUMEM_* name in envp that is not a setting: -1 and a message naming
 * it and the nearest setting. */
int gmg_config_check_names(char *const *envp, char *err, unsigned errlen);

/* The same from a getenv-like function, for tests. */
int gmg_config_parse(const char *(*get)(const char *), struct gmg_config *out, char *err, unsigned errlen);

#endif
