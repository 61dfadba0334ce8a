/*
 * status.h - the status page `gpumemguard top` reads (cluster layer): a
 * small file under /dev/shm per guarded process, laid out as
 * status_layout.h says, created by the reporter thread's first tick and
 * rewritten in place by each later one (about once a second): per device
 * the bytes in use, limit, peak, refusals, driver out-of-memory answers,
 * growth since the previous write and live allocations; the program and
 * its arguments, the group, and the biggest live call site, named through
 * the function guard.c passes in (the metrics file's). Nothing on the
 * allocation path writes it. The process keeps no descriptor open (only a
 * mapping), removes the file at exit, and publishes none under secure
 * execution. A forked child publishes a page of its own. After its first
 * page, a process removes the pages of its user's dead processes.
 */
#ifndef GMG_CLUSTER_STATUS_H
#define GMG_CLUSTER_STATUS_H

#include "cluster/metrics.h"

/* Create the page if there is none yet (or it was removed under the
 * process), then rewrite it. The reporter thread's tick. */
void gmg_status_tick(gmg_site_namer name_site);

/* At exit: the page is removed, and no later tick makes it again. */
void gmg_status_remove(void);

/* Just before a fatal signal ends the process: the file goes, and a
 * process that lives on after all (a handler of its own installed
 * meanwhile) makes it again at its next tick. */
void gmg_status_unpublish(void);

/* In a forked child: the parent's page is left alone; the child's first
 * tick makes its own. */
void gmg_status_atfork_child(void);

/* At start-up: a page under this process's pid left by the program it was
 * before an exec is removed (the new program publishes its own once it uses
 * the driver; until then it has none). */
void gmg_status_forget_exec(void);

#endif
