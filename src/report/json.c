/*
 * json.c - the JSON report, "schema": 1, documented field by field in
 * docs/report-format.md. The HTML page embeds the same document, its lists
 * of groups cut to the biggest (gmg_report_json_capped).
 */
#include "report/report.h"

#include "../include/gpumemguard.h"
#include "base/config.h"
#include "base/page.h"
#include "core/stacks.h"
#include "report/timeline.h"

static void frames(const struct gmg_report *r, struct gmg_buf *b, uint32_t stack)
{
    const struct gmg_stack *s = gmg_stack_get(stack);
    gmg_buf_printf(b, "[");
    int first = 1;
    for (uint32_t i = 0; s && i < s->depth; i++) {
        if (gmg_stack_is_internal(s->frames[i]))
            continue;
        struct gmg_frame_info fi;
        gmg_symbolize(r->sym, s->frames[i], gmg_stack_module(s, i), &fi);
        if (fi.python) {
            gmg_buf_printf(b, "%s{\"lang\":\"python\",\"function\":", first ? "" : ",");
            gmg_buf_json_str(b, fi.function);
            gmg_buf_printf(b, ",\"file\":");
            gmg_buf_json_str(b, fi.file);
            gmg_buf_printf(b, ",\"line\":%d", fi.line);
            if (fi.left_out)
                gmg_buf_printf(b, ",\"left_out\":%d", fi.left_out);
            gmg_buf_printf(b, "}");
            first = 0;
            continue;
        }
        gmg_buf_printf(b, "%s{\"lang\":\"native\",\"pc\":\"%#lx\",\"function\":", first ? "" : ",",
                       (unsigned long)fi.pc);
        if (fi.function)
            gmg_buf_json_str(b, fi.function);
        else
            gmg_buf_printf(b, "null");
        gmg_buf_printf(b, ",\"file\":");
        if (fi.file)
            gmg_buf_json_str(b, fi.file);
        else
            gmg_buf_printf(b, "null");
        gmg_buf_printf(b, ",\"line\":%d,\"module\":", fi.file ? fi.line : 0);
        if (fi.module)
            gmg_buf_json_str(b, fi.module);
        else
            gmg_buf_printf(b, "null");
        gmg_buf_printf(b, ",\"offset\":\"%#lx\"%s}", (unsigned long)fi.offset, fi.unloaded ? ",\"unloaded\":true" : "");
        first = 0;
    }
    gmg_buf_printf(b, "]");
}

/* A list of groups, as an array; with a cap, the groups past the `cap`
 * biggest are summed into a sibling "KEY_folded": {"groups", "bytes",
 * "count"}, and "regions_bytes" when some hold any. `regions`: the list
 * holds NVTX regions as groups of their own (live and reclaimed, not what
 * was live at a peak, which counts allocations the driver made only), and a
 * group that holds a heap's segment says how much of it they hold. */
static void group_array(const struct gmg_report *r, struct gmg_buf *b, const char *key, const struct gmg_group *g,
                        size_t n, int alloc, size_t cap, int regions)
{
    gmg_buf_printf(b, "[");
    int first = 1;
    size_t kept = 0;
    uint64_t fold_groups = 0, fold_bytes = 0, fold_count = 0, fold_regions = 0;
    for (size_t i = 0; i < n; i++) {
        if (gmg_group_is_allocation(g[i].family) != alloc)
            continue;
        uint64_t held = regions ? gmg_report_group_regions(r, &g[i]) : 0;
        if (cap && kept == cap) {
            fold_groups++;
            fold_bytes += g[i].bytes;
            fold_count += g[i].count;
            fold_regions += held;
            continue;
        }
        kept++;
        gmg_buf_printf(b, "%s\n {\"bytes\":%llu,\"count\":%llu,\"api\":\"%s\",\"device\":%d,\"stack_id\":%u,",
                       first ? "" : ",", (unsigned long long)g[i].bytes, (unsigned long long)g[i].count,
                       gmg_family_name(g[i].family), g[i].device, g[i].stack);
        if (g[i].owner) { /* owners.c */
            gmg_buf_printf(b, "\"owner\":");
            gmg_buf_json_str(b, g[i].owner);
            gmg_buf_printf(b, ",");
        }
        if (g[i].pool) { /* a pool's segment: retained, not a leak */
            gmg_buf_printf(b, "\"pool\":");
            gmg_buf_json_str(b, g[i].pool);
            gmg_buf_printf(b, ",");
        }
        if (held)
            gmg_buf_printf(b, "\"regions_bytes\":%llu,", (unsigned long long)held);
        gmg_buf_printf(b, "\"frames\":");
        frames(r, b, g[i].stack);
        gmg_buf_printf(b, "}");
        first = 0;
    }
    gmg_buf_printf(b, "]");
    if (fold_groups) {
        gmg_buf_printf(b, ",\"%s_folded\":{\"groups\":%llu,\"bytes\":%llu,\"count\":%llu", key,
                       (unsigned long long)fold_groups, (unsigned long long)fold_bytes, (unsigned long long)fold_count);
        if (fold_regions) /* as view writes it (cli/view.c): the same page from either */
            gmg_buf_printf(b, ",\"regions_bytes\":%llu", (unsigned long long)fold_regions);
        gmg_buf_printf(b, "}");
    }
}

/* The address map of a device's span: [offset from span_start, bytes,
 * allocations, granted bytes] per block. */
static void frag_map(struct gmg_buf *b, const struct gmg_frag *f)
{
    gmg_buf_printf(b, ",\"map\":[");
    for (size_t i = 0; i < f->nmap; i++)
        gmg_buf_printf(b, "%s[%llu,%llu,%llu,%llu]", i ? "," : "", (unsigned long long)(f->map[i].lo - f->span_lo),
                       (unsigned long long)(f->map[i].hi - f->map[i].lo), (unsigned long long)f->map[i].count,
                       (unsigned long long)f->map[i].granted);
    gmg_buf_printf(b, "],\"map_merged\":%s", f->map_merged ? "true" : "false");
}

/* A list of groups under `key` (group_array). */
static void groups(const struct gmg_report *r, struct gmg_buf *b, const char *key, const struct gmg_group *g,
                   size_t n, int alloc, size_t cap, int regions)
{
    gmg_buf_printf(b, ",\n\"%s\":", key);
    group_array(r, b, key, g, n, alloc, cap, regions);
}

/* [{"device","bytes","groups":[... as live[] ...]}]; cap as for live[]
 * (each device's list cut to its biggest, "groups_folded" the rest) */
static void at_peak(const struct gmg_report *r, struct gmg_buf *b, const char *key, const struct gmg_at_peak *p,
                    size_t n, size_t cap)
{
    gmg_buf_printf(b, ",\n\"%s\":[", key);
    for (size_t i = 0; i < n; i++) {
        gmg_buf_printf(b, "%s\n {\"device\":%d,\"bytes\":%llu,\"groups\":", i ? "," : "", p[i].device,
                       (unsigned long long)p[i].bytes);
        group_array(r, b, "groups", p[i].groups, p[i].ngroups, 1, cap, 0);
        gmg_buf_printf(b, "}");
    }
    gmg_buf_printf(b, "]");
}

void gmg_report_json(const struct gmg_report *r, struct gmg_buf *b)
{
    gmg_report_json_capped(r, b, 0);
}

void gmg_report_json_capped(const struct gmg_report *r, struct gmg_buf *b, size_t cap)
{
    gmg_buf_printf(b, "{\"schema\":%d,\"tool\":\"gpumemguard\",\"version\":\"%s\",\"trigger\":\"%s\",\"dump\":%u,\"pid\":%d,\"exe\":",
                   GMG_REPORT_SCHEMA, GPUMEMGUARD_VERSION, gmg_trigger_name(r->trigger), r->dump, r->pid);
    gmg_buf_json_str(b, r->exe);
    gmg_buf_printf(b, ",\"cmdline\":");
    gmg_buf_json_str(b, r->cmdline ? r->cmdline : r->exe);
    gmg_buf_printf(b, ",\n\"devices\":[");
    for (int d = 0; d < r->ndev; d++)
        gmg_buf_printf(b, "%s{\"device\":%d,\"limit\":%llu,\"in_use\":%llu,\"peak\":%llu,\"refused\":%llu,"
                          "\"driver_oom\":%llu}",
                       d ? "," : "", d, (unsigned long long)r->dev[d].limit, (unsigned long long)r->dev[d].used,
                       (unsigned long long)r->dev[d].peak, (unsigned long long)r->dev[d].refused,
                       (unsigned long long)r->dev[d].driver_oom);
    gmg_buf_printf(b, "],\n\"group\":");
    if (r->grouped) { /* GPUMEM_GROUP: its budget and all members' bytes */
        gmg_buf_printf(b, "{\"name\":");
        gmg_buf_json_str(b, gmg_cfg.group);
        gmg_buf_printf(b, ",\"members\":%u,\"devices\":[", r->group_members);
        for (int d = 0; d < r->ndev; d++)
            gmg_buf_printf(b, "%s{\"device\":%d,\"limit\":%llu,\"in_use\":%llu,\"peak\":%llu}", d ? "," : "", d,
                           (unsigned long long)r->dev[d].limit, (unsigned long long)r->dev[d].group_used,
                           (unsigned long long)r->dev[d].group_peak);
        gmg_buf_printf(b, "]}");
    } else {
        gmg_buf_printf(b, "null");
    }
    gmg_buf_printf(b, ",\n\"totals\":{\"live_bytes\":%llu,\"live_allocations\":%llu,\"reclaimed_bytes\":%llu,"
                      "\"reclaimed_allocations\":%llu,\"refused\":%llu,\"unknown_frees\":%llu,"
                      "\"allocations_made\":%llu,\"retained_bytes\":%llu,\"retained_allocations\":%llu,"
                      "\"host_driver_oom\":%llu}",
                   (unsigned long long)r->live_bytes, (unsigned long long)r->live_allocs,
                   (unsigned long long)r->reclaimed_bytes, (unsigned long long)r->reclaimed_allocs,
                   (unsigned long long)r->refused, (unsigned long long)r->unknown_frees,
                   (unsigned long long)r->total_allocs, (unsigned long long)r->retained_bytes,
                   (unsigned long long)r->retained_allocs, (unsigned long long)r->host_driver_oom);
    gmg_report_json_owners(r, b);
    groups(r, b, "live", r->groups, r->ngroups, 1, cap, 1);
    groups(r, b, "reclaimed", r->reclaimed, r->nreclaimed, 1, cap, 1);
    groups(r, b, "address_ranges", r->groups, r->ngroups, 0, cap, 0);
    if (r->has_growth)
        groups(r, b, "growth", r->growth, r->ngrowth, 1, cap, 0);
    else
        gmg_buf_printf(b, ",\n\"growth\":null");
    at_peak(r, b, "at_peak", r->at_peak, r->nat_peak, cap);
    if (r->has_since_peak)
        at_peak(r, b, "at_peak_since_dump", r->since_peak, r->nsince_peak, cap);
    else
        gmg_buf_printf(b, ",\n\"at_peak_since_dump\":null");
    gmg_buf_printf(b, ",\n\"timeline\":");
    gmg_timeline_json(r->timeline, b);
    gmg_buf_printf(b, ",\n\"fragmentation\":[");
    for (size_t i = 0; i < r->nfrag; i++) {
        const struct gmg_frag *f = &r->frag[i];
        gmg_buf_printf(b, "%s\n {\"device\":%d,\"live_allocations\":%llu,\"requested_bytes\":%llu,"
                          "\"granted_bytes\":%llu,\"size_classes\":{",
                       i ? "," : "", f->device, (unsigned long long)f->live_allocs, (unsigned long long)f->live_bytes,
                       (unsigned long long)f->granted);
        for (int c = 0; c < GMG_SIZE_CLASSES; c++)
            gmg_buf_printf(b, "%s\"%s\":%llu", c ? "," : "", gmg_size_class_names[c],
                           (unsigned long long)f->classes[c]);
        uint64_t span = f->span_hi - f->span_lo;
        gmg_buf_printf(b, "},\"span_start\":\"%#llx\",\"span_end\":\"%#llx\",\"span_bytes\":%llu,\"gaps\":%llu,"
                          "\"gap_bytes\":%llu,\"largest_gap\":%llu,\"span_utilisation\":%.4f,"
                          "\"rounding_waste\":%llu",
                       (unsigned long long)f->span_lo, (unsigned long long)f->span_hi, (unsigned long long)span,
                       (unsigned long long)f->gaps, (unsigned long long)f->gap_bytes,
                       (unsigned long long)f->gap_largest, span ? (double)f->granted / (double)span : 0.0,
                       (unsigned long long)f->rounding);
        frag_map(b, f);
        gmg_buf_printf(b, ",\"device_free\":");
        if (f->have_meminfo)
            gmg_buf_printf(b, "%llu,\"device_total\":%llu,\"device_free_from\":\"%s\"}",
                           (unsigned long long)f->dev_free, (unsigned long long)f->dev_total,
                           f->meminfo_nvml ? "nvml" : "driver");
        else
            gmg_buf_printf(b, "null,\"device_total\":null,\"device_free_from\":null}");
    }
    gmg_buf_printf(b, "],\n\"suppressions\":[");
    int first = 1;
    for (size_t i = 0; i < r->nsupp; i++) {
        if (!r->supp[i].count)
            continue;
        gmg_buf_printf(b, "%s{\"template\":", first ? "" : ",");
        gmg_buf_json_str(b, gmg_cfg.suppressions.patterns[i]);
        gmg_buf_printf(b, ",\"count\":%llu,\"bytes\":%llu}", (unsigned long long)r->supp[i].count,
                       (unsigned long long)r->supp[i].bytes);
        first = 0;
    }
    gmg_buf_printf(b, "],\n\"incomplete\":[");
    first = 1;
    unsigned inc = gmg_report_incomplete(r);
    for (int i = 0; i < GMG_INCOMPLETE_KINDS; i++)
        if (inc & (1u << i)) {
            gmg_buf_printf(b, "%s\"%s\"", first ? "" : ",", gmg_incomplete_name(i));
            first = 0;
        }
    gmg_buf_printf(b, "],\"untracked\":{\"allocations\":%llu,\"counted_bytes\":%llu,\"never_freed\":%llu,"
                      "\"ranges\":%llu,\"by_api\":{",
                   (unsigned long long)r->lost.untracked_allocs, (unsigned long long)r->lost.untracked_bytes,
                   (unsigned long long)r->untracked_live, (unsigned long long)r->untracked_ranges);
    first = 1;
    for (int f = 0; f < GMG_FAM_COUNT; f++)
        if (r->lost.untracked_by_family[f]) {
            gmg_buf_printf(b, "%s\"%s\":%llu", first ? "" : ",", gmg_family_name(f),
                           (unsigned long long)r->lost.untracked_by_family[f]);
            first = 0;
        }
    gmg_buf_printf(b, "}},");
    gmg_buf_printf(b, "\"unlisted\":{\"allocations\":%llu,\"bytes\":%llu},",
                   (unsigned long long)r->lost.unlisted_allocs, (unsigned long long)r->lost.unlisted_bytes);
    /* last: every frame is written by now */
    const char *why = gmg_report_dynamic_only(r);
    gmg_buf_printf(b, "\"dynamic_symbols_only\":%s,\"debuginfo_error\":", why ? "true" : "false");
    if (why)
        gmg_buf_json_str(b, why);
    else
        gmg_buf_printf(b, "null");
    gmg_buf_printf(b, "}\n");
}
