/*
 * facts.c - what a report says of itself, for every format and the
 * model alike: the names of triggers and incomplete kinds, which groups are
 * allocations and their order, the leaks, whether an exit is clean, what it lacks. It calls
 * no format and no part of the model's walk, so that the formats (which
 * read these) and the model never call each other round a circle.
 */
#include "report/report.h"

#include "core/ranges.h"

const char *gmg_trigger_name(enum gmg_trigger t)
{
    switch (t) {
    case GMG_TRIGGER_EXIT: return "exit";
    case GMG_TRIGGER_SIGNAL: return "signal";
    case GMG_TRIGGER_REFUSAL: return "refusal";
    case GMG_TRIGGER_FATAL: return "fatal_signal";
    default: return "request";
    }
}

int gmg_group_is_allocation(int family)
{
    return !gmg_family_is_range(family);
}

int gmg_group_by_key(const void *a, const void *b)
{
    const struct gmg_group *x = a, *y = b;
    if (x->stack != y->stack)
        return x->stack < y->stack ? -1 : 1;
    if (x->family != y->family)
        return x->family < y->family ? -1 : 1;
    return x->device < y->device ? -1 : x->device > y->device;
}

int gmg_group_by_bytes(const void *a, const void *b)
{
    const struct gmg_group *x = a, *y = b;
    if (x->bytes != y->bytes)
        return x->bytes > y->bytes ? -1 : 1;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return gmg_group_by_key(a, b);
}

uint64_t gmg_untracked_ranges(const struct gmg_track_lost *l)
{
    uint64_t n = 0;
    for (int f = 0; f < GMG_FAM_COUNT; f++)
        if (gmg_family_is_range(f))
            n += l->untracked_by_family[f];
    return n < l->untracked_allocs ? n : l->untracked_allocs; /* each read on its own */
}

uint64_t gmg_report_leaks(const struct gmg_report *r)
{
    /* reclaimed ones the guard could not list (out of memory) are leaks as
     * much as the listed ones: no stack, so no suppression can match them */
    return r->live_allocs + r->reclaimed_allocs + r->lost.unlisted_allocs + r->untracked_live;
}

int gmg_report_clean(const struct gmg_report *r)
{
    return r->trigger == GMG_TRIGGER_EXIT && !gmg_report_leaks(r) && !r->refused && !r->driver_oom && !r->unknown_frees &&
           !r->any_suppressed && !r->retained_allocs && !gmg_report_incomplete(r);
}

const char *gmg_incomplete_name(int i)
{
    static const char *const names[GMG_INCOMPLETE_KINDS] = { "untracked", "unlisted", "groups", "suppressions",
                                                             "fragmentation", "names", "stacks", "contexts" };
    return i >= 0 && i < GMG_INCOMPLETE_KINDS ? names[i] : "?";
}

const char *gmg_report_dynamic_only(const struct gmg_report *r)
{
    const char *why;
    return gmg_symbolizer_dynamic_only(r->sym, &why) > r->sym_dynamic0 ? why : NULL;
}

unsigned gmg_report_incomplete(const struct gmg_report *r)
{
    unsigned inc = r->incomplete;
    if (r->sym ? gmg_symbolizer_lost(r->sym) > r->sym_lost0 : r->ngroups + r->nreclaimed + r->ngrowth > 0)
        inc |= GMG_INCOMPLETE_NAMES;
    return inc;
}
