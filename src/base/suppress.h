/*
 * suppress.h - GPUMEM_SUPPRESSIONS (SPEC §3), base layer: the strict parser
 * of a LeakSanitizer-style suppressions file and the template match.
 *
 * A file holds lines "leak:PATTERN" (a leak to leave out) and "pool:PATTERN"
 * (allocations made under a matching frame are a caching pool's segments,
 * retained rather than leaked); '#' starts a comment, blank lines are
 * skipped, anything else is refused with file:line. A PATTERN matches a
 * string when its pieces between '*' occur in it in order; '^' at the start
 * anchors it to the start, '$' at the end to the end (LSan's TemplateMatch
 * grammar, matched with backtracking, which LSan's lacks).
 */
#ifndef GMG_BASE_SUPPRESS_H
#define GMG_BASE_SUPPRESS_H

#include <stddef.h>

struct gmg_suppressions {
    size_t n;
    char **patterns;        /* leak: lines, in file order */
    size_t npools;
    char **pools;           /* pool: lines, in file order */
};

/* 0 on success; -1 with the reason in err (the file is not valid: the
 * caller stops the process); GMG_SUPPRESS_NOMEM when memory ran out (the
 * file may be fine: the caller goes on without suppressions, and says so).
 * On failure *out is empty. */
#define GMG_SUPPRESS_NOMEM (-2)
int gmg_suppressions_load(const char *path, struct gmg_suppressions *out, char *err, unsigned errlen);
/* What a load kept, let go of; *s empty after. */
void gmg_suppressions_free(struct gmg_suppressions *s);

/* 1 when the template matches s (NULL or "" never matches). */
int gmg_template_match(const char *templ, const char *s);

#endif
