/* group.c - see group.h and group_layout.h. */
#define _GNU_SOURCE
#include "cluster/group.h"

#include "base/buf.h"
#include "base/config.h"
#include "base/fd.h"
#include "base/log.h"
#include "cluster/group_layout.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

_Static_assert(GMG_GROUP_DEVICES == GMG_MAX_DEVICES, "a device index of the quota is a device of the segment");
_Static_assert(sizeof(struct gmg_group_seg) < UINT32_MAX, "size fits its field");

static struct gmg_group_seg *seg;
/* 1: the segment was being made by a process that did not let go of its
 * lock (stopped?) when this one started: made ready later (seg_pending_try);
 * -1: it turned out not to be the group's; 0: ready, or never pending */
static int pending;
static int seg_fd = -1;
static dev_t seg_dev;
static ino_t seg_ino;
static char shm_name[128];

/* This process's membership. joined: 0 not yet, 1 member, -1 the last try
 * failed (tried again after a second). member_pid: the process this state
 * belongs to (the one that opened the segment, or a fork() child, whose
 * handler takes it over); any other pid sharing this memory (a _Fork or
 * raw clone child, a vfork child) is no member and changes nothing. */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pid_t member_pid;
static int joined;
static int my_slot = -1;
/* Bytes counted while the segment was not made yet (pending) by a process
 * with no limit of its own, or under GPUMEM_ON_LIMIT=warn, which never
 * refuses: not in any slot yet. Moved into the slot when it joins; a free
 * before that takes them from here. */
static uint64_t owed[GMG_GROUP_DEVICES];
static int owed_moving; /* 1 while join_locked moves them: a free that missed them waits */
static int left;
static long long join_failed_ms;
static long long last_scan_ms;
static uint8_t noticed[GMG_GROUP_DEVICES];

#define RECLAIM_EVERY_MS 20   /* at most this often on refusals */
#define LOCK_WAIT_MS 250      /* the membership lock: its holder works for microseconds; a stopped one
                                 is waited for this long, then gone on without */
#define CONFLICT_TRIES 8      /* a refusal that only another member's passing reservation caused */

const char *gmg_group_shm_name(void) { return shm_name; }

static int seg_pending_try(void);

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Is the calling process the member this state is for? (getpid() is a
 * system call; only group paths ask.) */
static int mine(void) { return getpid() == __atomic_load_n(&member_pid, __ATOMIC_RELAXED); }

/* A process that is not the member (made without fork handlers) and
 * shares the member's open of the segment: its descriptor would keep the
 * member's locks, its liveness, after the member died. Closed once in that
 * process (the number is its own from then on: never closed twice). */
static pid_t dropped_in;
static void drop_inherited(void)
{
    pid_t me = getpid();
    if (__atomic_exchange_n(&dropped_in, me, __ATOMIC_RELAXED) != me && seg_fd >= 0)
        close(seg_fd);
}

/* ---------------------------------------------- open-file-description locks */

static int setlk_fd(int fd, short type, off_t start, off_t len)
{
    /* l_pid must be 0 for OFD locks */
    struct flock fl = { .l_type = type, .l_whence = SEEK_SET, .l_start = start, .l_len = len, .l_pid = 0 };
    int r;
    do
        r = fcntl(fd, F_OFD_SETLK, &fl);
    while (r < 0 && errno == EINTR);
    return r;
}

static int setlk(short type, off_t start, off_t len) { return setlk_fd(seg_fd, type, start, len); }

/* Byte GMG_GROUP_LOCK_MEMBERSHIP. wait_ms 0: one try. Polled rather than
 * waited for, so that a holder stopped by a debugger cannot hang us. 0
 * taken; -1 another holds it; -2 the lock itself failed (errno). */
static int membership_lock(int wait_ms)
{
    long long until = now_ms() + wait_ms;
    long ns = 50000;
    for (;;) {
        if (setlk(F_WRLCK, GMG_GROUP_LOCK_MEMBERSHIP, 1) == 0)
            return 0;
        if (errno != EAGAIN && errno != EACCES)
            return -2; /* not held by another: the lock itself fails */
        if (now_ms() >= until)
            return -1;
        struct timespec ts = { 0, ns };
        nanosleep(&ts, NULL);
        if (ns < 2000000)
            ns *= 2;
    }
}

static void membership_unlock(void)
{
    int saved = errno;
    setlk(F_UNLCK, GMG_GROUP_LOCK_MEMBERSHIP, 1);
    errno = saved;
}

/* Does another open of the segment (another process) hold a member's lock? */
static int others_alive(void)
{
    struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = GMG_GROUP_LOCK_SLOT(0),
                        .l_len = GMG_GROUP_SLOTS, .l_pid = 0 };
    return fcntl(seg_fd, F_OFD_GETLK, &fl) != 0 || fl.l_type != F_UNLCK;
}

/* ---------------------------------------------------------- counters */

static void raise_peak(uint64_t *peak, uint64_t now)
{
    uint64_t p = __atomic_load_n(peak, __ATOMIC_RELAXED);
    while (now > p && !__atomic_compare_exchange_n(peak, &p, now, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}

static uint32_t slots_in_use(void)
{
    uint32_t hi = __atomic_load_n(&seg->hi, __ATOMIC_SEQ_CST);
    return hi < GMG_GROUP_SLOTS ? hi : GMG_GROUP_SLOTS;
}

/* The group's bytes on dev: the sum of its slots (UINT64_MAX if it would
 * overflow, which only a tampered segment gives). */
static uint64_t sum_slots(int dev)
{
    uint32_t hi = slots_in_use();
    uint64_t sum = 0;
    for (uint32_t i = 0; i < hi; i++)
        if (__builtin_add_overflow(sum, __atomic_load_n(&seg->slot[i].bytes[dev], __ATOMIC_SEQ_CST), &sum))
            return UINT64_MAX;
    return sum;
}

/* A slot's bytes back to the group. */
static void empty_slot(struct gmg_group_slot *s)
{
    for (int d = 0; d < GMG_GROUP_DEVICES; d++)
        if (__atomic_load_n(&s->bytes[d], __ATOMIC_RELAXED))
            __atomic_store_n(&s->bytes[d], 0, __ATOMIC_SEQ_CST);
}

/* Take n from a member's own slot, never below 0 (the exit path may have
 * emptied it while another thread still releases). */
static uint64_t slot_sub(uint64_t *v, uint64_t n)
{
    uint64_t cur = __atomic_load_n(v, __ATOMIC_RELAXED), take;
    do
        take = cur < n ? cur : n;
    while (!__atomic_compare_exchange_n(v, &cur, cur - take, 1, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
    return take;
}

/* ------------------------------------------------------------ members */

/* Slot i, not ours: if its member is dead (state 1, its lock free), its
 * bytes back to the group and the slot free. Its lock, held meanwhile,
 * keeps a joiner or another reclaimer off it. 1 if it was reclaimed. */
static int reclaim_slot(int i)
{
    struct gmg_group_slot *s = &seg->slot[i];
    if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) != 1)
        return 0;
    if (setlk(F_WRLCK, GMG_GROUP_LOCK_SLOT(i), 1) != 0)
        return 0; /* its member lives (or someone is at the slot now) */
    int n = 0;
    if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) == 1) { /* still: nobody took it meanwhile */
        int pid = s->pid;
        empty_slot(s);
        s->pid = 0;
        __atomic_store_n(&s->state, 0, __ATOMIC_RELEASE);
        gmg_debug("GPUMEM_GROUP=%s: member %d is gone; its reservations are back", gmg_cfg.group, pid);
        n = 1;
    }
    setlk(F_UNLCK, GMG_GROUP_LOCK_SLOT(i), 1);
    return n;
}

/* mu held: every dead member's slot back. No lock of the group's is held
 * for the scan: each slot is settled under its own lock. */
static int reclaim_dead(void)
{
    int n = 0;
    uint32_t hi = slots_in_use();
    for (uint32_t i = 0; i < hi; i++)
        if ((int)i != my_slot)
            n += reclaim_slot((int)i);
    return n;
}

/* Membership lock held, no other live member: whatever the segment says is
 * a dead group's; start from nothing. A slot whose lock someone holds now
 * (a process that joined without the membership lock) is left alone. */
static void start_clean_locked(void)
{
    int dirty = 0;
    for (int d = 0; d < GMG_GROUP_DEVICES && !dirty; d++)
        dirty = __atomic_load_n(&seg->dev[d].budget, __ATOMIC_RELAXED) ||
                __atomic_load_n(&seg->dev[d].peak, __ATOMIC_RELAXED);
    for (int i = 0; i < GMG_GROUP_SLOTS && !dirty; i++)
        dirty = __atomic_load_n(&seg->slot[i].state, __ATOMIC_RELAXED) != 0;
    if (!dirty)
        return;
    for (int i = 0; i < GMG_GROUP_SLOTS; i++)
        if (i != my_slot)
            reclaim_slot(i);
    for (int d = 0; d < GMG_GROUP_DEVICES; d++) {
        __atomic_store_n(&seg->dev[d].budget, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&seg->dev[d].peak, 0, __ATOMIC_RELAXED);
    }
    __atomic_add_fetch(&seg->starts, 1, __ATOMIC_RELEASE);
}

/* A group file cut short by another process (truncate, ': >') is made
 * whole again before anything reads past its end: the mapping would fault
 * there (SIGBUS) in every member. Its numbers, zeroes now, start again,
 * said once. 0 when it is short and could not be made whole. `st`: the
 * file's, as fstat gave it. */
static void rejoin_after_cut(void);

/* A segment's header, its magic last (a reader trusts nothing before it). */
static void write_header(struct gmg_group_seg *s, const char *name)
{
    s->version = GMG_GROUP_VERSION;
    s->size = (uint32_t)sizeof *s;
    s->slots = GMG_GROUP_SLOTS;
    s->devices = GMG_GROUP_DEVICES;
    s->uid = (uint32_t)geteuid();
    snprintf(s->name, sizeof s->name, "%s", name);
    __atomic_store_n(&s->magic, GMG_GROUP_MAGIC, __ATOMIC_RELEASE);
}

/* The group's high mark raised over slot i: the sums look at it. */
static void cover_slot(struct gmg_group_seg *s, int i)
{
    uint32_t hi = __atomic_load_n(&s->hi, __ATOMIC_SEQ_CST);
    while (hi < (uint32_t)i + 1 &&
           !__atomic_compare_exchange_n(&s->hi, &hi, (uint32_t)i + 1, 1, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
        ;
}

/* A slot marked this process's: its pid, when it joined, its state last. */
static void mark_slot_mine(struct gmg_group_slot *s)
{
    s->pid = (int32_t)getpid();
    s->joined = (uint64_t)time(NULL);
    __atomic_store_n(&s->state, 1, __ATOMIC_SEQ_CST);
}

static int seg_whole(const struct stat *st)
{
    if (!__atomic_load_n(&seg, __ATOMIC_ACQUIRE))
        return 1;
    if ((size_t)st->st_size >= sizeof(struct gmg_group_seg)) {
        rejoin_after_cut(); /* made whole by another member: this one's slot again */
        return 1;
    }
    static int said;
    int ok = ftruncate(seg_fd, (off_t)sizeof(struct gmg_group_seg)) == 0;
    if (!said) {
        said = 1;
        gmg_error("GPUMEM_GROUP=%s: the group's file /dev/shm%s was cut short by another process%s", gmg_cfg.group,
                  shm_name,
                  ok ? ": made whole again; the group's numbers start again from here (what its members held "
                       "before is no longer counted)"
                     : "; its members may fault on it");
    }
    if (ok)
        rejoin_after_cut();
    return ok;
}

/* A file made whole after it was cut short is zeroes: its header, this
 * member's slot (state, pid, the group's high mark over it) written again,
 * without clearing what any member has counted since; the budget is set
 * again by the next reservation, as in a new group. Every member does it
 * for itself at its next look (each second, on its report thread). What a
 * member held before the cut is no longer in its slot (its frees of it
 * stop at zero). */
static void rejoin_after_cut(void)
{
    struct gmg_group_seg *s = __atomic_load_n(&seg, __ATOMIC_ACQUIRE);
    int i = __atomic_load_n(&my_slot, __ATOMIC_ACQUIRE);
    if (!s || i < 0 || !mine() || __atomic_load_n(&left, __ATOMIC_ACQUIRE))
        return;
    if (__atomic_load_n(&s->magic, __ATOMIC_ACQUIRE) == 0) /* the same values from every member */
        write_header(s, gmg_cfg.group);
    if (__atomic_load_n(&s->slot[i].state, __ATOMIC_ACQUIRE) == 1)
        return;
    cover_slot(s, i);
    mark_slot_mine(&s->slot[i]);
}

/* Is our descriptor still the segment (a program may close descriptors it
 * does not own, as a child about to exec often does), and whole? */
static int fd_is_ours(void)
{
    struct stat st;
    return seg_fd >= 0 && fstat(seg_fd, &st) == 0 && st.st_dev == seg_dev && st.st_ino == seg_ino && seg_whole(&st);
}

/* The segment opened again (O_NOFOLLOW), its descriptor out of the
 * program's way (base/fd.h): at 0, 1 or 2 (a program started with one of
 * them closed) the program's own output would be written into it. */
static int seg_open(void)
{
    char p[200];
    snprintf(p, sizeof p, "/dev/shm%s", shm_name);
    return gmg_fd_raise(shm_open(shm_name, O_RDWR | O_NOFOLLOW | O_CLOEXEC, 0), p);
}

/* A failed join is said once per process (it is tried again each second). */
static int join_said;
#define JOIN_ERROR(...) do { if (!join_said) { join_said = 1; gmg_error(__VA_ARGS__); } } while (0)

/* Take slot i for this process if it is free, or its member dead. */
static int claim_slot(int i)
{
    struct gmg_group_slot *s = &seg->slot[i];
    if (setlk(F_WRLCK, GMG_GROUP_LOCK_SLOT(i), 1) != 0)
        return 0;
    cover_slot(seg, i); /* ours now: the sums must look at it before it holds a byte */
    empty_slot(s); /* a dead member's, not reclaimed yet; nothing, normally */
    mark_slot_mine(s);
    return 1;
}

/* mu held. */
static int join_locked(void)
{
    if (!fd_is_ours()) {
        /* reopen the same object (only ours: checked again) */
        int fd = seg_open();
        struct stat st;
        if (fd < 0 || fstat(fd, &st) != 0 || st.st_dev != seg_dev || st.st_ino != seg_ino) {
            if (fd >= 0)
                close(fd);
            JOIN_ERROR("GPUMEM_GROUP=%s: the descriptor of /dev/shm%s was closed by the program and the segment "
                      "is no longer there", gmg_cfg.group, shm_name);
            return -1;
        }
        seg_fd = fd;
    }
    /* the membership lock only decides a clean start: a holder that does
     * not let go soon (stopped) is alive, so the group is not to start
     * clean, and the slot is taken without it */
    int locked = membership_lock(LOCK_WAIT_MS) == 0;
    if (!locked)
        gmg_debug("GPUMEM_GROUP=%s: the membership lock is held by a process that does not let go (stopped?): "
                  "joining without it", gmg_cfg.group);
    if (locked && !others_alive())
        start_clean_locked();
    else
        reclaim_dead();
    __atomic_store_n(&last_scan_ms, now_ms(), __ATOMIC_RELAXED);
    int got = -1;
    for (int pass = 0; pass < 2 && got < 0; pass++) /* free slots first, then dead members' */
        for (int i = 0; i < GMG_GROUP_SLOTS && got < 0; i++)
            if (__atomic_load_n(&seg->slot[i].state, __ATOMIC_ACQUIRE) == (uint32_t)pass && claim_slot(i))
                got = i;
    if (locked)
        membership_unlock();
    if (got < 0) {
        JOIN_ERROR("GPUMEM_GROUP=%s: the group has %d live members already; this process's allocations are "
                  "refused under a budget, uncounted without one", gmg_cfg.group, GMG_GROUP_SLOTS);
        return -1;
    }
    __atomic_store_n(&my_slot, got, __ATOMIC_SEQ_CST);
    /* what was counted while it waited, into its slot (after my_slot: a
     * free that finds its bytes gone from `owed` finds the slot) */
    int moved = 0;
    __atomic_store_n(&owed_moving, 1, __ATOMIC_SEQ_CST);
    for (int d = 0; d < GMG_GROUP_DEVICES; d++) {
        uint64_t o = __atomic_exchange_n(&owed[d], 0, __ATOMIC_SEQ_CST);
        if (o) {
            __atomic_fetch_add(&seg->slot[got].bytes[d], o, __ATOMIC_SEQ_CST);
            raise_peak(&seg->dev[d].peak, sum_slots(d));
            moved = 1;
        }
    }
    __atomic_store_n(&owed_moving, 0, __ATOMIC_SEQ_CST);
    if (moved)
        gmg_debug("GPUMEM_GROUP=%s: what this process counted while the segment was being made is the group's now",
                  gmg_cfg.group);
    gmg_debug("GPUMEM_GROUP=%s: joined as member %d (/dev/shm%s)", gmg_cfg.group, got, shm_name);
    return 0;
}

/* mu held, the segment ready: a process that counted bytes while it
 * waited for it (owed) and has not joined joins, and they go into the
 * group; a failed join is tried again a second later. */
static void join_owed_locked(void)
{
    int owes = 0;
    for (int d = 0; d < GMG_GROUP_DEVICES && !owes; d++)
        owes = __atomic_load_n(&owed[d], __ATOMIC_ACQUIRE) != 0;
    if (!owes || __atomic_load_n(&joined, __ATOMIC_ACQUIRE) == 1 ||
        now_ms() - __atomic_load_n(&join_failed_ms, __ATOMIC_RELAXED) < 1000)
        return;
    int j = join_locked() == 0 ? 1 : -1;
    if (j < 0)
        __atomic_store_n(&join_failed_ms, now_ms(), __ATOMIC_RELAXED);
    __atomic_store_n(&joined, j, __ATOMIC_RELEASE);
}

static int ensure_joined(void)
{
    int j = __atomic_load_n(&joined, __ATOMIC_ACQUIRE);
    if (j == 1)
        return 1;
    if (!seg_pending_try())
        return 0; /* the segment is not made yet: no member */
    if (j < 0 && now_ms() - __atomic_load_n(&join_failed_ms, __ATOMIC_RELAXED) < 1000)
        return 0;
    pthread_mutex_lock(&mu);
    j = __atomic_load_n(&joined, __ATOMIC_ACQUIRE);
    if (j != 1) {
        j = join_locked() == 0 ? 1 : -1;
        if (j < 0)
            __atomic_store_n(&join_failed_ms, now_ms(), __ATOMIC_RELAXED);
        __atomic_store_n(&joined, j, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&mu);
    return j == 1;
}

/* Reclaim now if nobody of ours did lately. A process that has not joined
 * and finds no member alive starts the group clean (if the membership lock
 * is free at once), so that a process that only looks sees no dead one's
 * numbers either. Returns how many dead members were found. */
static int reclaim_now(int force)
{
    long long t = now_ms();
    if (!force && t - __atomic_load_n(&last_scan_ms, __ATOMIC_RELAXED) < RECLAIM_EVERY_MS)
        return 0;
    if (pthread_mutex_trylock(&mu) != 0)
        return 0;
    int n = 0;
    if (fd_is_ours()) {
        if (my_slot < 0 && !others_alive() && membership_lock(0) == 0) {
            if (!others_alive())
                start_clean_locked();
            membership_unlock();
            n = 1;
        } else {
            n = reclaim_dead();
        }
        __atomic_store_n(&last_scan_ms, t, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&mu);
    return n;
}

void gmg_group_tick(void)
{
    if (!mine() || !seg_pending_try())
        return;
    reclaim_now(1);
    /* bytes counted while it waited, by an allocation that raced with the
     * segment becoming ready (or a join that failed then): into the group */
    if (__atomic_load_n(&joined, __ATOMIC_ACQUIRE) != 1 && pthread_mutex_trylock(&mu) == 0) {
        join_owed_locked();
        pthread_mutex_unlock(&mu);
    }
}

/* --------------------------------------------------------- the budget */

static uint64_t wanted(uint64_t mine_limit) { return mine_limit ? mine_limit : GMG_GROUP_NOLIMIT; }

/* The group's budget for dev, set from `mine_limit` by the first member to
 * reserve there. 0: no limit; GMG_QUOTA_UNKNOWN: not set, and ours is not
 * known yet (refuse, as the quota does). */
static uint64_t settle_budget(int dev, uint64_t mine_limit)
{
    uint64_t *b = &seg->dev[dev].budget;
    uint64_t cur = __atomic_load_n(b, __ATOMIC_ACQUIRE);
    if (cur == 0 && mine_limit != GMG_QUOTA_UNKNOWN) {
        uint64_t want = wanted(mine_limit);
        if (__atomic_compare_exchange_n(b, &cur, want, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            cur = want;
    }
    if (cur == 0)
        return GMG_QUOTA_UNKNOWN;
    if (mine_limit != GMG_QUOTA_UNKNOWN && cur != wanted(mine_limit) &&
        !__atomic_exchange_n(&noticed[dev], 1, __ATOMIC_RELAXED)) {
        char a[GMG_SIZE_LEN], g[GMG_SIZE_LEN];
        if (mine_limit)
            gmg_fmt_size(a, sizeof a, mine_limit);
        else
            snprintf(a, sizeof a, "none");
        if (cur != GMG_GROUP_NOLIMIT)
            gmg_fmt_size(g, sizeof g, cur);
        else
            snprintf(g, sizeof g, "none");
        gmg_info("GPUMEM_GROUP=%s: this process's GPUMEM_LIMIT for device %d is %s, but the group's budget is %s "
                 "(set by its first member); the group's budget applies", gmg_cfg.group, dev, a, g);
    }
    return cur == GMG_GROUP_NOLIMIT ? 0 : cur;
}

static uint64_t g_budget(int dev, uint64_t mine_limit)
{
    if (!seg_pending_try()) /* not made yet: as a group whose budget is not set */
        return mine_limit == GMG_QUOTA_UNKNOWN ? 1 : mine_limit;
    uint64_t cur = __atomic_load_n(&seg->dev[dev].budget, __ATOMIC_ACQUIRE);
    if (cur == 0)
        return mine_limit == GMG_QUOTA_UNKNOWN ? 1 : mine_limit;
    return cur == GMG_GROUP_NOLIMIT ? 0 : cur;
}

/* Not the member (a child made without fork handlers, a vfork child): it
 * joins nothing; under a budget its allocations are refused. */
static int not_member(int dev, uint64_t mine_limit, int warn)
{
    uint64_t b = g_budget(dev, mine_limit);
    return b && !warn ? 0 : -1;
}

static int g_reserve(int dev, uint64_t bytes, uint64_t mine_limit, int warn, int *over)
{
    if (!mine()) {
        drop_inherited();
        return not_member(dev, mine_limit, warn);
    }
    int j = ensure_joined();
    if (!j && __atomic_load_n(&seg, __ATOMIC_ACQUIRE))
        j = ensure_joined(); /* made ready meanwhile, by another thread */
    if (!j) {
        /* the segment not made yet: with no limit of its own (or under
         * warn, which never refuses) the allocation is counted here, and in
         * the group once this process joins; with a limit, refused */
        if (!__atomic_load_n(&seg, __ATOMIC_ACQUIRE) && __atomic_load_n(&pending, __ATOMIC_ACQUIRE) == 1 &&
            (mine_limit == 0 || warn)) {
            uint64_t held = __atomic_add_fetch(&owed[dev], bytes, __ATOMIC_SEQ_CST);
            /* joined meanwhile, after the move: move these too */
            int slot = __atomic_load_n(&my_slot, __ATOMIC_SEQ_CST);
            if (slot >= 0) {
                uint64_t t = slot_sub(&owed[dev], bytes);
                if (t)
                    __atomic_fetch_add(&seg->slot[slot].bytes[dev], t, __ATOMIC_SEQ_CST);
            }
            if (over) /* under warn, over its own limit: said as ever (as it held them at its add) */
                *over = warn && mine_limit && mine_limit != GMG_QUOTA_UNKNOWN && held > mine_limit;
            return 1;
        }
        return not_member(dev, mine_limit, warn);
    }
    uint64_t budget = settle_budget(dev, mine_limit);
    if (budget == GMG_QUOTA_UNKNOWN)
        return 0;
    uint64_t *slot = &seg->slot[my_slot].bytes[dev], sum;
    int reclaimed = 0, conflicts = 0;
    for (;;) {
        if (__builtin_add_overflow(__atomic_load_n(slot, __ATOMIC_RELAXED), bytes, &sum))
            return budget && !warn ? 0 : -1;
        /* What does not fit the group as it is now is refused without
         * being added: an add over the budget, taken back a moment later,
         * would be counted meanwhile by every other member's sum (their
         * reservations refused, cuMemGetInfo's free memory and the group's
         * peak wrong), for as long as this member is stopped before taking
         * it back. Only reservations that fit, racing for the last bytes,
         * are ever added and taken back. */
        if (budget && !warn) {
            uint64_t before = sum_slots(dev);
            if (before > budget || budget - before < bytes) {
                if (!reclaimed && reclaim_now(0) > 0) {
                    reclaimed = 1;
                    continue;
                }
                /* over the budget: another member's add that does not
                 * fit, which it takes back in a moment (preempted there,
                 * at its next time slice) */
                if (before > budget && conflicts++ < CONFLICT_TRIES) {
                    sched_yield();
                    continue;
                }
                return 0;
            }
        }
        /* one instruction: killed before it, nothing is ours; after it, the
         * slot says exactly what we took */
        __atomic_fetch_add(slot, bytes, __ATOMIC_SEQ_CST);
        sum = sum_slots(dev);
        int o = budget && sum > budget;
        if (!o || warn) {
            if (over)
                *over = o;
            return 1;
        }
        slot_sub(slot, bytes);
        /* a dead member's share may be what is missing */
        if (!reclaimed && reclaim_now(0) > 0) {
            reclaimed = 1;
            continue;
        }
        /* or another member's reservation, counted in our sum while it was
         * counting ours, and taken back since: the group had room */
        uint64_t now = sum_slots(dev);
        if (conflicts++ < CONFLICT_TRIES && now <= budget && budget - now >= bytes) {
            sched_yield();
            continue;
        }
        return 0;
    }
}

static void g_release(int dev, uint64_t bytes)
{
    if (__atomic_load_n(&left, __ATOMIC_ACQUIRE) || !mine())
        return;
    if (__atomic_load_n(&owed[dev], __ATOMIC_ACQUIRE)) /* counted while it waited, and not moved yet */
        bytes -= slot_sub(&owed[dev], bytes);
    if (!bytes)
        return;
    /* moved meanwhile: into the slot once the move is done (the owed word's
     * exchange came before this free's take, so `owed_moving` reads 1
     * until the slot has them) */
    while (__atomic_load_n(&owed_moving, __ATOMIC_SEQ_CST))
        sched_yield();
    int slot = __atomic_load_n(&my_slot, __ATOMIC_SEQ_CST);
    if (slot >= 0)
        slot_sub(&seg->slot[slot].bytes[dev], bytes);
}

/* Before a reader off the allocation path (the report thread's samples,
 * metrics, cuMemGetInfo) reads the segment: a file cut short is made whole
 * first (fd_is_ours). */
static int seg_readable(void)
{
    struct stat st;
    if (!seg_pending_try())
        return 0;
    /* a file replaced meanwhile: the mapping is still the old file's, whole */
    return seg_fd < 0 || fstat(seg_fd, &st) != 0 || st.st_dev != seg_dev || st.st_ino != seg_ino || seg_whole(&st);
}

/* The group's bytes; while the segment is not made, this member's own,
 * counted until it joins (owed). */
static uint64_t g_used(int dev)
{
    if (seg_readable())
        return sum_slots(dev);
    return mine() ? __atomic_load_n(&owed[dev], __ATOMIC_ACQUIRE) : 0;
}

/* Before cuMemGetInfo, a report or the metrics: dead members' shares back,
 * so that a process that only looks sees them gone too. */
static void g_refresh(void)
{
    if (mine() && seg_pending_try())
        reclaim_now(1);
}

static uint64_t g_peak(int dev)
{
    return seg_readable() ? __atomic_load_n(&seg->dev[dev].peak, __ATOMIC_ACQUIRE) : 0;
}

/* An allocation was made: the group's peak, raised here rather than at the
 * reservation (which the driver may fail), from the group's bytes now. A
 * sum above the budget holds another member's passing add, which it takes
 * back: no moment the group held, so no peak (taking it for the budget
 * claimed a peak the group never reached); the allocations it held are
 * counted by their own commits. */
static void g_commit(int dev)
{
    if (__atomic_load_n(&joined, __ATOMIC_ACQUIRE) != 1 || __atomic_load_n(&left, __ATOMIC_ACQUIRE) || !mine())
        return;
    struct gmg_group_dev *d = &seg->dev[dev];
    uint64_t now = sum_slots(dev), budget = __atomic_load_n(&d->budget, __ATOMIC_ACQUIRE);
    if (budget && budget != GMG_GROUP_NOLIMIT && now > budget && gmg_cfg.on_limit != GMG_ON_LIMIT_WARN)
        return;
    raise_peak(&d->peak, now);
}

static unsigned g_members(void)
{
    if (!seg_readable())
        return 0;
    unsigned n = 0;
    uint32_t hi = slots_in_use();
    for (uint32_t i = 0; i < hi; i++)
        n += __atomic_load_n(&seg->slot[i].state, __ATOMIC_ACQUIRE) == 1;
    return n;
}

static const struct gmg_quota_pool pool = {
    .reserve = g_reserve,
    .release = g_release,
    .budget = g_budget,
    .used = g_used,
    .peak = g_peak,
    .commit = g_commit,
    .members = g_members,
    .refresh = g_refresh,
};

const struct gmg_quota_pool *gmg_group_pool(void) { return seg || pending ? &pool : NULL; }

void gmg_group_leave(void)
{
    if (!seg || !mine())
        return;
    pthread_mutex_lock(&mu);
    if (__atomic_load_n(&joined, __ATOMIC_ACQUIRE) == 1 && !__atomic_exchange_n(&left, 1, __ATOMIC_ACQ_REL))
        empty_slot(&seg->slot[my_slot]);
    /* the slot itself is freed by whoever finds this process gone */
    pthread_mutex_unlock(&mu);
}

void gmg_group_atfork_child(void)
{
    pthread_mutex_init(&mu, NULL);
    __atomic_store_n(&member_pid, getpid(), __ATOMIC_RELAXED);
    joined = 0;
    my_slot = -1;
    memset(owed, 0, sizeof owed); /* the parent's */
    owed_moving = 0;              /* a move another thread of the parent was making at the fork */
    left = 0;
    join_failed_ms = 0;
    last_scan_ms = 0;
    join_said = 0;
    if (seg_fd < 0)
        return;
    /* the inherited descriptor shares the parent's open of the segment,
     * and with it the parent's locks: kept, the parent would seem alive
     * for as long as this child lives. An open of our own instead (the
     * parent's locks stay with the parent's open). */
    int fd = seg_open();
    close(seg_fd);
    seg_fd = -1;
    seg_fd = fd; /* -1: the join says so */
}

/* -------------------------------------------------------------- open */

static void init_locked(struct gmg_group_seg *s, const char *name)
{
    memset(s, 0, sizeof *s);
    write_header(s, name);
}

/* An initialised segment: is it this guard's, this user's and this group's? */
static int check_header(const struct gmg_group_seg *s, const char *name, unsigned uid, char *err, unsigned errlen)
{
    const char *what = "GPUMEM_GROUP";
    uint64_t magic = __atomic_load_n(&s->magic, __ATOMIC_ACQUIRE);
    if (magic == GMG_GROUP_MAGIC && s->version == GMG_GROUP_VERSION && s->size == sizeof *s &&
        s->slots == GMG_GROUP_SLOTS && s->devices == GMG_GROUP_DEVICES && s->uid != uid) {
        snprintf(err, errlen, "%s=%s: /dev/shm%s says it is the segment of uid %u, not of this user (uid %u): "
                 "copied from another user's?; remove the file once no process uses it, or give this group another "
                 "name; refused", what, name, shm_name, s->uid, uid);
        return -1;
    }
    if (magic != GMG_GROUP_MAGIC || s->version != GMG_GROUP_VERSION || s->size != sizeof *s ||
        s->slots != GMG_GROUP_SLOTS || s->devices != GMG_GROUP_DEVICES) {
        unsigned v = magic == GMG_GROUP_MAGIC ? s->version : 0;
        snprintf(err, errlen, "%s=%s: /dev/shm%s is not a group segment of this guard (%s %u, this guard's is %d%s); "
                 "give this one another name, or remove the file once no process uses it; refused", what, name,
                 shm_name, magic == GMG_GROUP_MAGIC ? "version" : "unknown contents, version", v, GMG_GROUP_VERSION,
                 magic == GMG_GROUP_MAGIC && v < GMG_GROUP_VERSION ? ": made by an older gpumemguard" : "");
        return -1;
    }
    if (strncmp(s->name, name, sizeof s->name) != 0) {
        char other[sizeof s->name + 1];
        memcpy(other, s->name, sizeof s->name);
        other[sizeof s->name] = 0;
        snprintf(err, errlen, "%s=%s: /dev/shm%s says it is the segment of group '%s', not '%s' (copied or linked "
                 "from another group's?); joining it would share that group's budget; remove the file once no process "
                 "uses it; refused", what, name, shm_name, other, name);
        return -1;
    }
    return 0;
}

#define FAIL(...) do { snprintf(err, errlen, __VA_ARGS__); goto fail; } while (0)

/* The segment opened and checked (seg_fd, seg_dev, seg_ino): made if it is
 * new (or its creator died before it was ready), mapped and its header
 * checked; `seg` set. A holder of the membership lock that does not let go
 * within wait_ms is alive (stopped?): the group is then not to start
 * clean, and if the segment is not made yet (its creator stopped while it
 * made it) nothing can be: 1, tried again later (seg_pending_try). 0 when
 * ready, -1 (err set) when it is not the group's segment. */
static int seg_ready(int wait_ms, char *err, unsigned errlen)
{
    const char *what = "GPUMEM_GROUP", *name = gmg_cfg.group;
    unsigned uid = (unsigned)geteuid();
    char p[200];
    snprintf(p, sizeof p, "/dev/shm%s", shm_name);
    void *map = MAP_FAILED;
    int lk = membership_lock(wait_ms), locked = lk == 0, ret = -1;
    struct stat st;
    if (lk == -2)
        FAIL("%s=%s: cannot lock %s: %s", what, name, p, strerror(errno));
    if (fstat(seg_fd, &st) != 0)
        FAIL("%s=%s: cannot stat %s: %s", what, name, p, strerror(errno));
    size_t size = sizeof(struct gmg_group_seg);
    if (st.st_size == 0) {
        if (!locked) {
            ret = 1; /* being made by a process that holds the lock and does not let go */
            goto fail;
        }
        /* every page now, so that a full /dev/shm is an error here rather
         * than a SIGBUS later */
        int e = posix_fallocate(seg_fd, 0, (off_t)size);
        if (e)
            FAIL("%s=%s: no room for the group's %zu bytes in %s: %s", what, name, size, p, strerror(e));
    } else if ((size_t)st.st_size != size) {
        FAIL("%s=%s: %s is %lld bytes, not the %zu bytes of this guard's group segment (version %d): another "
             "version of gpumemguard uses this group, or the file was cut or written by something else; give this "
             "one another name, or remove the file once no process uses it; refused", what, name, p,
             (long long)st.st_size, size, GMG_GROUP_VERSION);
    }
    /* Mapped through an open of its own, closed at once: a mapping holds
     * its open of the file, so one made through seg_fd would keep this
     * member's locks, its liveness, for as long as any process has the
     * mapping (a fork() child inherits it, and with it our open, though
     * its handler closes the descriptor): a member killed meanwhile would
     * look alive and keep its share. */
    int mfd = seg_open();
    struct stat mst;
    if (mfd < 0 || fstat(mfd, &mst) != 0 || mst.st_dev != seg_dev || mst.st_ino != seg_ino) {
        if (mfd >= 0)
            close(mfd);
        FAIL("%s=%s: cannot map %s: it was replaced while being opened", what, name, p);
    }
    map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
    int map_errno = errno;
    close(mfd);
    if (map == MAP_FAILED)
        FAIL("%s=%s: cannot map %s: %s", what, name, p, strerror(map_errno));
    struct gmg_group_seg *s = map;
    if (__atomic_load_n(&s->magic, __ATOMIC_ACQUIRE) == 0) {
        if (!locked) {
            ret = 1;
            goto fail;
        }
        init_locked(s, name); /* new, or its creator died before it was ready */
    }
    if (check_header(s, name, uid, err, errlen) < 0)
        goto fail;
    __atomic_store_n(&seg, s, __ATOMIC_RELEASE);
    if (locked && !others_alive()) /* a group nobody is in: what it says is a dead one's */
        start_clean_locked();
    if (locked)
        membership_unlock();
    return 0;
fail:
    if (locked)
        membership_unlock();
    if (map != MAP_FAILED)
        munmap(map, size);
    return ret;
}

/* Pending (seg_ready said 1 at start-up): ready now? Tried at most once a
 * second, without waiting for the lock; a segment that turns out not to be
 * the group's is said once, and never tried again. */
static int seg_pending_try(void)
{
    if (__atomic_load_n(&seg, __ATOMIC_ACQUIRE))
        return 1;
    /* only the member makes it ready: a child made without fork handlers
     * shares the member's open of the segment (its locks never conflict
     * with the member's own, so it would start the group clean over the
     * member's slot), and a vfork child shares its memory */
    if (__atomic_load_n(&pending, __ATOMIC_ACQUIRE) != 1 || !mine())
        return 0;
    static long long tried_ms;
    long long t = now_ms();
    if (t - __atomic_load_n(&tried_ms, __ATOMIC_RELAXED) < 1000 || pthread_mutex_trylock(&mu) != 0)
        return 0;
    __atomic_store_n(&tried_ms, t, __ATOMIC_RELAXED);
    char err[1024];
    int r = fd_is_ours() ? seg_ready(0, err, sizeof err) : -2;
    if (r < 0) {
        if (r == -2)
            snprintf(err, sizeof err, "GPUMEM_GROUP=%s: the descriptor of /dev/shm%s was closed by the program "
                     "before the segment was ready", gmg_cfg.group, shm_name);
        gmg_error("%s; this process's allocations are refused under a budget, uncounted without one", err);
        __atomic_store_n(&pending, -1, __ATOMIC_RELEASE);
    } else if (r == 0) {
        __atomic_store_n(&pending, 0, __ATOMIC_RELEASE);
        gmg_info("GPUMEM_GROUP=%s: the group's segment is ready now", gmg_cfg.group);
        join_owed_locked(); /* now, not at its next allocation (there may be none) */
    }
    pthread_mutex_unlock(&mu);
    return __atomic_load_n(&seg, __ATOMIC_ACQUIRE) != NULL;
}

int gmg_group_open(const char *name, char *err, unsigned errlen)
{
    unsigned uid = (unsigned)geteuid();
    snprintf(shm_name, sizeof shm_name, "/gpumemguard-%u-%s", uid, name);
    __atomic_store_n(&member_pid, getpid(), __ATOMIC_RELAXED);
    const char *what = "GPUMEM_GROUP";
    int created = 1;
    char p[200];
    snprintf(p, sizeof p, "/dev/shm%s", shm_name);
    /* O_NOFOLLOW: never through a symlink; glibc adds O_CLOEXEC too */
    int fd = shm_open(shm_name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 && errno == EEXIST) {
        created = 0;
        fd = shm_open(shm_name, O_RDWR | O_NOFOLLOW | O_CLOEXEC, 0);
    }
    if (fd < 0) {
        int e = errno;
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
            FAIL("%s=%s: %s is a directory, not the group's shared-memory segment; remove it (rmdir %s) once "
                 "nothing uses it, or give the group another name; refused", what, name, p, p);
        if (lstat(p, &st) == 0 && S_ISLNK(st.st_mode))
            FAIL("%s=%s: cannot open the group's shared memory %s: it is a symbolic link, which is never followed; "
                 "remove it, or give the group another name; refused", what, name, p);
        if ((e == EACCES || e == EPERM) && lstat(p, &st) == 0 && st.st_uid != uid)
            FAIL("%s=%s: %s is owned by uid %u, not by this user (uid %u): another user's segment is "
                 "never shared; refused", what, name, p, (unsigned)st.st_uid, uid);
        if (lstat(p, &st) == 0 && !S_ISREG(st.st_mode))
            FAIL("%s=%s: %s is not a regular file (a device, FIFO or socket), so not the group's segment; remove "
                 "it, or give the group another name; refused", what, name, p);
        FAIL("%s=%s: cannot open the group's shared memory %s: %s", what, name, p, strerror(e));
    }
    /* out of the program's way: a program started with descriptor 0, 1 or
     * 2 closed would otherwise write its output into the segment */
    if ((fd = gmg_fd_raise(fd, p)) < 0)
        FAIL("%s=%s: the descriptor of %s was closed while it was being opened; refused", what, name, p);
    seg_fd = fd;
    if (created && fchmod(fd, 0600) != 0)
        FAIL("%s=%s: cannot set mode 0600 on %s: %s", what, name, p, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0)
        FAIL("%s=%s: cannot stat %s: %s", what, name, p, strerror(errno));
    if (st.st_uid != uid)
        FAIL("%s=%s: %s is owned by uid %u, not by this user (uid %u): another user's segment is never "
             "shared; refused", what, name, p, (unsigned)st.st_uid, uid);
    if (!S_ISREG(st.st_mode))
        FAIL("%s=%s: %s is not a regular file; refused", what, name, p);
    if (st.st_mode & 077)
        FAIL("%s=%s: %s has mode %04o, not 0600 (others could change the group's numbers); refused",
             what, name, p, (unsigned)(st.st_mode & 07777));
    if (st.st_nlink != 1)
        FAIL("%s=%s: %s has %lu links, not 1: it is also another name's (another group's segment linked under this "
             "group's name?), and joining it would share that group's budget; remove it once no process uses it, "
             "or give the group another name; refused", what, name, p, (unsigned long)st.st_nlink);
    seg_dev = st.st_dev;
    seg_ino = st.st_ino;
    int r = seg_ready(LOCK_WAIT_MS, err, errlen);
    if (r < 0)
        goto fail;
    if (r > 0)
        __atomic_store_n(&pending, 1, __ATOMIC_RELEASE);
    return r;
fail:
    if (fd >= 0)
        close(fd);
    seg_fd = -1;
    return -1;
}
