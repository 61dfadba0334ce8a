/* ranges.c - see ranges.h. */
#include "core/ranges.h"

static uint64_t unknown_frees;

/* release/acquire: a reader that sees a range's free here sees it in
 * gmg_record_unknown_frees too, which the caller counted first */
void gmg_range_unknown_free(void) { __atomic_fetch_add(&unknown_frees, 1, __ATOMIC_RELEASE); }
uint64_t gmg_range_unknown_frees(void) { return __atomic_load_n(&unknown_frees, __ATOMIC_ACQUIRE); }

void gmg_ranges_atfork_child(void)
{
    unknown_frees = 0;
}
