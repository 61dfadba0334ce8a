/* group.c - see group.h and group_layout.h. */
#define _GNU_SOURCE
#include "cluster/group.h"

#include "base/buf.h"
#include "base/config.h"
#include "base/log.h"
#include "cluster/group_layout.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

_Static_assert(GMG_GROUP_DEVICES == GMG_MAX_DEVICES, "a device index of the quota is a device of the segment");
_Static_assert(sizeof(struct gmg_group_seg) < UINT32_MAX, "size fits its field");

static struct gmg_group_seg *seg;
static int seg_fd = -1;
static dev_t seg_dev;
static ino_t seg_ino;
static char shm_name[128];

/* This process's membership. joined: 0 not yet, 1 member, -1 the last try
 * failed (tried again after a second). */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int joined;
static int my_slot = -1;
static int left;
static long long join_failed_ms;
static long long last_scan_ms;
static uint8_t noticed[GMG_GROUP_DEVICES];

#define RECLAIM_EVERY_MS 20   /* at most this often on refusals */
#define LOCK_WAIT_MS 5000     /* the membership lock: a holder works for microseconds */

const char *gmg_group_shm_name(void) { return shm_name; }

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ------------------------------------------------------ record locks */

static int setlk(short type, off_t start, off_t len)
{
    struct flock fl = { .l_type = type, .l_whence = SEEK_SET, .l_start = start, .l_len = len };
    int r;
    do
        r = fcntl(seg_fd, F_SETLK, &fl);
    while (r < 0 && errno == EINTR);
    return r;
}

/* Byte GMG_GROUP_LOCK_MEMBERSHIP. wait_ms 0: one try. Polled rather than
 * F_SETLKW, so that a holder stopped by a debugger cannot hang us. */
static int membership_lock(int wait_ms)
{
    long long until = now_ms() + wait_ms;
    long ns = 50000;
    for (;;) {
        if (setlk(F_WRLCK, GMG_GROUP_LOCK_MEMBERSHIP, 1) == 0)
            return 0;
        if ((errno != EAGAIN && errno != EACCES) || now_ms() >= until)
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

/* ---------------------------------------------------------- counters */

static void sub_clamped(uint64_t *v, uint64_t n)
{
    uint64_t cur = __atomic_load_n(v, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(v, &cur, cur > n ? cur - n : 0, 1, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
        ;
}

static void raise_peak(uint64_t *peak, uint64_t now)
{
    uint64_t p = __atomic_load_n(peak, __ATOMIC_RELAXED);
    while (now > p && !__atomic_compare_exchange_n(peak, &p, now, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}

/* A slot's bytes back to the group: taken from the slot first. */
static void empty_slot(struct gmg_group_slot *s)
{
    for (int d = 0; d < GMG_GROUP_DEVICES; d++) {
        if (!__atomic_load_n(&s->bytes[d], __ATOMIC_RELAXED))
            continue;
        uint64_t b = __atomic_exchange_n(&s->bytes[d], 0, __ATOMIC_ACQ_REL);
        if (b)
            sub_clamped(&seg->dev[d].used, b);
    }
}

/* ------------------------------------------------------------ members */

static void start_clean_locked(void);

/* Membership lock held: does any other process hold a member's lock? */
static int others_alive(void)
{
    struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = GMG_GROUP_LOCK_SLOT(0),
                        .l_len = GMG_GROUP_SLOTS };
    return fcntl(seg_fd, F_GETLK, &fl) != 0 || fl.l_type != F_UNLCK;
}

/* Membership lock held. The slots of dead members (state 1, lock free) go
 * back: their bytes to the group, the slot to the free list. A group left
 * with no member at all starts clean (its budget too), so that a process
 * that only looks sees no dead one's numbers either. */
static int reclaim_locked(void)
{
    if (my_slot < 0 && !others_alive()) {
        start_clean_locked();
        return 1;
    }
    int n = 0;
    for (int i = 0; i < GMG_GROUP_SLOTS; i++) {
        struct gmg_group_slot *s = &seg->slot[i];
        if (i == my_slot || __atomic_load_n(&s->state, __ATOMIC_ACQUIRE) != 1)
            continue;
        if (setlk(F_WRLCK, GMG_GROUP_LOCK_SLOT(i), 1) != 0)
            continue; /* its member lives */
        int pid = s->pid;
        empty_slot(s);
        s->pid = 0;
        __atomic_store_n(&s->state, 0, __ATOMIC_RELEASE);
        setlk(F_UNLCK, GMG_GROUP_LOCK_SLOT(i), 1);
        gmg_debug("GPUMEM_GROUP=%s: member %d is gone; its reservations are back", gmg_cfg.group, pid);
        n++;
    }
    return n;
}

/* Membership lock held, no live member: whatever the segment says is a
 * dead group's; start from nothing. */
static void start_clean_locked(void)
{
    int dirty = 0;
    for (int d = 0; d < GMG_GROUP_DEVICES && !dirty; d++)
        dirty = __atomic_load_n(&seg->dev[d].budget, __ATOMIC_RELAXED) ||
                __atomic_load_n(&seg->dev[d].used, __ATOMIC_RELAXED) ||
                __atomic_load_n(&seg->dev[d].peak, __ATOMIC_RELAXED);
    for (int i = 0; i < GMG_GROUP_SLOTS && !dirty; i++)
        dirty = __atomic_load_n(&seg->slot[i].state, __ATOMIC_RELAXED) != 0;
    if (!dirty)
        return;
    for (int d = 0; d < GMG_GROUP_DEVICES; d++) {
        __atomic_store_n(&seg->dev[d].budget, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&seg->dev[d].used, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&seg->dev[d].peak, 0, __ATOMIC_RELAXED);
    }
    for (int i = 0; i < GMG_GROUP_SLOTS; i++) {
        struct gmg_group_slot *s = &seg->slot[i];
        if (!__atomic_load_n(&s->state, __ATOMIC_RELAXED))
            continue;
        for (int d = 0; d < GMG_GROUP_DEVICES; d++)
            __atomic_store_n(&s->bytes[d], 0, __ATOMIC_RELAXED);
        s->pid = 0;
        __atomic_store_n(&s->state, 0, __ATOMIC_RELEASE);
    }
    __atomic_add_fetch(&seg->starts, 1, __ATOMIC_RELEASE);
}

/* Is our descriptor still the segment? (A program may close descriptors it
 * does not own, as a child about to exec often does.) */
static int fd_is_ours(void)
{
    struct stat st;
    return seg_fd >= 0 && fstat(seg_fd, &st) == 0 && st.st_dev == seg_dev && st.st_ino == seg_ino;
}

/* A failed join is said once per process (it is tried again each second). */
static int join_said;
#define JOIN_ERROR(...) do { if (!join_said) { join_said = 1; gmg_error(__VA_ARGS__); } } while (0)

/* mu held. */
static int join_locked(void)
{
    if (!fd_is_ours()) {
        /* reopen the same object (only ours: checked again) */
        int fd = shm_open(shm_name, O_RDWR | O_NOFOLLOW | O_CLOEXEC, 0);
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
    if (membership_lock(LOCK_WAIT_MS) < 0) {
        JOIN_ERROR("GPUMEM_GROUP=%s: cannot take the membership lock of /dev/shm%s: %s", gmg_cfg.group, shm_name,
                  strerror(errno));
        return -1;
    }
    reclaim_locked(); /* or a clean start, when no member is left */
    __atomic_store_n(&last_scan_ms, now_ms(), __ATOMIC_RELAXED);
    int got = -1;
    for (int i = 0; i < GMG_GROUP_SLOTS && got < 0; i++) {
        struct gmg_group_slot *s = &seg->slot[i];
        if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) != 0)
            continue;
        if (setlk(F_WRLCK, GMG_GROUP_LOCK_SLOT(i), 1) != 0)
            continue;
        empty_slot(s); /* nothing, normally: a free slot holds no bytes */
        s->pid = (int32_t)getpid();
        s->joined = (uint64_t)time(NULL);
        __atomic_store_n(&s->state, 1, __ATOMIC_RELEASE);
        got = i;
    }
    membership_unlock();
    if (got < 0) {
        JOIN_ERROR("GPUMEM_GROUP=%s: the group has %d live members already; this process's allocations are "
                  "refused under a budget, uncounted without one", gmg_cfg.group, GMG_GROUP_SLOTS);
        return -1;
    }
    my_slot = got;
    gmg_debug("GPUMEM_GROUP=%s: joined as member %d (/dev/shm%s)", gmg_cfg.group, got, shm_name);
    return 0;
}

static int ensure_joined(void)
{
    int j = __atomic_load_n(&joined, __ATOMIC_ACQUIRE);
    if (j == 1)
        return 1;
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

/* Reclaim now if nobody of ours did lately and the lock is free at once.
 * Returns how many dead members were found. */
static int reclaim_now(int force)
{
    long long t = now_ms();
    if (!force && t - __atomic_load_n(&last_scan_ms, __ATOMIC_RELAXED) < RECLAIM_EVERY_MS)
        return 0;
    if (pthread_mutex_trylock(&mu) != 0)
        return 0;
    int n = 0;
    if (fd_is_ours() && membership_lock(0) == 0) {
        n = reclaim_locked();
        membership_unlock();
        __atomic_store_n(&last_scan_ms, t, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&mu);
    return n;
}

void gmg_group_tick(void)
{
    if (seg)
        reclaim_now(1);
}

/* --------------------------------------------------------- the budget */

static uint64_t wanted(uint64_t mine) { return mine ? mine : GMG_GROUP_NOLIMIT; }

/* The group's budget for dev, set from `mine` by the first member to
 * reserve there. 0: no limit; GMG_QUOTA_UNKNOWN: not set, and ours is not
 * known yet (refuse, as the quota does). */
static uint64_t settle_budget(int dev, uint64_t mine)
{
    uint64_t *b = &seg->dev[dev].budget;
    uint64_t cur = __atomic_load_n(b, __ATOMIC_ACQUIRE);
    if (cur == 0 && mine != GMG_QUOTA_UNKNOWN) {
        uint64_t want = wanted(mine);
        if (__atomic_compare_exchange_n(b, &cur, want, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            cur = want;
    }
    if (cur == 0)
        return GMG_QUOTA_UNKNOWN;
    if (mine != GMG_QUOTA_UNKNOWN && cur != wanted(mine) && !__atomic_exchange_n(&noticed[dev], 1, __ATOMIC_RELAXED)) {
        char a[GMG_SIZE_LEN], g[GMG_SIZE_LEN];
        if (mine)
            gmg_fmt_size(a, sizeof a, mine);
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

static uint64_t g_budget(int dev, uint64_t mine)
{
    uint64_t cur = __atomic_load_n(&seg->dev[dev].budget, __ATOMIC_ACQUIRE);
    if (cur == 0)
        return mine == GMG_QUOTA_UNKNOWN ? 1 : mine;
    return cur == GMG_GROUP_NOLIMIT ? 0 : cur;
}

static int g_reserve(int dev, uint64_t bytes, uint64_t mine, int warn, int *over)
{
    if (!ensure_joined()) {
        uint64_t b = g_budget(dev, mine);
        return b && !warn ? 0 : -1;
    }
    uint64_t budget = settle_budget(dev, mine);
    if (budget == GMG_QUOTA_UNKNOWN)
        return 0;
    struct gmg_group_dev *d = &seg->dev[dev];
    int reclaimed = 0, o;
    uint64_t cur = __atomic_load_n(&d->used, __ATOMIC_RELAXED), next;
    for (;;) {
        if (__builtin_add_overflow(cur, bytes, &next))
            return budget && !warn ? 0 : -1;
        o = budget && next > budget;
        if (o && !warn) {
            /* a dead member's share may be what is missing */
            if (!reclaimed && reclaim_now(0) > 0) {
                reclaimed = 1;
                cur = __atomic_load_n(&d->used, __ATOMIC_RELAXED);
                continue;
            }
            return 0;
        }
        if (__atomic_compare_exchange_n(&d->used, &cur, next, 1, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
            break;
    }
    if (over)
        *over = o;
    __atomic_fetch_add(&seg->slot[my_slot].bytes[dev], bytes, __ATOMIC_ACQ_REL);
    return 1;
}

static void g_release(int dev, uint64_t bytes)
{
    if (__atomic_load_n(&joined, __ATOMIC_ACQUIRE) != 1 || __atomic_load_n(&left, __ATOMIC_ACQUIRE))
        return;
    uint64_t *mine = &seg->slot[my_slot].bytes[dev];
    uint64_t cur = __atomic_load_n(mine, __ATOMIC_RELAXED), take;
    do
        take = cur < bytes ? cur : bytes;
    while (!__atomic_compare_exchange_n(mine, &cur, cur - take, 1, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
    if (take)
        sub_clamped(&seg->dev[dev].used, take);
}

static uint64_t g_used(int dev) { return __atomic_load_n(&seg->dev[dev].used, __ATOMIC_ACQUIRE); }

/* Before cuMemGetInfo, a report or the metrics: dead members' shares back,
 * so that a process that only looks sees them gone too. */
static void g_refresh(void) { reclaim_now(1); }
static uint64_t g_peak(int dev) { return __atomic_load_n(&seg->dev[dev].peak, __ATOMIC_ACQUIRE); }

/* An allocation was made: the group's peak, raised here rather than at the
 * reservation (which the driver may fail), from the group's bytes now. */
static void g_commit(int dev)
{
    if (__atomic_load_n(&joined, __ATOMIC_ACQUIRE) != 1 || __atomic_load_n(&left, __ATOMIC_ACQUIRE))
        return;
    struct gmg_group_dev *d = &seg->dev[dev];
    raise_peak(&d->peak, __atomic_load_n(&d->used, __ATOMIC_ACQUIRE));
}

static unsigned g_members(void)
{
    unsigned n = 0;
    for (int i = 0; i < GMG_GROUP_SLOTS; i++)
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

const struct gmg_quota_pool *gmg_group_pool(void) { return seg ? &pool : NULL; }

void gmg_group_leave(void)
{
    if (!seg)
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
    joined = 0;
    my_slot = -1;
    left = 0;
    join_failed_ms = 0;
    last_scan_ms = 0;
    join_said = 0;
}

/* -------------------------------------------------------------- open */

static void init_locked(struct gmg_group_seg *s, const char *name)
{
    memset(s, 0, sizeof *s);
    s->version = GMG_GROUP_VERSION;
    s->size = (uint32_t)sizeof *s;
    s->slots = GMG_GROUP_SLOTS;
    s->devices = GMG_GROUP_DEVICES;
    s->uid = (uint32_t)geteuid();
    snprintf(s->name, sizeof s->name, "%s", name);
    __atomic_store_n(&s->magic, GMG_GROUP_MAGIC, __ATOMIC_RELEASE);
}

#define FAIL(...) do { snprintf(err, errlen, __VA_ARGS__); goto fail; } while (0)

int gmg_group_open(const char *name, char *err, unsigned errlen)
{
    unsigned uid = (unsigned)geteuid();
    snprintf(shm_name, sizeof shm_name, "/gpumemguard-%u-%s", uid, name);
    const char *what = "GPUMEM_GROUP";
    void *map = MAP_FAILED;
    int created = 1;
    /* O_NOFOLLOW: never through a symlink; glibc adds O_CLOEXEC too */
    int fd = shm_open(shm_name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 && errno == EEXIST) {
        created = 0;
        fd = shm_open(shm_name, O_RDWR | O_NOFOLLOW | O_CLOEXEC, 0);
    }
    if (fd < 0) {
        int e = errno;
        struct stat st;
        char p[200];
        snprintf(p, sizeof p, "/dev/shm%s", shm_name);
        if ((e == EACCES || e == EPERM) && lstat(p, &st) == 0 && st.st_uid != uid)
            FAIL("%s=%s: /dev/shm%s is owned by uid %u, not by this user (uid %u): another user's segment is "
                 "never shared; refused", what, name, shm_name, (unsigned)st.st_uid, uid);
        FAIL("%s=%s: cannot open the group's shared memory /dev/shm%s: %s", what, name, shm_name, strerror(e));
    }
    seg_fd = fd;
    if (created && fchmod(fd, 0600) != 0)
        FAIL("%s=%s: cannot set mode 0600 on /dev/shm%s: %s", what, name, shm_name, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0)
        FAIL("%s=%s: cannot stat /dev/shm%s: %s", what, name, shm_name, strerror(errno));
    if (st.st_uid != uid)
        FAIL("%s=%s: /dev/shm%s is owned by uid %u, not by this user (uid %u): another user's segment is never "
             "shared; refused", what, name, shm_name, (unsigned)st.st_uid, uid);
    if (!S_ISREG(st.st_mode))
        FAIL("%s=%s: /dev/shm%s is not a regular file; refused", what, name, shm_name);
    if (st.st_mode & 077)
        FAIL("%s=%s: /dev/shm%s has mode %04o, not 0600 (others could change the group's numbers); refused",
             what, name, shm_name, (unsigned)(st.st_mode & 07777));
    seg_dev = st.st_dev;
    seg_ino = st.st_ino;
    if (membership_lock(LOCK_WAIT_MS) < 0)
        FAIL("%s=%s: cannot lock /dev/shm%s: %s", what, name, shm_name, strerror(errno));
    if (fstat(fd, &st) != 0) {
        membership_unlock();
        FAIL("%s=%s: cannot stat /dev/shm%s: %s", what, name, shm_name, strerror(errno));
    }
    size_t size = sizeof(struct gmg_group_seg);
    if (st.st_size == 0) {
        /* every page now, so that a full /dev/shm is an error here rather
         * than a SIGBUS later */
        int e = posix_fallocate(fd, 0, (off_t)size);
        if (e) {
            membership_unlock();
            FAIL("%s=%s: no room for the group's %zu bytes in /dev/shm%s: %s", what, name, size, shm_name, strerror(e));
        }
    } else if ((size_t)st.st_size != size) {
        membership_unlock();
        FAIL("%s=%s: /dev/shm%s is %lld bytes, not the %zu bytes of this guard's group segment (version %d): another "
             "version of gpumemguard uses this group; give this one another name, or remove the file once no "
             "process uses it; refused", what, name, shm_name, (long long)st.st_size, size, GMG_GROUP_VERSION);
    }
    map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) {
        membership_unlock();
        FAIL("%s=%s: cannot map /dev/shm%s: %s", what, name, shm_name, strerror(errno));
    }
    struct gmg_group_seg *s = map;
    uint64_t magic = __atomic_load_n(&s->magic, __ATOMIC_ACQUIRE);
    if (magic == 0) {
        init_locked(s, name); /* new, or its creator died before it was ready */
    } else if (magic != GMG_GROUP_MAGIC || s->version != GMG_GROUP_VERSION || s->size != size ||
               s->slots != GMG_GROUP_SLOTS || s->devices != GMG_GROUP_DEVICES || s->uid != uid) {
        unsigned v = magic == GMG_GROUP_MAGIC ? s->version : 0;
        membership_unlock();
        FAIL("%s=%s: /dev/shm%s is not a group segment of this guard (%s %u, this guard's is %d); give this one "
             "another name, or remove the file once no process uses it; refused", what, name, shm_name,
             magic == GMG_GROUP_MAGIC ? "version" : "unknown contents, version", v, GMG_GROUP_VERSION);
    }
    seg = s;
    if (!others_alive()) /* a group nobody is in: what it says is a dead one's */
        start_clean_locked();
    membership_unlock();
    return 0;
fail:
    if (map != MAP_FAILED)
        munmap(map, sizeof(struct gmg_group_seg));
    if (fd >= 0)
        close(fd);
    seg_fd = -1;
    return -1;
}
