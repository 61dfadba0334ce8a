/*
 * folded.c - folded stacks for flame graphs: one line per live stack,
 * outermost frame first, "frame;frame;frame bytes", as flamegraph.pl and
 * speedscope read them. A frame is its function name, or module+offset;
 * a Python frame is "function (file:line)", and its stack's Python frames
 * come first (the Python call path, then the native one).
 */
#include "report/report.h"

#include "core/pyframes.h"
#include "core/stacks.h"

#include <stdio.h>
#include <string.h>

static void frame_name(struct gmg_buf *b, const struct gmg_frame_info *fi)
{
    char tmp[1400];
    if (fi->left_out) /* "[N Python frames left out]" */
        snprintf(tmp, sizeof tmp, "%s", fi->function);
    else if (fi->python) /* as py-spy writes them: "function (file:line)" */
        snprintf(tmp, sizeof tmp, "%s (%s:%d)", fi->function, fi->file, fi->line);
    else if (fi->function)
        snprintf(tmp, sizeof tmp, "%s", fi->function);
    else if (fi->module)
        snprintf(tmp, sizeof tmp, "%s+%#lx", fi->module, (unsigned long)fi->offset);
    else
        snprintf(tmp, sizeof tmp, "%#lx", (unsigned long)fi->pc);
    for (char *c = tmp; *c; c++)
        if (*c == ';' || *c == '\n' || (*c == ' ' && !fi->python))
            *c = '_'; /* the format's separators (the count follows the last space) */
    gmg_buf_printf(b, "%s", tmp);
}

/* "[pool OWNER]" for a pool's segment, "[OWNER]" for another library's
 * allocation (owners.c); the program's own lines have no such root. */
static void owner_root(struct gmg_buf *b, const struct gmg_group *g)
{
    char tmp[300];
    snprintf(tmp, sizeof tmp, g->pool ? "[pool %s]" : "[%s]", g->pool ? g->pool : g->owner);
    for (char *c = tmp; *c; c++)
        if (*c == ';' || *c == '\n')
            *c = '_';
    gmg_buf_printf(b, "%s", tmp);
}

/* Frames k = from, from - 1, ..., to (outermost first). */
static int run(const struct gmg_report *r, struct gmg_buf *b, const struct gmg_stack *s, int from, int to, int first)
{
    for (int k = from; k >= to; k--) {
        if (gmg_stack_is_internal(s->frames[k]))
            continue;
        struct gmg_frame_info fi;
        gmg_symbolize(r->sym, s->frames[k], gmg_stack_module(s, k), &fi);
        if (!first)
            gmg_buf_printf(b, ";");
        frame_name(b, &fi);
        first = 0;
    }
    return first;
}

void gmg_report_folded(const struct gmg_report *r, struct gmg_buf *b)
{
    for (size_t i = 0; i < r->ngroups; i++) {
        const struct gmg_group *g = &r->groups[i];
        if (!gmg_group_is_allocation(g->family))
            continue;
        const struct gmg_stack *s = gmg_stack_get(g->stack);
        int first = 1;
        if (g->pool || (g->owner && strcmp(g->owner, "program") != 0 && strcmp(g->owner, "unknown") != 0)) {
            owner_root(b, g); /* the summary by owner: a root frame per owner, and per pool */
            first = 0;
        }
        if (s) {
            /* A stack is its Python frames, then its native ones, each
             * innermost first: the Python call path comes first, from
             * <module> down, then the native path to the driver. */
            int np = 0;
            while (np < (int)s->depth && gmg_is_pyframe(s->frames[np]))
                np++;
            first = run(r, b, s, np - 1, 0, first);
            first = run(r, b, s, (int)s->depth - 1, np, first);
        }
        if (!first)
            gmg_buf_printf(b, ";");
        gmg_buf_printf(b, "%s_device%d %llu\n", gmg_family_name(g->family), g->device, (unsigned long long)g->bytes);
    }
}
