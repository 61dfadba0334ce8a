/*
 * text.c - the text report, in the LeakSanitizer spirit:
 *
 *   ==PID== gpumemguard report (exit, dump 1) for prog --its args [gpumemguard VERSION]
 *   ==PID== program: /path/to/prog                 (when the line above does not start with it)
 *   3.0 MiB (3145728 bytes) in 1 allocation (cuMemAlloc, device 0) allocated from:
 *       File "train.py", line 12, in build_model     (Python frames, if any)
 *       #0 0x401136 in leak_site file.c:12 (prog+0x1136)
 *   ...
 *   SUMMARY: gpumemguard: 4194304 bytes in 3 allocations still live at exit
 */
#include "report/report.h"

#include "../include/gpumemguard.h"
#include "base/config.h"
#include "core/stacks.h"

#include <string.h>

static void frames(const struct gmg_report *r, struct gmg_buf *b, uint32_t stack)
{
    const struct gmg_stack *s = gmg_stack_get(stack);
    if (!s) {
        gmg_buf_printf(b, gmg_cfg.stack_depth ? "    (no stack recorded)\n" : "    (no stack: GPUMEM_STACK_DEPTH=0)\n");
        return;
    }
    int k = 0;
    for (uint32_t i = 0; i < s->depth; i++) {
        if (gmg_stack_is_internal(s->frames[i]))
            continue;
        struct gmg_frame_info fi;
        gmg_symbolize(r->sym, s->frames[i], gmg_stack_module(s, i), &fi);
        if (fi.left_out) { /* the middle of a long Python stack */
            gmg_buf_printf(b, "    ... %s ...\n", fi.function);
            continue;
        }
        /* names as text: a control character in one (a file name given to
         * compile(), a path) cannot start a line of its own */
        if (fi.python) { /* as a Python traceback names a frame */
            gmg_buf_printf(b, "    File \"");
            gmg_buf_text_str(b, fi.file);
            gmg_buf_printf(b, "\", line %d, in ", fi.line);
            gmg_buf_text_str(b, fi.function);
            gmg_buf_printf(b, "\n");
            continue;
        }
        gmg_buf_printf(b, "    #%d %#lx in ", k++, (unsigned long)fi.pc);
        gmg_buf_text_str(b, fi.function ? fi.function : "??");
        if (fi.file) {
            gmg_buf_printf(b, " ");
            gmg_buf_text_str(b, fi.file);
            gmg_buf_printf(b, ":%d", fi.line);
        }
        if (fi.module) {
            gmg_buf_printf(b, " (");
            gmg_buf_text_str(b, fi.module);
            gmg_buf_printf(b, "+%#lx%s)", (unsigned long)fi.offset, fi.unloaded ? ", unloaded" : "");
        }
        gmg_buf_printf(b, "\n");
    }
}

void gmg_report_text_stack(const struct gmg_report *r, struct gmg_buf *b, uint32_t stack)
{
    frames(r, b, stack);
}

/* "1 allocation", "2 allocations" */
static const char *plural(uint64_t n)
{
    return n == 1 ? "" : "s";
}

void gmg_report_text_group(const struct gmg_report *r, struct gmg_buf *b, const struct gmg_group *g)
{
    char sz[GMG_SIZE_LEN];
    gmg_buf_printf(b, "%s in %llu allocation%s (%s, device %d) allocated from:\n",
                   gmg_fmt_size(sz, sizeof sz, g->bytes), (unsigned long long)g->count, plural(g->count),
                   gmg_family_name(g->family), g->device);
    frames(r, b, g->stack);
    gmg_buf_printf(b, "\n");
}

void gmg_report_text_dynamic_only(const struct gmg_report *r, struct gmg_buf *b)
{
    const char *why = gmg_report_dynamic_only(r);
    if (!why) /* said once, for every frame above: libdw's answer is the symbolizer's, not a frame's */
        return;
    int blank = b->len >= 2 && b->p[b->len - 1] == '\n' && b->p[b->len - 2] == '\n';
    gmg_buf_printf(b, "%sWARNING: frames are named from the dynamic symbol tables only (dladdr): the debug "
                      "information of the process's modules could not be read (libdw: %s). They have no file:line, "
                      "and static functions have no name%s.\n",
                   blank ? "" : "\n", why, gmg_cfg.suppressions.n ? "; suppressions may not have matched them" : "");
}

static void groups(const struct gmg_report *r, struct gmg_buf *b, const struct gmg_group *g, size_t n, int alloc)
{
    for (size_t i = 0; i < n; i++) /* pools' segments have their own section, apart from leaks */
        if (gmg_group_is_allocation(g[i].family) == alloc && (!g[i].pool || g == r->growth))
            gmg_report_text_group(r, b, &g[i]);
}

/* What filled each device at its peak (counted allocations: what the quota
 * and the driver's memory hold). */
static void at_peak(const struct gmg_report *r, struct gmg_buf *b, const struct gmg_at_peak *p, size_t n,
                    const char *when)
{
    for (size_t i = 0; i < n; i++) {
        gmg_buf_printf(b, "Live at the peak of device %d%s (%llu bytes)", p[i].device, when,
                       (unsigned long long)p[i].bytes);
        if (r->grouped) /* the header's peak is the group's, all members: this one is the process's own */
            gmg_buf_printf(b, ", this process's own peak (the group's, all members, is in the header)");
        gmg_buf_printf(b, ", biggest first:\n\n");
        for (size_t k = 0; k < p[i].ngroups; k++)
            gmg_report_text_group(r, b, &p[i].groups[k]);
        if (!p[i].ngroups)
            gmg_buf_printf(b, "  (no allocation recorded then)\n\n");
    }
}

static void fragmentation(const struct gmg_report *r, struct gmg_buf *b)
{
    for (size_t i = 0; i < r->nfrag; i++) {
        const struct gmg_frag *f = &r->frag[i];
        char s1[GMG_SIZE_LEN], s2[GMG_SIZE_LEN], s3[GMG_SIZE_LEN];
        gmg_buf_printf(b, "Fragmentation, device %d:\n", f->device);
        gmg_buf_printf(b, "  live allocations: %llu (%s requested, %s granted)\n", (unsigned long long)f->live_allocs,
                       gmg_fmt_size(s1, sizeof s1, f->live_bytes), gmg_fmt_size(s2, sizeof s2, f->granted));
        gmg_buf_printf(b, "  size classes:");
        for (int c = 0; c < GMG_SIZE_CLASSES; c++)
            if (f->classes[c])
                gmg_buf_printf(b, " %s: %llu", gmg_size_class_names[c], (unsigned long long)f->classes[c]);
        gmg_buf_printf(b, "%s\n", f->live_allocs ? "" : " (none)");
        uint64_t span = f->span_hi - f->span_lo;
        gmg_buf_printf(b, "  address span: %s [%#llx, %#llx)\n", gmg_fmt_size(s1, sizeof s1, span),
                       (unsigned long long)f->span_lo, (unsigned long long)f->span_hi);
        gmg_buf_printf(b, "  gaps: %llu, %s in all, largest %s\n", (unsigned long long)f->gaps,
                       gmg_fmt_size(s1, sizeof s1, f->gap_bytes), gmg_fmt_size(s2, sizeof s2, f->gap_largest));
        if (span)
            gmg_buf_printf(b, "  span utilisation: %.1f%%\n", 100.0 * (double)f->granted / (double)span);
        gmg_buf_printf(b, "  rounding waste: %s\n", gmg_fmt_size(s1, sizeof s1, f->rounding));
        if (f->have_meminfo)
            gmg_buf_printf(b, "  device free at report time: %s of %s%s\n", gmg_fmt_size(s2, sizeof s2, f->dev_free),
                           gmg_fmt_size(s3, sizeof s3, f->dev_total), f->meminfo_nvml ? " (NVML)" : "");
        else
            gmg_buf_printf(b, "  device free at report time: unknown (no context on this device, no NVML)\n");
    }
}

/* What could not be tracked: allocations, and those of them never freed
 * (leaks); then reserved ranges and mappings (no leaks); then every API's
 * count. */
static void untracked(const struct gmg_report *r, struct gmg_buf *b)
{
    uint64_t allocs = r->lost.untracked_allocs - r->untracked_ranges;
    if (allocs)
        gmg_buf_printf(b, "  %llu allocation%s made since start-up could not be tracked: none of them is in this "
                          "report; the %llu bytes they counted against the quota stay counted.\n",
                       (unsigned long long)allocs, plural(allocs), (unsigned long long)r->lost.untracked_bytes);
    if (r->untracked_live)
        gmg_buf_printf(b, "  At least %llu of them were never freed (more than the %llu frees of pointers the guard "
                          "never saw%s): leaks, for GPUMEM_EXITCODE too.\n",
                       (unsigned long long)r->untracked_live, (unsigned long long)r->unknown_alloc_frees,
                       r->unknown_alloc_frees != r->unknown_frees ? ", ranges apart" : "");
    if (r->untracked_ranges)
        gmg_buf_printf(b, "  %llu reserved address ranges or mappings could not be tracked: none of them is in this "
                          "report; they hold no memory of their own and are no leaks.\n",
                       (unsigned long long)r->untracked_ranges);
    gmg_buf_printf(b, "  Untracked, by API:");
    const char *sep = " ";
    for (int f = 0; f < GMG_FAM_COUNT; f++)
        if (r->lost.untracked_by_family[f]) {
            gmg_buf_printf(b, "%s%s %llu", sep, gmg_family_name(f), (unsigned long long)r->lost.untracked_by_family[f]);
            sep = ", ";
        }
    gmg_buf_printf(b, ".\n");
}

/* What the guard's own out of memory kept from this report. */
static void incomplete(const struct gmg_report *r, struct gmg_buf *b)
{
    unsigned inc = gmg_report_incomplete(r);
    if (!inc)
        return;
    gmg_buf_printf(b, "\nWARNING: this report is incomplete (the guard ran out of memory or room):\n");
    if (inc & GMG_INCOMPLETE_UNTRACKED)
        untracked(r, b);
    if (inc & GMG_INCOMPLETE_UNLISTED)
        gmg_buf_printf(b, "  %llu allocation%s (%llu bytes) reclaimed by context teardown could not be listed: they "
                          "are not in this report; leaks, for GPUMEM_EXITCODE too.\n",
                       (unsigned long long)r->lost.unlisted_allocs, plural(r->lost.unlisted_allocs),
                       (unsigned long long)r->lost.unlisted_bytes);
    if (inc & GMG_INCOMPLETE_GROUPS)
        gmg_buf_printf(b, "  Some allocations are in the totals but in no stack's group above (out of memory, or what "
                          "was live at a peak read while another thread's allocation or free stood half done).\n");
    if (inc & GMG_INCOMPLETE_SUPPRESSIONS)
        gmg_buf_printf(b, "  GPUMEM_SUPPRESSIONS was not applied (out of memory, or secure execution): every leak is reported.\n");
    if (inc & GMG_INCOMPLETE_FRAGMENTATION)
        gmg_buf_printf(b, "  The fragmentation section is left out or counts fewer allocations than live.\n");
    if (inc & GMG_INCOMPLETE_NAMES)
        gmg_buf_printf(b, "  Some frames are named by the loader alone, or not at all (\"??\"): suppressions may not "
                          "have matched them.\n");
    if (inc & GMG_INCOMPLETE_STACKS)
        gmg_buf_printf(b, "  Some call stacks or Python frames were not kept: their allocations are listed under "
                          "\"no stack recorded\", or with frames left out.\n");
    if (inc & GMG_INCOMPLETE_CONTEXTS)
        gmg_buf_printf(b, "  Some contexts could not be indexed: allocations in them stay listed, and counted, after "
                          "their teardown.\n");
}

void gmg_report_text(const struct gmg_report *r, struct gmg_buf *b)
{
    if (gmg_report_clean(r)) { /* a clean run is quiet */
        gmg_buf_printf(b, "SUMMARY: gpumemguard: 0 bytes in 0 allocations still live at exit\n");
        return;
    }
    char s1[GMG_SIZE_LEN], s2[GMG_SIZE_LEN];
    /* the command line and the path as text: an argument or a file name
     * holding a terminal's control sequence reaches no terminal as one */
    gmg_buf_printf(b, "==%d== gpumemguard report (%s, dump %u) for ", r->pid, gmg_trigger_name(r->trigger), r->dump);
    gmg_buf_text_str(b, r->cmdline ? r->cmdline : r->exe);
    gmg_buf_printf(b, " [gpumemguard %s]\n", GPUMEMGUARD_VERSION);
    if (r->cmdline && strncmp(r->cmdline, r->exe, strlen(r->exe)) != 0) { /* python train.py: which python */
        gmg_buf_printf(b, "==%d== program: ", r->pid);
        gmg_buf_text_str(b, r->exe);
        gmg_buf_put(b, "\n", 1);
    }
    for (int d = 0; d < r->ndev; d++) {
        gmg_buf_printf(b, "==%d== device %d: limit %s", r->pid, d,
                       r->dev[d].limit ? gmg_fmt_size(s1, sizeof s1, r->dev[d].limit) : "none");
        gmg_buf_printf(b, ", in use %s", gmg_fmt_size(s1, sizeof s1, r->dev[d].used));
        gmg_buf_printf(b, ", peak %s, refused %llu\n", gmg_fmt_size(s2, sizeof s2, r->dev[d].peak),
                       (unsigned long long)r->dev[d].refused);
        if (r->dev[d].driver_oom)
            gmg_buf_printf(b, "==%d== device %d: the driver refused %llu allocation%s: out of memory\n", r->pid, d,
                           (unsigned long long)r->dev[d].driver_oom, plural(r->dev[d].driver_oom));
    }
    if (r->host_driver_oom)
        gmg_buf_printf(b, "==%d== pinned host memory: the driver refused %llu allocation%s: out of memory\n", r->pid,
                       (unsigned long long)r->host_driver_oom, plural(r->host_driver_oom));
    for (int d = 0; r->grouped && d < r->ndev; d++) { /* GPUMEM_GROUP: the budget the limit above is */
        gmg_buf_printf(b, "==%d== group %s, device %d: limit %s", r->pid, gmg_cfg.group, d,
                       r->dev[d].limit ? gmg_fmt_size(s1, sizeof s1, r->dev[d].limit) : "none");
        gmg_buf_printf(b, ", in use %s by %u member%s", gmg_fmt_size(s1, sizeof s1, r->dev[d].group_used),
                       r->group_members, plural(r->group_members));
        gmg_buf_printf(b, ", peak %s\n", gmg_fmt_size(s2, sizeof s2, r->dev[d].group_peak));
    }
    gmg_buf_printf(b, "==%d== live: %s in %llu allocation%s; refused: %llu; unknown frees: %llu; "
                      "allocations made: %llu\n",
                   r->pid, gmg_fmt_size(s1, sizeof s1, r->live_bytes), (unsigned long long)r->live_allocs,
                   plural(r->live_allocs), (unsigned long long)r->refused, (unsigned long long)r->unknown_frees,
                   (unsigned long long)r->total_allocs);
    if (r->supp_live_allocs) /* in use above, yet not live here: say where they went */
        gmg_buf_printf(b, "==%d== suppressed: %s in %llu live allocation%s (GPUMEM_SUPPRESSIONS: \"Suppressions "
                          "used\" below)\n",
                       r->pid, gmg_fmt_size(s1, sizeof s1, r->supp_live_bytes), (unsigned long long)r->supp_live_allocs,
                       plural(r->supp_live_allocs));
    gmg_buf_printf(b, "\n");
    if (r->live_allocs) {
        gmg_buf_printf(b, "Live allocations, by call site, biggest first:\n\n");
        groups(r, b, r->groups, r->ngroups, 1);
    }
    if (r->reclaimed_allocs) { /* not pools' segments alone: they have their section */
        gmg_buf_printf(b, "Reclaimed by context teardown (never freed by the program): %s in %llu "
                          "allocation%s\n\n",
                       gmg_fmt_size(s1, sizeof s1, r->reclaimed_bytes), (unsigned long long)r->reclaimed_allocs,
                       plural(r->reclaimed_allocs));
        groups(r, b, r->reclaimed, r->nreclaimed, 1);
    }
    gmg_report_text_pools(r, b);
    int have_va = 0;
    for (size_t i = 0; i < r->ngroups; i++)
        have_va |= !gmg_group_is_allocation(r->groups[i].family);
    if (have_va) {
        gmg_buf_printf(b, "Address ranges (reserved or mapped, not counted):\n\n");
        groups(r, b, r->groups, r->ngroups, 0);
    }
    if (r->has_growth) {
        size_t grew = 0; /* the stacks listed below: reserved ranges and mappings are no growth of memory */
        for (size_t i = 0; i < r->ngrowth; i++)
            grew += gmg_group_is_allocation(r->growth[i].family) != 0;
        gmg_buf_printf(b, "Growth since the previous dump (new and still live): %zu stack%s\n\n", grew,
                       grew == 1 ? "" : "s");
        groups(r, b, r->growth, r->ngrowth, 1);
    }
    at_peak(r, b, r->at_peak, r->nat_peak, "");
    if (r->has_since_peak)
        at_peak(r, b, r->since_peak, r->nsince_peak, " since the previous dump");
    fragmentation(r, b);
    if (r->any_suppressed) {
        gmg_buf_printf(b, "\n-----------------------------------------------------\nSuppressions used:\n"
                          "  count      bytes template\n");
        for (size_t i = 0; i < r->nsupp; i++)
            if (r->supp[i].count) {
                gmg_buf_printf(b, "%7llu %10llu ", (unsigned long long)r->supp[i].count,
                               (unsigned long long)r->supp[i].bytes);
                gmg_buf_text_str(b, gmg_cfg.suppressions.patterns[i]);
                gmg_buf_put(b, "\n", 1);
            }
        gmg_buf_printf(b, "-----------------------------------------------------\n");
    }
    gmg_report_text_dynamic_only(r, b);
    incomplete(r, b);
    gmg_buf_printf(b, "\nSUMMARY: gpumemguard: %llu bytes in %llu allocation%s still live at %s",
                   (unsigned long long)r->live_bytes, (unsigned long long)r->live_allocs, plural(r->live_allocs),
                   r->trigger == GMG_TRIGGER_EXIT || r->trigger == GMG_TRIGGER_FATAL ? "exit" : "dump");
    if (r->reclaimed_allocs)
        gmg_buf_printf(b, ", %llu bytes in %llu allocation%s reclaimed by context teardown",
                       (unsigned long long)r->reclaimed_bytes, (unsigned long long)r->reclaimed_allocs,
                       plural(r->reclaimed_allocs));
    if (r->retained_allocs)
        gmg_buf_printf(b, ", %llu bytes in %llu allocation%s retained by pools", (unsigned long long)r->retained_bytes,
                       (unsigned long long)r->retained_allocs, plural(r->retained_allocs));
    gmg_buf_printf(b, "\n");
}
