/*
 * query.c - the public API's leaked and retained bytes (report layer): a
 * report's model built without a dump number or growth marks, its groups
 * summed by whether a pool holds them (owners.c).
 */
#include "report/report.h"

void gmg_report_query(int device, uint64_t *leaked, uint64_t *retained)
{
    *leaked = *retained = 0;
    struct gmg_report r;
    gmg_report_busy_enter();
    if (gmg_report_build(&r, GMG_TRIGGER_QUERY) == 0) {
        for (size_t i = 0; i < r.ngroups + r.nreclaimed; i++) {
            const struct gmg_group *g = i < r.ngroups ? &r.groups[i] : &r.reclaimed[i - r.ngroups];
            if (!gmg_group_is_allocation(g->family) || (device >= 0 && g->device != device))
                continue;
            *(g->pool ? retained : leaked) += g->bytes;
        }
        for (size_t k = 0; k < r.nheaps; k++) /* what a segment's regions hold is counted above as leaks */
            if (r.heapv[k].first && (device < 0 || r.heaps[k].device == device))
                *retained -= r.heapv[k].held < *retained ? r.heapv[k].held : *retained;
        gmg_report_free(&r);
    }
    gmg_report_busy_leave();
}
