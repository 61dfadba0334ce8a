/*
 * group.h - GPUMEM_GROUP (SPEC §9), cluster layer: one budget per device
 * shared by every process of the same user with the same group name.
 *
 * The budget is GPUMEM_LIMIT, set by the group's first member to reserve on
 * a device; a member whose own GPUMEM_LIMIT differs is told once and held to
 * the group's. The counters live in a shared-memory segment
 * (cluster/group_layout.h); the core quota reaches them through the
 * functions of gmg_group_pool(), which guard.c installs
 * (gmg_quota_set_pool), so that the core never calls upward.
 *
 * A process joins the group (takes a member slot) at its first reservation.
 * The group's bytes are the sum of the slots, each changed by one atomic
 * instruction at a time, so the reservations of a member that died at any
 * instruction, SIGKILL included, go back exactly when another member finds
 * it dead: at a join, when a reservation would be refused, before numbers
 * are shown, and every second on the reporter thread. A group whose
 * members are all gone starts clean at the next join: no later process
 * sees a dead one's numbers. No lock shared with other processes is held
 * for long, and none is waited for more than 250 ms: a stopped member
 * stalls nobody. Only the process that opened the segment (or a fork()
 * child, after gmg_group_atfork_child) is a member: a child made without
 * fork handlers or by vfork, with the same memory and another pid, never
 * acts on the membership.
 */
#ifndef GMG_CLUSTER_GROUP_H
#define GMG_CLUSTER_GROUP_H

#include "core/quota.h"

/* Start-up: open (creating it if needed) and check this user's segment for
 * group `name`. 0; 1 when another process is making the segment and does
 * not let go of its lock (stopped?): this one starts, and joins once it is
 * made (until then, its allocations are refused under a budget); or -1
 * with a message in err (the process stops): a segment of another user, of
 * another mode, size or version, no room. */
int gmg_group_open(const char *name, char *err, unsigned errlen);

/* The quota's functions over the open segment. */
const struct gmg_quota_pool *gmg_group_pool(void);

/* Give the reservations of dead members back (reporter thread, each second). */
void gmg_group_tick(void);

/* Exit: give this process's reservations back now (its memory goes with
 * it); later releases leave the group's counters alone. Nothing in a
 * process that is not the member. */
void gmg_group_leave(void);

/* fork child: it holds nothing and no slot, and opens the segment anew (the
 * inherited open carries its parent's locks); it joins as a new member at
 * its first reservation. */
void gmg_group_atfork_child(void);

/* The segment's name, "/gpumemguard-UID-NAME" ("" before open). */
const char *gmg_group_shm_name(void);

#endif
