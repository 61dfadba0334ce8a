/*
 * metrics.h - GPUMEM_METRICS (SPEC §9), cluster layer: a Prometheus
 * text-format file for node_exporter's textfile collector, rewritten whole
 * (temporary, then rename) by the reporter thread every
 * GPUMEM_METRICS_INTERVAL seconds and at exit, never on the allocation path.
 *
 * Per device: bytes in use, limit, peak, refused allocations, allocations
 * and frees made, live allocations; and the ten biggest live call sites by
 * bytes (a bounded `site` label). Under GPUMEM_GROUP also the group's bytes,
 * budget, peak and members (label `group`; the same in every member's
 * file). Every series carries `pid` and `exe`. A forked child writes no
 * metrics (the file is its parent's); guard.c expands %p in the path.
 * The file is mode 0644 whatever the umask (node_exporter runs as another
 * user); the temporary name beside it always fits NAME_MAX.
 */
#ifndef GMG_CLUSTER_METRICS_H
#define GMG_CLUSTER_METRICS_H

#include <stddef.h>
#include <stdint.h>

/* Names call sites for the `site` label (the layer above symbolizes): for
 * each of n stacks, "function file:line" or similar into names[k * each]. */
typedef void (*gmg_site_namer)(const uint32_t *stacks, size_t n, char *names, size_t each);

/* A live call site: a stack's live bytes and allocations on one device,
 * whatever the API. */
struct gmg_live_site { uint32_t stack; int device; uint64_t bytes, count; };

/* The `max` biggest live call sites (device-memory and host allocations;
 * not reserved ranges or mappings) into top[], biggest first, from the live
 * totals: O(stacks). live[GMG_MAX_DEVICES] gets each device's live
 * allocations added; *dropped the live totals (per stack, device and API)
 * left out for want of memory. Shared by the metrics file and the status
 * page (cluster/status.h). */
size_t gmg_live_sites_top(struct gmg_live_site *top, size_t max, uint64_t *live, uint64_t *dropped);

/* Write the file now; 0 on success, -1 (errno set) when it could not: a
 * directory (EISDIR), a device, FIFO or socket (EEXIST) or a symbolic
 * link (ELOOP) in the file's place is left as it is, never replaced. */
int gmg_metrics_write(const char *path, gmg_site_namer name_site);

/* At the process's first CUDA use: can `path` (GPUMEM_METRICS=`setting`,
 * %p expanded) be written? 0, or -1 after saying once why not (a missing
 * directory, no permission, a directory in the file's place). */
int gmg_metrics_check_path(const char *setting, const char *path);

#endif
