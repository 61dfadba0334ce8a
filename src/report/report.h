/*
 * report.h - reports (report layer): what triggers them, the model they
 * are written from, and where they go.
 *
 * A report is built from one walk of the allocation table (shards locked
 * one at a time, nothing copied) and the stack depot; it is symbolized and formatted into
 * memory, then written whole to each destination. Nothing here runs on the
 * allocation path: refusals are explained by the reporter thread
 * (reporter.h), and what the report needs of the driver comes through the
 * device interface below, which the layer above hands in.
 */
#ifndef GMG_REPORT_REPORT_H
#define GMG_REPORT_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/limit_parse.h"
#include "core/heaps.h"
#include "core/track.h"
#include "core/upcalls.h"
#include "report/symbolize.h"

enum gmg_trigger { GMG_TRIGGER_EXIT, GMG_TRIGGER_SIGNAL, GMG_TRIGGER_REFUSAL, GMG_TRIGGER_API, GMG_TRIGGER_FATAL,
                   GMG_TRIGGER_QUERY /* a model for the public API's numbers: no dump number, no growth marks */ };

struct gmg_group {
    uint32_t stack;
    int family;
    int device;
    uint64_t bytes;
    uint64_t count;
    /* Set by gmg_report_owners (owners.c) at report time: the library that
     * reached the driver ("PyTorch", "NCCL", ..., "program"), and the caching
     * pool whose segment this is (NULL: not a pool's, so live at exit it is a
     * leak). Both are static strings or GPUMEM_SUPPRESSIONS patterns. */
    const char *owner;
    const char *pool;
};

/* The summary by owner: every live allocation (and every one reclaimed by
 * context teardown), suppressed or not; retained: of those, pools' segments. */
struct gmg_owner_sum {
    const char *owner;
    uint64_t bytes, count, retained_bytes, retained_count;
};

#define GMG_SIZE_CLASSES 8

/* One block of the address map: an allocation, or (past GMG_FRAG_MAP_MAX
 * allocations on a device) neighbours merged between the largest gaps. */
struct gmg_frag_block { uint64_t lo, hi, count, granted; };
#define GMG_FRAG_MAP_MAX 2000

struct gmg_frag {
    int device;
    uint64_t live_bytes, live_allocs;       /* device-pointer allocations      */
    uint64_t classes[GMG_SIZE_CLASSES];     /* counts by size class            */
    uint64_t span_lo, span_hi;              /* lowest start, highest end       */
    uint64_t granted;                       /* bytes the driver granted        */
    uint64_t gaps, gap_bytes, gap_largest;  /* holes between live allocations  */
    uint64_t rounding;                      /* granted - requested             */
    uint64_t dev_free, dev_total;           /* at report time, when have_meminfo */
    int have_meminfo;
    int meminfo_nvml;                       /* ... NVML's, not the context's cuMemGetInfo */
    struct gmg_frag_block *map;             /* the span's blocks, by address (NULL: none kept) */
    size_t nmap;
    int map_merged;                         /* blocks of several allocations */
};

extern const char *const gmg_size_class_names[GMG_SIZE_CLASSES];

/* What was live at a device's peak: its groups (as the live list's, biggest
 * first), counted allocations only. */
struct gmg_at_peak {
    int device;
    uint64_t bytes;             /* the peak: tracked bytes then */
    struct gmg_group *groups;
    size_t ngroups;
    int incomplete;             /* out of memory: groups left out */
};

struct gmg_timeline;            /* report/timeline.h */

struct gmg_dev_totals {
    uint64_t limit, used, peak, refused;   /* limit: the group's under GPUMEM_GROUP */
    uint64_t driver_oom;                   /* the driver's own out of memory */
    uint64_t group_used, group_peak;       /* GPUMEM_GROUP: all members' bytes */
};

struct gmg_report {
    enum gmg_trigger trigger;
    unsigned dump;              /* sequence number of this dump */
    int pid;
    const char *exe;            /* the program's whole path (a deep build or conda tree
                                   passes 255 bytes), read once: not on the stack of
                                   every report (gmg_report_build), never NULL there */
    const char *cmdline;        /* the program with its arguments, one line (base/exe.h) */
    int ndev;                   /* devices with totals below */
    struct gmg_dev_totals dev[GMG_MAX_DEVICES];
    int grouped;                /* GPUMEM_GROUP (gmg_cfg.group names it) */
    unsigned group_members;
    uint64_t live_bytes, live_allocs;           /* allocations (not VA/maps) */
    uint64_t reclaimed_bytes, reclaimed_allocs;
    uint64_t refused, unknown_frees, total_allocs;
    uint64_t driver_oom;        /* all devices, and pinned host memory */
    uint64_t host_driver_oom;   /* pinned host memory's */
    /* the run's peak per device; signal and API dumps: also the peak since
     * the previous such dump (report/atpeak.h) */
    struct gmg_at_peak *at_peak; size_t nat_peak;
    struct gmg_at_peak *since_peak; size_t nsince_peak;
    int has_since_peak;
    struct gmg_timeline *timeline;  /* a copy, or NULL */
    struct gmg_group *groups;   size_t ngroups;    /* live, biggest first      */
    struct gmg_group *reclaimed; size_t nreclaimed;
    struct gmg_group *growth;   size_t ngrowth;    /* signal/API dumps only    */
    int has_growth;
    struct gmg_frag *frag;      size_t nfrag;
    /* GPUMEM_REPORT_FORMAT=memviz only: each live device allocation of the
     * driver's allocator (as fragmentation counts them), in the table's order (the
     * memviz format sorts them by device and address) */
    /* size: what the driver holds (a pitched allocation's pitch x height);
     * requested: what the call asked for (its width x height) */
    struct gmg_live { uint64_t addr, size, requested; uint32_t stack; int8_t device; uint8_t family; } *allocs;
    size_t nallocs, allocs_cap;
    /* Pools' segments (GPUMEM_POOLS): live or reclaimed groups with a pool,
     * kept in the lists above but out of their totals and the leaks */
    uint64_t retained_bytes, retained_allocs;
    struct gmg_owner_sum *owners; size_t nowners;  /* biggest first */
    /* NVTX heaps live at the report (core/heaps.h), and how each is
     * counted (owners.c): the pool its segment's group is, and, on the
     * first heap registered over a segment only (`first`), what the
     * regions of all the heaps over that segment hold of it (`held`, at
     * most the segment: leaks when live at exit) and the rest (`retained`);
     * a later heap over the same segment counts no byte again */
    struct gmg_heap_info *heaps;
    struct gmg_heap_view { const char *pool; uint64_t held, retained; int first; } *heapv;
    size_t nheaps;
    /* stream-ordered pools: what each reserves beyond what is in use */
    struct gmg_mempool_use *mempools; size_t nmempools;
    struct gmg_symbolizer *sym;
    /* GPUMEM_SUPPRESSIONS: per pattern, the groups it took out of the live
     * and reclaimed lists (and so out of the totals above and the leaks) */
    struct gmg_supp_use { uint64_t count, bytes; } *supp;
    size_t nsupp;
    int any_suppressed;
    uint64_t supp_live_bytes, supp_live_allocs; /* of those, taken out of the live list */
    /* What the guard's own out of memory kept from this report: GMG_INCOMPLETE_*
     * bits, and the allocations behind the first two (core/track.h) */
    unsigned incomplete;
    struct gmg_track_lost lost;
    /* of lost.untracked_allocs, the reserved ranges and mappings (no
     * leaks, core/ranges.h); the rest are allocations */
    uint64_t untracked_ranges;
    /* of unknown_frees, those of allocations (not of ranges) */
    uint64_t unknown_alloc_frees;
    /* untracked allocations that were never freed, at the least: more
     * allocations untracked than frees of allocations the guard never saw
     * (each such free is one); leaks for GPUMEM_EXITCODE */
    uint64_t untracked_live;
    unsigned long sym_lost0;    /* gmg_symbolizer_lost(sym) when the report took it */
    unsigned long sym_dynamic0; /* gmg_symbolizer_dynamic_only(sym) then */
};

enum {
    GMG_INCOMPLETE_UNTRACKED = 1,     /* allocations whose records could not be kept      */
    GMG_INCOMPLETE_UNLISTED = 2,      /* reclaimed allocations that could not be listed   */
    GMG_INCOMPLETE_GROUPS = 4,        /* allocations counted but not in any stack's group */
    GMG_INCOMPLETE_SUPPRESSIONS = 8,  /* GPUMEM_SUPPRESSIONS not applied                  */
    GMG_INCOMPLETE_FRAGMENTATION = 16, /* the fragmentation section left out or short     */
    GMG_INCOMPLETE_NAMES = 32,        /* frames not (fully) named: no symbolizer, or a name lost */
    GMG_INCOMPLETE_STACKS = 64,       /* call stacks (or Python frames) not kept           */
    GMG_INCOMPLETE_CONTEXTS = 128     /* contexts not indexed: teardown cannot reclaim     */
};
#define GMG_INCOMPLETE_KINDS 8

/* The name of incomplete bit i (0 .. GMG_INCOMPLETE_KINDS-1), for the
 * formats: "untracked", "unlisted", "groups", "suppressions", "fragmentation",
 * "names", "stacks", "contexts". */
const char *gmg_incomplete_name(int i);

/* r->incomplete, and "names" if frames written so far lost a name or had
 * no symbolizer: call it after the frames are written. */
unsigned gmg_report_incomplete(const struct gmg_report *r);

/* Why frames of this report so far were named from the dynamic symbol
 * tables alone (libdw could not read the process's modules), or NULL when
 * none was: call it after the frames are written. */
const char *gmg_report_dynamic_only(const struct gmg_report *r);

/* Unsuppressed leaks of a report: live allocations, what context teardown
 * reclaimed (listed or not), and untracked ones never freed
 * (GPUMEM_EXITCODE). */
uint64_t gmg_report_leaks(const struct gmg_report *r);

/* An exit report that finds nothing to say: nothing live, reclaimed or
 * retained, refused (by the quota or the driver), suppressed or freed
 * unknown, and complete. Its text is the SUMMARY line alone
 * (nothing at GPUMEM_LOG=quiet). */
int gmg_report_clean(const struct gmg_report *r);

/* What the report side needs to know of devices, from the driver. Each
 * returns 0 on success, -1 when it cannot say. */
struct gmg_device_ops {
    /* free and total memory of `dev`: 0 from the driver, in the calling
     * thread's context on `dev`; 1 from NVML, which needs none (any
     * thread, any device); -1 when neither can say */
    int (*meminfo)(int dev, uint64_t *freeb, uint64_t *total);
    /* base and size of the driver allocation holding `ptr` */
    int (*address_range)(uint64_t ptr, uint64_t *base, uint64_t *size);
    /* the memory of `dev` (no context needed), for a percent GPUMEM_LIMIT
     * on a device the program has not allocated on yet */
    int (*total)(int dev, uint64_t *total);
    /* the stream-ordered pools with memory reserved, into out[0..max):
     * how many (core/heaps.h) */
    size_t (*mempools)(struct gmg_mempool_use *out, size_t max);
};

/* Installed once at start-up; until then the report asks nothing. */
void gmg_report_set_device_ops(const struct gmg_device_ops *ops);
extern struct gmg_device_ops gmg_report_dev;

/* Build, write to every configured destination and format, free. Returns
 * the report's unsuppressed leaks (gmg_report_leaks). */
uint64_t gmg_report_now(enum gmg_trigger trigger);
/* The last signal dump (GMG_TRIGGER_SIGNAL) gmg_report_now made: its
 * number, or 0 when GPUMEM_REPORT names no file (a stream, none);
 * *fell_back when a file of it could not be written (stderr had it);
 * *pid_named when their names carry the pid (a forked child's, its
 * pattern without %p). */
unsigned gmg_report_signal_dump(int *fell_back, int *pid_named);

/* Is the calling thread in the middle of a report or a refusal message,
 * holding the report side's locks? exit() called there (by a signal
 * handler of the program's, or by libdw, which exits when it runs out of
 * memory) must not make the exit report: it would wait for those locks,
 * this thread's own, for ever. enter/leave bracket such a stretch. */
int gmg_report_busy(void);
void gmg_report_busy_enter(void);
void gmg_report_busy_leave(void);
/* The lock held over a report's write to stderr's file, and over a
 * refusal's message: none lands inside another. */
void gmg_report_stream_lock(void);
int gmg_report_stream_trylock(void); /* 1: taken */
void gmg_report_stream_unlock(void);

/* Call sites' names for labels: "function file:line" of each stack's first
 * frame outside the guard, into names[k * each] (one symbolizer for all). */
void gmg_report_site_names(const uint32_t *stacks, size_t n, char *names, size_t each);

/* At the process's first CUDA use: say once if GPUMEM_REPORT's directory
 * cannot take reports (they go to stderr then). */
void gmg_report_check_path(void);

/* A refusal as it stood at the refusal: the call, and the few biggest live
 * stacks of its device then, with what the guard could not track then.
 * Taken on the refusing thread (gmg_report_refusal_capture: the live
 * totals per stack, O(stacks), no lock, no walk of the table), so that the
 * message says what held the memory when the call was refused, not when
 * the message is written. */
#define GMG_REFUSAL_STACKS 16  /* taken by stack, then merged by call site (sites.h) */
#define GMG_REFUSAL_SHOWN 3    /* ... of which the message shows the biggest */
struct gmg_refusal_state {
    struct gmg_refusal ev;
    size_t ntop;
    struct gmg_group top[GMG_REFUSAL_STACKS];   /* biggest first */
    uint64_t live_bytes;                        /* of every live stack of the device, kept or not */
    struct gmg_track_lost lost;
};
void gmg_report_refusal_capture(const struct gmg_refusal *ev, struct gmg_refusal_state *out);

/* The message's first line alone on stderr: the refused call, the quota,
 * the bytes in use, then `outcome` in parentheses. Formatted on the stack,
 * one write(2): no lock, no allocation (for when the whole message cannot
 * be had, or not yet). */
void gmg_report_refusal_short(const struct gmg_refusal *ev, const char *outcome);

/* Explain a refusal on stderr from its state: the refused call, then
 * (fail) the biggest live stacks of its device at the refusal, or (abort)
 * those and a whole report. `ready` (may be NULL) is called with `arg`
 * once the message is formatted, just before it is written: the reporter
 * settles there whether the refused call's first line went first
 * (reporter.c). 1: explained; 0: its call site's was already. */
int gmg_report_refusal(const struct gmg_refusal_state *st, void (*ready)(void *), void *arg);

/* Model building (model.c) and fragmentation (frag.c). The model's walk of
 * the table notes each record for fragmentation: per device, the address
 * and size of each device pointer, 16 bytes (for a device pointer, `hi`
 * holds the size asked for until compute makes it the end). */
int gmg_report_build(struct gmg_report *r, enum gmg_trigger trigger);
void gmg_report_free(struct gmg_report *r);
struct gmg_span { uint64_t lo, hi; };
struct gmg_frag_input { struct gmg_span *v; size_t n, cap; int failed; };
void gmg_frag_note(struct gmg_frag_input *in, int ndev, const struct gmg_alloc *a);
/* Is the record a device pointer of the driver's own allocator (what
 * fragmentation and the memviz snapshot count)? */
int gmg_frag_counts(const struct gmg_alloc *a);
void gmg_frag_compute(struct gmg_report *r, struct gmg_frag_input *in, size_t nrecords);
/* Each device's free memory, into r->frag (gmg_report_dev.meminfo): apart
 * from compute, for the reports that show it only (output.c), since where
 * no context answers it opens and initialises NVML. */
void gmg_frag_meminfo(struct gmg_report *r);

/* Owners and pools (owners.c): each group's owner and pool, the retained
 * totals (taken out of live_* and reclaimed_*) and the summary by owner.
 * Called by gmg_report_build once the symbolizer is taken, before the
 * suppressions (a pool's segment is no leak to suppress). */
void gmg_report_owners(struct gmg_report *r);
/* Is g the group that holds NVTX heap k's segment (r->heaps[k], once
 * gmg_report_owners has named the heaps' pools): the heap's pool's, of the
 * segment's stack, family and device? Only for the first heap over a
 * segment (the one whose `held` counts). */
int gmg_report_heap_group(const struct gmg_report *r, size_t k, const struct gmg_group *g);
/* The bytes of g's segments that NVTX regions hold (at most g's bytes): the
 * regions are groups of their own, so that every picture that adds groups
 * up (folded stacks, the page's flame graphs) counts g's bytes less these.
 * 0 for a group that holds no heap's segment. */
uint64_t gmg_report_group_regions(const struct gmg_report *r, const struct gmg_group *g);
/* What is live now on `device` (-1: every device), as an exit report would
 * count it: unsuppressed leaks (live and reclaimed allocations that are no
 * pool's segment, NVTX regions included) and what pools retain (their
 * segments, less NVTX regions in them). For the public API. */
void gmg_report_query(int device, uint64_t *leaked, uint64_t *retained);
/* The owner and pool of one stack (pool NULL when none, or GPUMEM_POOLS=off). */
const char *gmg_report_stack_owner(struct gmg_symbolizer *sym, uint32_t stack, const char **pool);
/* Text: the pools' section and the summary by owner. */
void gmg_report_text_pools(const struct gmg_report *r, struct gmg_buf *b);
/* JSON: ',"owners":[...]' */
void gmg_report_json_owners(const struct gmg_report *r, struct gmg_buf *b);

/* Writers. */
void gmg_report_text(const struct gmg_report *r, struct gmg_buf *b);
void gmg_report_json(const struct gmg_report *r, struct gmg_buf *b);
/* The JSON report with each list of groups cut to its `cap` biggest (0:
 * all), the rest summed into "LIST_folded" (the HTML page's data). */
void gmg_report_json_capped(const struct gmg_report *r, struct gmg_buf *b, size_t cap);
/* The HTML page (base/page.h) around the capped JSON report. */
void gmg_report_html(const struct gmg_report *r, struct gmg_buf *b);
/* A pickle of the shape of torch.cuda.memory._snapshot() (memviz.c). */
void gmg_report_memviz(const struct gmg_report *r, struct gmg_buf *b);
/* Chrome trace events (Perfetto, chrome://tracing). */
void gmg_report_trace(const struct gmg_report *r, struct gmg_buf *b);
void gmg_report_folded(const struct gmg_report *r, struct gmg_buf *b);

/* A stack's frames in the text format. */
void gmg_report_text_stack(const struct gmg_report *r, struct gmg_buf *b, uint32_t stack);

/* One group in the text format: the size line and its frames. */
void gmg_report_text_group(const struct gmg_report *r, struct gmg_buf *b, const struct gmg_group *g);

/* The text format's warning that frames so far were named from the dynamic
 * symbol tables alone (gmg_report_dynamic_only); nothing when none was. */
void gmg_report_text_dynamic_only(const struct gmg_report *r, struct gmg_buf *b);

/* fork child: reports start over, numbered from 1, with the child's pid in
 * paths without %p (output.c, model.c). */
void gmg_report_atfork_child(void);
/* A child made without fork handlers (_Fork, a raw clone), at its exit:
 * the locks of this layer that a thread of the parent may have held at
 * the fork (the reporter thread samples the timeline every few ms) are
 * made anew, with the timeline and what was kept of the peak, before the
 * child's exit report uses them. Dumps keep their numbers. */
void gmg_report_orphan_child(void);
void gmg_report_model_atfork_child(void);

const char *gmg_trigger_name(enum gmg_trigger t);
int gmg_group_is_allocation(int family);   /* not a VA range or a mapping (core/ranges.h) */
/* The one order of groups, for qsort: biggest first, then by count, and
 * equal ones by key; and the key alone: stack, family, device. */
int gmg_group_by_bytes(const void *a, const void *b);
int gmg_group_by_key(const void *a, const void *b);
/* Of what the guard could not track, the reserved ranges and mappings. */
uint64_t gmg_untracked_ranges(const struct gmg_track_lost *l);

#endif
