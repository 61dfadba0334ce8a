/*
 * folded.c - folded stacks for flame graphs: one line per live stack,
 * outermost frame first, "frame;frame;frame bytes", as flamegraph.pl and
 * speedscope read them. A frame is its function name, or module+offset;
 * a Python frame is "function (file:line)", and its stack's Python frames
 * come first (the Python call path, then the native one).
 */
#include "report/report.h"

#include "base/buf.h"
#include "core/heaps.h"
#include "core/pyframes.h"
#include "core/stacks.h"

#include <stdio.h>
#include <string.h>

/* A name as the format takes it: its separators (';', a newline, and for a
 * native frame a blank: the count follows the last one) and other control
 * characters (which no SVG may hold) as '_', and a byte
 * of no well-formed UTF-8 sequence as U+FFFD, as the JSON report writes it
 * (flame graph tools read the file as UTF-8, and refuse it or write a
 * broken SVG otherwise). */
static void put_name(struct gmg_buf *b, const char *s, int blanks)
{
    for (const char *p = s; *p;) {
        size_t n = gmg_utf8_seq(p);
        if (!n) {
            gmg_buf_put(b, "\xef\xbf\xbd", 3);
            p++;
        } else if (*p == ';' || (unsigned char)*p < 0x20 || *p == 0x7f || (*p == ' ' && !blanks)) {
            gmg_buf_put(b, "_", 1);
            p++;
        } else {
            gmg_buf_put(b, p, n);
            p += n;
        }
    }
}

static void frame_name(struct gmg_buf *b, const struct gmg_frame_info *fi)
{
    char tmp[1400];
    int w;
    if (fi->left_out) /* "[N Python frames left out]" */
        w = snprintf(tmp, sizeof tmp, "%s", fi->function);
    else if (fi->python) /* as py-spy writes them: "function (file:line)" */
        w = snprintf(tmp, sizeof tmp, "%s (%s:%d)", fi->function, fi->file, fi->line);
    else if (fi->function)
        w = snprintf(tmp, sizeof tmp, "%s", fi->function);
    else if (fi->module)
        w = snprintf(tmp, sizeof tmp, "%s+%#lx", fi->module, (unsigned long)fi->offset);
    else
        w = snprintf(tmp, sizeof tmp, "%#lx", (unsigned long)fi->pc);
    if (w >= (int)sizeof tmp) { /* cut: never inside a character, and said */
        size_t len = gmg_utf8_cut(tmp, sizeof tmp - 4);
        memcpy(tmp + len, "...", 4);
    }
    put_name(b, tmp, fi->python);
}

/* "[pool OWNER]" for a pool's segment, "[OWNER]" for another library's
 * allocation (owners.c); the program's own lines have no such root. */
static void owner_root(struct gmg_buf *b, const struct gmg_group *g)
{
    gmg_buf_put(b, g->pool ? "[pool " : "[", g->pool ? 6 : 1);
    put_name(b, g->pool ? g->pool : g->owner, 1);
    gmg_buf_put(b, "]", 1);
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
        /* every line adds into the total: a pool's segment that NVTX regions
         * lie in carries what the regions (lines of their own) do not hold,
         * as the report's retained bytes do */
        uint64_t bytes = g->bytes - gmg_report_group_regions(r, g);
        if (!gmg_group_is_allocation(g->family) || !bytes)
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
        gmg_buf_printf(b, "%s_device%d %llu\n", gmg_family_name(g->family), g->device, (unsigned long long)bytes);
    }
}
