/*
 * group_layout.h - the shared segment of GPUMEM_GROUP (cluster layer), as
 * every guard of this segment version lays it out. Only cluster/group.c
 * writes it; tests read it from outside.
 *
 * One POSIX shared-memory object per user and group name,
 * /dev/shm/gpumemguard-UID-NAME, mode 0600, never unlinked by the guard.
 *
 * Liveness is a record lock, not a pid: a member holds an fcntl write lock
 * on byte GMG_GROUP_LOCK_SLOT(i) of the object for as long as it lives, and
 * the kernel drops it when the process dies (SIGKILL included), execs, or
 * forks (a child holds none of its parent's locks). A slot in state 1 whose
 * byte can be locked by someone else belongs to a dead process: its bytes go
 * back to the group. Byte GMG_GROUP_LOCK_MEMBERSHIP serialises joining,
 * reclaiming and the clean start of a group that has no live member.
 *
 * Invariant: for every device, dev[d].used >= the sum of slot[i].bytes[d];
 * a reservation adds to dev[d].used first (a compare-and-swap against the
 * budget) and to its slot second; a release and a reclaim take from the
 * slot first and then the same amount from dev[d].used. So the counters
 * never underflow, and a process killed between the two steps leaves at
 * most that one call's bytes counted (never fewer), until the group next
 * starts clean.
 */
#ifndef GMG_CLUSTER_GROUP_LAYOUT_H
#define GMG_CLUSTER_GROUP_LAYOUT_H

#include <stdint.h>

#define GMG_GROUP_MAGIC   0x70756f7267676d67ull  /* "gmggroup" */
#define GMG_GROUP_VERSION 1
#define GMG_GROUP_SLOTS   256                    /* live members at once */
#define GMG_GROUP_DEVICES 64
#define GMG_GROUP_NOLIMIT UINT64_MAX             /* budget: the group has no limit */

#define GMG_GROUP_LOCK_MEMBERSHIP 0
#define GMG_GROUP_LOCK_SLOT(i) (1 + (i))

struct gmg_group_dev {
    uint64_t budget;   /* 0: not set yet; GMG_GROUP_NOLIMIT: none; else bytes */
    uint64_t used;     /* bytes reserved by every member */
    uint64_t peak;     /* the most `used` was since the group started clean */
    uint64_t pad[5];
} __attribute__((aligned(64)));

struct gmg_group_slot {
    uint32_t state;    /* 0: free, 1: a member (alive while it holds its lock) */
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
    char name[72];
    struct gmg_group_dev dev[GMG_GROUP_DEVICES];
    struct gmg_group_slot slot[GMG_GROUP_SLOTS];
};

#endif
