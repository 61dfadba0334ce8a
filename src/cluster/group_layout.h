/*
 * group_layout.h - the shared segment of GPUMEM_GROUP (cluster layer), as
 * every guard of this segment version lays it out. Only cluster/group.c
 * writes it; tests read it from outside.
 *
 * One POSIX shared-memory object per user and group name,
 * /dev/shm/gpumemguard-UID-NAME, mode 0600, one link, the group's name
 * inside it; never unlinked by the guard.
 *
 * What the group holds is the sum of its slots: there is no shared
 * counter. A member first sums every slot and refuses, writing nothing,
 * what does not fit; else it reserves with one atomic add to its own slot,
 * sums again (a sequentially consistent add, then loads: of two members
 * adding at once, the later one sees the other's bytes) and takes its add
 * back if the sum is above the budget. Each step is one atomic
 * instruction on the member's own slot, so a member killed at any
 * instruction leaves in its slot exactly what it took, and reclaiming the
 * slot gives back exactly that: never more, never less.
 *
 * Liveness is an open-file-description lock (F_OFD_SETLK), not a pid: a
 * member holds a write lock on byte GMG_GROUP_LOCK_SLOT(i) through its own
 * open of the object for as long as it lives. The kernel drops it when the
 * last descriptor of that open is closed: at death (SIGKILL included) or
 * exec (the descriptor is close-on-exec). Closing another descriptor of
 * the same file (a program reading the group's numbers) leaves it alone,
 * as it would not a POSIX record lock. A mapping holds the open it was
 * made through, so the segment is mapped through another open, closed at
 * once. A child made by fork() opens the object anew and holds none of its
 * parent's locks. A slot in state 1
 * whose byte can be locked by someone else belongs to a dead process: its
 * bytes go back to the group. Byte GMG_GROUP_LOCK_MEMBERSHIP serialises
 * the clean start of a group that has no live member (and a segment's
 * initialisation); it is held for microseconds, and a process that cannot
 * have it within a bounded wait goes on without it (its holder lives, so
 * the group is not to start clean).
 *
 * Version 1 kept a shared counter `used` beside the slots; its segments
 * are refused by version 2 (same size: the version field tells them apart).
 */
#ifndef GMG_CLUSTER_GROUP_LAYOUT_H
#define GMG_CLUSTER_GROUP_LAYOUT_H

#include <stdint.h>

#define GMG_GROUP_MAGIC   0x70756f7267676d67ull  /* "gmggroup" */
#define GMG_GROUP_VERSION 2
#define GMG_GROUP_SLOTS   256                    /* live members at once */
#define GMG_GROUP_DEVICES 64
#define GMG_GROUP_NOLIMIT UINT64_MAX             /* budget: the group has no limit */

#define GMG_GROUP_LOCK_MEMBERSHIP 0
#define GMG_GROUP_LOCK_SLOT(i) (1 + (i))

struct gmg_group_dev {
    uint64_t budget;   /* 0: not set yet; GMG_GROUP_NOLIMIT: none; else bytes */
    uint64_t peak;     /* the most the slots held at once since the group started clean */
    uint64_t pad[6];
} __attribute__((aligned(64)));

struct gmg_group_slot {
    uint32_t state;    /* 0: free, 1: a member (alive while its lock is held) */
    int32_t pid;       /* the member's pid (for people: liveness is the lock) */
    uint64_t joined;   /* CLOCK_REALTIME seconds when it joined */
    uint64_t bytes[GMG_GROUP_DEVICES];   /* what that member holds, per device */
} __attribute__((aligned(64)));

struct gmg_group_seg {
    uint64_t magic;    /* written last by the initialiser */
    uint32_t version;
    uint32_t size;     /* sizeof(struct gmg_group_seg) */
    uint32_t slots, devices;
    uint32_t uid;      /* the owner, as the name says */
    uint32_t starts;   /* clean starts of the group */
    char name[72];     /* the group's name (GPUMEM_GROUP) */
    uint32_t hi;       /* no slot at or above this index has been used: sums stop here */
    struct gmg_group_dev dev[GMG_GROUP_DEVICES];
    struct gmg_group_slot slot[GMG_GROUP_SLOTS];
};

#endif
