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
 *
 * A library loaded without LD_PRELOAD (by dlopen, or as NVTX's injection
 * library) sees none of the process's CUDA calls: it says so at start-up,
 * its counts stay 0 and gpumemguard_dump() returns -1.
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
 * without fork handlers (_Fork, a raw clone), whose records are its parent's,
 * and in a library that guards nothing (loaded without LD_PRELOAD). */
int gpumemguard_dump(void);

/* Bytes of the allocations this process holds on a device now, as the
 * quota counts them (a call under way not yet); device -1: all devices.
 * (Under GPUMEM_GROUP the group's other members hold more.) */
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
 * the group's budget. A percentage of a device whose size is not known (no
 * such device, or asked before the process's first CUDA use) is 0 too. */
unsigned long long gpumemguard_limit(int device);

/* Allocations refused on a device since start-up (-1: every device, and
 * pinned host memory's refusals by the driver): *quota those the quota
 * refused (under GPUMEM_ON_LIMIT=warn, those over it), *driver those the
 * driver itself refused for want of memory, as the reports count them
 * (either pointer may be NULL). 0, or -1 for a bad device. */
int gpumemguard_refusals(int device, unsigned long long *quota, unsigned long long *driver);

/*
 * For test harnesses (the pytest plugin's limit_gpu_memory and
 * limit_gpu_leaks): how high a stretch of the program went, and what it
 * allocated and left live. From Python, look them up with ctypes:
 * ctypes.CDLL(None).gpumemguard_peak_reset, as dlsym(RTLD_DEFAULT, ...).
 */

/* Start a new peak window on every device: its base and its peak become
 * the bytes in use now. The run's peak in the reports is not touched; a
 * signal or API dump's "peak since the previous dump" is then the peak
 * since this reset, and such a dump does not end the window. An allocation
 * another thread has under way at the reset counts in the new window once
 * the driver has made it. */
void gpumemguard_peak_reset(void);

/* The highest bytes in use on a device since the last
 * gpumemguard_peak_reset (since start-up without one); device -1: the
 * highest of any device. Bytes of allocations the driver made, as the
 * reports count them: another thread's call the driver refuses does not
 * count. */
unsigned long long gpumemguard_peak(int device);

/* How far the bytes in use rose above the window's base at most: the
 * window's peak less its base; device -1: the most on any one device. */
unsigned long long gpumemguard_peak_growth(int device);

/* A mark: a point in the sequence of allocations, for gpumemguard_since.
 * Returns the mark (1 or more), or -1 when 64 marks are held already.
 * Release each when done. A mark of a parent process means nothing in a
 * forked child (every call with it there returns -1). */
int gpumemguard_mark(void);
/* 0, or -1 for a mark not held. */
int gpumemguard_mark_release(int mark);

/* The allocations made since `mark` and still live (those the exit report
 * would list as live: not reserved address ranges nor mappings), on
 * `device` or, for -1, on every device (pinned host memory included, as a
 * report lists it): their bytes and how many (either pointer may be NULL).
 * `flags`: 0, or GPUMEMGUARD_SINCE_NO_POOLS to leave out the segments of
 * caching pools (what an exit report calls "retained by pool OWNER": memory
 * a framework keeps, not a leak; GPUMEM_POOLS=off keeps them in). Returns
 * 0, or -1 for a mark not held by this process, a bad device or flags.
 * It takes the table's locks (and symbolizes, with
 * GPUMEMGUARD_SINCE_NO_POOLS): not for a signal handler. */
#define GPUMEMGUARD_SINCE_NO_POOLS 1
int gpumemguard_since(int mark, int device, int flags, unsigned long long *bytes, unsigned long long *count);

/* The same allocations as text: grouped by call site as the reports group
 * them (stacks that name the same frames are one), biggest first, each
 * group as the text report writes it (its size line, then its frames, the
 * Python frames first); at most max_groups groups (-1: all), then one line
 * for the rest. Writes at most size bytes into buf, NUL
 * included, as snprintf does; returns the length of the whole text, or -1
 * as gpumemguard_since does (or out of memory). Symbolizes: not for a
 * signal handler. */
long gpumemguard_since_text(int mark, int device, int flags, int max_groups, char *buf, unsigned long size);

/* What was live at the window's peak on `device` (-1: the device whose
 * bytes rose most in the window), as text as gpumemguard_since_text writes
 * it: every allocation live at that moment, the window's own and what was
 * in use before it, grouped by call site, biggest first, at most
 * max_groups groups (-1: all), then one line for the rest; freed ones
 * included. Returns the length of the whole text, or -1 for a bad device
 * (or out of memory). Symbolizes: not for a signal handler. */
long gpumemguard_peak_text(int device, int max_groups, char *buf, unsigned long size);

/* A size as GPUMEM_LIMIT reads one: bytes, K M G T and KiB MiB GiB TiB
 * (1024-based), kB MB GB TB (1000-based), B, decimals ("1.5G"); "0" is 0.
 * Blanks around the size and between its number and unit are allowed
 * ("512 MiB"). A percentage or a per-device list is refused (no device here). Returns
 * 0 and *bytes, or -1 with the reason in err (errlen bytes at most, NUL
 * included; err may be NULL). */
int gpumemguard_parse_size(const char *text, unsigned long long *bytes, char *err, unsigned long errlen);

#ifdef __cplusplus
}
#endif

#endif
