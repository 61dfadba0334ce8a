/*
 * limit_parse.h - the strict parser of GPUMEM_LIMIT (SPEC §3).
 *
 * Forms: "4G" for every device, or "0:4G,1:2G" per device. A size is a
 * decimal number (digits, optionally '.' and more digits) followed by no
 * unit (bytes), B, K M G T or KiB MiB GiB TiB (1024-based), kB MB GB TB
 * (1000-based), or % of the device's memory (0 < N <= 100); a number of
 * bytes (no unit, or B) has no fraction ("1.5" is refused; "1.5K" is 1536,
 * and a unit's fraction of a byte is dropped). "0" means no limit.
 * Anything else is refused with a reason: no guessing.
 * Pure: no I/O, no global state, so that it can be fuzzed.
 */
#ifndef GMG_BASE_LIMIT_PARSE_H
#define GMG_BASE_LIMIT_PARSE_H

#include <stdint.h>

#define GMG_MAX_DEVICES 64

enum gmg_limit_kind { GMG_LIMIT_NONE = 0, GMG_LIMIT_BYTES, GMG_LIMIT_PERCENT };

struct gmg_limit {
    enum gmg_limit_kind kind;
    uint64_t bytes;        /* GMG_LIMIT_BYTES                                  */
    uint64_t pct_num;      /* GMG_LIMIT_PERCENT: percent = pct_num / pct_den   */
    uint64_t pct_den;
};

struct gmg_limits {
    int per_device;                          /* 0: dev[0] applies to all */
    struct gmg_limit dev[GMG_MAX_DEVICES];
};

/* 0 on success; otherwise -1 with a reason in err. */
int gmg_limit_parse(const char *text, struct gmg_limits *out, char *err, unsigned errlen);

/* Bytes a limit allows on a device of `total` bytes; 0 means no limit. */
uint64_t gmg_limit_resolve(const struct gmg_limit *l, uint64_t total);

#define GMG_LIMIT_ACCEPTED \
    "bytes (1073741824), K M G T or KiB MiB GiB TiB (1024-based), kB MB GB TB (1000-based), " \
    "B, decimals (1.5G), N% of the device's memory (50%), per device (0:4G,1:2G); unset or 0: no limit"

#endif
