/*
 * gpumemguard.h - the public API of libgpumemguard.so.
 *
 * A program does not need it: LD_PRELOAD=libgpumemguard.so is enough. A
 * program that wants a report at a moment of its choosing, or its live
 * device bytes, can call these: look them up with dlsym(RTLD_DEFAULT, ...),
 * so that it runs with the guard and without it, and do not link the
 * library (`pkg-config --cflags gpumemguard` gives the include path; the
 * .pc file has no Libs on purpose):
 *
 *     unsigned long long (*live)(int) =
 *         (unsigned long long (*)(int))dlsym(RTLD_DEFAULT, "gpumemguard_live_bytes");
 *     if (live)
 *         printf("%llu bytes on the GPU\n", live(-1));
 */
#ifndef GPUMEMGUARD_H
#define GPUMEMGUARD_H

#define GPUMEMGUARD_VERSION "0.3.0"
#define GPUMEMGUARD_VERSION_MAJOR 0
#define GPUMEMGUARD_VERSION_MINOR 3
#define GPUMEMGUARD_VERSION_PATCH 0

#ifdef __cplusplus
extern "C" {
#endif

/* The version of the library loaded, e.g. "0.3.0". */
const char *gpumemguard_version(void);

/* Write a report now, to GPUMEM_REPORT in GPUMEM_REPORT_FORMAT, with the
 * growth since the previous dump. Returns 0; -1 (no report) in a child made
 * without fork handlers (_Fork, a raw clone), whose records are its parent's. */
int gpumemguard_dump(void);

/* Bytes this process has counted against the quota on a device now; device
 * -1: all devices. (Under GPUMEM_GROUP the group's other members hold more.) */
unsigned long long gpumemguard_live_bytes(int device);

/* What the exit report would call leaks now on a device (-1: all devices):
 * live allocations (and those reclaimed by context teardown) that no
 * suppression covers and that are no caching pool's segment; NVTX regions
 * still registered count. Builds a report's model (names every frame): for
 * tests and checkpoints, not for every allocation. */
unsigned long long gpumemguard_leaked_bytes(int device);

/* What caching pools hold now on a device (-1: all devices): their
 * segments (built-in patterns, pool: lines, NVTX heaps, under
 * GPUMEM_POOLS=auto), less the NVTX regions registered in them. Retained
 * memory is no leak. */
unsigned long long gpumemguard_retained_bytes(int device);

/* The quota of a device in bytes, 0 when there is none; under GPUMEM_GROUP
 * the group's budget. */
unsigned long long gpumemguard_limit(int device);

#ifdef __cplusplus
}
#endif

#endif
