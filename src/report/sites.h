/*
 * sites.h - call sites as people read them (report layer). Two stacks that
 * name the same frames (function, file:line and module; a frame with no
 * file:line also by its offset; a Python frame by function, file and line)
 * are one call site, however many return addresses the compiler made of
 * it (an unrolled loop calls from four addresses on one source line), as
 * memray and heaptrack group by location. The depot's stack ids stay what
 * the allocation path records; the report groups and the refusal messages
 * (once per site) go by site. Symbolizes, so report time only.
 */
#ifndef GMG_REPORT_SITES_H
#define GMG_REPORT_SITES_H

#include "report/report.h"

/* Merge the groups of `g` whose stacks are one site (and whose API and
 * device are the same): each merged group keeps the stack of its biggest
 * member; the list comes back biggest first, *n its new length. */
void gmg_sites_merge(struct gmg_symbolizer *sym, struct gmg_group *g, size_t *n);

/* One stack per site across lists each merged already: every group's
 * stack in lists[0..nl) (counts[i] groups each) becomes the first of its
 * site met, and so does each of stacks[0..ns) (a stack of no group's site
 * stays itself). For matching stacks across lists by id (owners.c: NVTX
 * heaps' segments). 0, or -1 out of memory (nothing changed). */
int gmg_sites_unify(struct gmg_symbolizer *sym, struct gmg_group **lists, const size_t *counts, size_t nl,
                    uint32_t *stacks, size_t ns);

/* Refusals, once per site: 1 the first time a stack of this site is asked
 * about, then 0; the quota's refusals and the driver's out of memory
 * (`driver`) each once. With no stack (0), once per allocation family.
 * Callers are serialised (the reporter's explain lock). */
int gmg_sites_first_refusal(uint32_t stack, int family, int driver);

/* Timeline marks, once per site and device: 1 the first time a stack of
 * this site is marked on `device`'s timeline, then 0; the quota's
 * refusals and the driver's out of memory (`driver`) each once. With no
 * stack (0), once per allocation family and device. Callers are
 * serialised (the reporter's explain lock). */
int gmg_sites_first_mark(uint32_t stack, int family, int driver, int device);

/* A forked child, whose timeline starts empty: no site marked yet. */
void gmg_sites_atfork_child(void);

#endif
