/* fuzz_limit.c - libFuzzer target for the GPUMEM_LIMIT parser. Beyond not
 * crashing, it checks invariants: an accepted value re-parses to the same
 * result, percentages are in (0, 100], and a refusal always says why. */
#include "base/limit_parse.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char text[256];
    if (size >= sizeof text)
        return 0;
    memcpy(text, data, size);
    text[size] = 0;
    struct gmg_limits a, b;
    char err[256] = "";
    if (gmg_limit_parse(text, &a, err, sizeof err) != 0) {
        if (!err[0])
            abort();
        return 0;
    }
    if (gmg_limit_parse(text, &b, err, sizeof err) != 0 || memcmp(&a, &b, sizeof a) != 0)
        abort();
    for (int i = 0; i < GMG_MAX_DEVICES; i++) {
        const struct gmg_limit *l = &a.dev[i];
        if (l->kind == GMG_LIMIT_PERCENT &&
            (l->pct_num == 0 || l->pct_den == 0 || (unsigned __int128)l->pct_num > (unsigned __int128)l->pct_den * 100))
            abort();
        if (l->kind == GMG_LIMIT_PERCENT && gmg_limit_resolve(l, 1ull << 40) > (1ull << 40))
            abort();
    }
    return 0;
}
