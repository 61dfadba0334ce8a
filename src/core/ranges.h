/*
 * ranges.h - the families that are not allocations (core layer): address
 * ranges reserved with cuMemAddressReserve, and cuMemMap mappings in them.
 * They hold no memory of their own (a mapping's is its handle's, a
 * cuMemCreate allocation), count against no quota and are never leaks;
 * reports list them apart. One definition for the reports, the metrics and
 * the leaks GPUMEM_EXITCODE asks about.
 *
 * Untracked records (core/track.h: out of memory) are leaks when more were
 * made than pointers the guard never saw were freed. That holds family
 * against family only: a reserved range untracked is no leak, and its free
 * must not stand for an allocation's. So the frees of ranges the guard never
 * saw are counted apart here (they are in gmg_record_unknown_frees too).
 */
#ifndef GMG_CORE_RANGES_H
#define GMG_CORE_RANGES_H

#include "core/record.h"

#include <stdint.h>

static inline int gmg_family_is_range(int family)
{
    return family == GMG_FAM_VA || family == GMG_FAM_VMM_MAP;
}

/* The keys of those families, and only theirs (record.h). */
static inline int gmg_space_is_range(int space)
{
    return space == GMG_SPACE_VA || space == GMG_SPACE_MAP;
}

/* A free of a range the guard never saw (the caller counts it in
 * gmg_record_unknown_free as well), and how many since start-up (or fork). */
void gmg_range_unknown_free(void);
uint64_t gmg_range_unknown_frees(void);
void gmg_ranges_atfork_child(void);

#endif
