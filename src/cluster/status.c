/* status.c - see status.h; the layout is status_layout.h. */
#define _GNU_SOURCE
#include "cluster/status.h"
#include "cluster/status_layout.h"

#include "base/config.h"
#include "base/fd.h"
#include "base/limit_parse.h"
#include "base/log.h"
#include "core/peak.h"
#include "core/quota.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

_Static_assert(GMG_STATUS_DEVICES == GMG_MAX_DEVICES, "one page entry per device the quota knows");
_Static_assert(GMG_STATUS_GROUP > GMG_GROUP_NAME_MAX, "a group name fits the page");
_Static_assert(offsetof(struct gmg_status_page, begun) + sizeof(uint64_t) == sizeof(struct gmg_status_page),
               "begun is the last field");

/* tick (reporter thread) against remove (exit) and each other */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct gmg_status_page *page; /* the mapping, or NULL */
static int owner;                    /* the pid the page is for */
static dev_t page_dev;
static ino_t page_ino;
static int closed;                   /* removed at exit: never made again */
static int given_up;                 /* could not be made: not tried again */
static char path[128];
static char command[GMG_STATUS_CMD];
static uint64_t my_start, my_ns;    /* read once per page */
static uint64_t prev_used[GMG_STATUS_DEVICES];
static struct timespec prev_at;
/* The page's access time: `gpumemguard top` sets it to now each time it
 * reads the page. The biggest site is named (its frame symbolized: part of
 * its library's DWARF read, and kept) only while a top has read it within
 * WATCH_S; a process nobody watches publishes its numbers alone. */
#define WATCH_S 10
static struct timespec made_atime;   /* the access time the page was made with */
static struct timespec seen_atime;   /* at the last still_there() */
static uint32_t named_stack;         /* the site named last, and its name */
static int named;
static char site_name[GMG_STATUS_SITE];

/* A page opened to be read here, its access time left alone: that time
 * is a top's mark that it watches (another process's sweep is not). */
static int open_high_ro(const char *path, int flags) { return gmg_open_high(path, flags, 0); }
static int open_unmarked(const char *at) { return gmg_status_open_unmarked(open_high_ro, at); }

static void make_path(char *out, size_t n, int pid)
{
    snprintf(out, n, GMG_STATUS_DIR "/" GMG_STATUS_PREFIX "%u-%d", (unsigned)geteuid(), pid);
}

/* This process's start time and pid namespace, as a reader checks them. */
static uint64_t start_time(void)
{
    char buf[1024], state;
    uint64_t t = 0;
    if (gmg_read_small("/proc/self/stat", buf, sizeof buf) <= 0)
        return 0;
    return gmg_status_parse_stat(buf, &state, &t) == 0 ? t : 0;
}

static uint64_t pid_ns(void)
{
    struct stat st;
    return stat("/proc/self/ns/pid", &st) == 0 ? (uint64_t)st.st_ino : 0;
}

/* The program and its arguments, as people read them: "python train.py
 * --lr 3e-4"; control characters shown as '?'. */
static void read_command(void)
{
    long n = gmg_read_small("/proc/self/cmdline", command, sizeof command);
    if (n <= 0) {
        command[0] = 0;
        return;
    }
    while (n > 0 && command[n - 1] == 0)
        n--;
    for (long i = 0; i < n; i++)
        if (command[i] == 0)
            command[i] = ' ';
        else if ((unsigned char)command[i] < 0x20 || command[i] == 0x7f)
            command[i] = '?';
    command[n] = 0;
}

/* A file at our page's name that we may replace: a regular file of ours
 * (a page the program we were before an exec left, or a dead process's of
 * the same pid), unless it is a valid page of another pid namespace (a
 * container sharing /dev/shm, whose process may be alive) written lately
 * (gmg_status_written_lately: a page left by a container's process killed
 * with SIGKILL is replaced once 30 s old). */
static int stale_ours(const char *p)
{
    int fd = open_unmarked(p);
    if (fd < 0)
        return errno == ENOENT ? -1 : 0; /* -1: gone meanwhile (a reader removed it) */
    struct stat st;
    struct gmg_status_page old;
    int ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid();
    if (ok && pread(fd, &old, sizeof old, 0) == (ssize_t)sizeof old && old.magic == GMG_STATUS_MAGIC &&
        old.pid_ns && pid_ns() && old.pid_ns != pid_ns() && gmg_status_written_lately(&old))
        ok = 0;
    close(fd);
    return ok;
}

static void unmap(void)
{
    if (page)
        munmap(page, sizeof *page);
    page = NULL;
}

static int create(void)
{
    int pid = getpid();
    make_path(path, sizeof path, pid);
    int fd = -1;
    for (int tries = 0; tries < 3 && fd < 0; tries++) {
        fd = gmg_open_high(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0 || errno != EEXIST)
            break;
        int stale = stale_ours(path); /* a reader may remove it meanwhile: then try again */
        if (stale == 0 || (stale > 0 && unlink(path) != 0 && errno != ENOENT))
            break;
        errno = EEXIST;
    }
    if (fd < 0) {
        gmg_debug("no status page for gpumemguard top: cannot create %s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    int err = fchmod(fd, 0600) != 0 ? errno : posix_fallocate(fd, 0, sizeof *page);
    void *m = err ? MAP_FAILED : mmap(NULL, sizeof *page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED && !err)
        err = errno;
    if (!err && fstat(fd, &st) != 0) { /* after mmap, which sets the access time */
        err = errno;
        munmap(m, sizeof *page);
    }
    close(fd);
    if (err) {
        unlink(path);
        gmg_debug("no status page for gpumemguard top: %s: %s", path, strerror(err));
        return -1;
    }
    page = m;
    __atomic_store_n(&owner, pid, __ATOMIC_RELEASE);
    page_dev = st.st_dev;
    page_ino = st.st_ino;
    made_atime = seen_atime = st.st_atim;
    page->magic = GMG_STATUS_MAGIC;
    read_command();
    my_start = start_time();
    my_ns = pid_ns();
    memset(prev_used, 0, sizeof prev_used);
    prev_at.tv_sec = 0;
    return 0;
}

/* Is our file still at its name? (A reader may have judged us dead: a
 * new pid namespace, a clock jump. Then the page is made anew.) */
static int still_there(void)
{
    struct stat st;
    if (stat(path, &st) != 0 || st.st_dev != page_dev || st.st_ino != page_ino)
        return 0;
    seen_atime = st.st_atim;
    return 1;
}

/* Has a reader marked the page within WATCH_S of NOW (CLOCK_REALTIME)? */
static int watched(const struct timespec *now)
{
    const struct timespec *a = &seen_atime;
    if (a->tv_sec == made_atime.tv_sec && a->tv_nsec == made_atime.tv_nsec)
        return 0; /* never marked since it was made (a mark made after the clock was set back is older) */
    long long ago = (long long)(now->tv_sec - a->tv_sec);
    return ago > -WATCH_S && ago < WATCH_S; /* (either way: a clock set back) */
}

/* REAL: the clock read before the page's access time was (still_there),
 * so that a reader that marked the page before REAL finds it seen in a
 * page written at REAL or later. */
static void fill(struct gmg_status_page *p, gmg_site_namer name_site, struct timespec real)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    p->version = GMG_STATUS_VERSION;
    p->size = sizeof *p;
    p->pid = owner;
    p->uid = geteuid();
    p->start_time = my_start;
    p->pid_ns = my_ns;
    p->updated_ns = (uint64_t)real.tv_sec * 1000000000u + (uint64_t)real.tv_nsec;
    if (prev_at.tv_sec || prev_at.tv_nsec) {
        long long ms = (long long)(now.tv_sec - prev_at.tv_sec) * 1000 + (now.tv_nsec - prev_at.tv_nsec) / 1000000;
        p->interval_ms = ms > 0 ? (uint32_t)ms : 0;
    }
    int grouped = gmg_quota_pooled();
    if (grouped)
        gmg_quota_refresh();
    int ndev = gmg_quota_devices_with_group();
    if (ndev > GMG_STATUS_DEVICES)
        ndev = GMG_STATUS_DEVICES;
    p->devices = (uint32_t)ndev;
    memcpy(p->command, command, sizeof p->command);
    if (grouped) {
        snprintf(p->group, sizeof p->group, "%s", gmg_cfg.group);
        p->group_members = gmg_quota_group_members();
        p->flags |= GMG_STATUS_GROUPED;
    }
    if (gmg_cfg.stack_depth)
        p->flags |= GMG_STATUS_STACKS;
    uint64_t live[GMG_MAX_DEVICES] = { 0 }, dropped;
    struct gmg_live_site top;
    size_t k = gmg_live_sites_top(&top, 1, live, &dropped);
    for (int d = 0; d < ndev; d++) {
        struct gmg_status_dev *v = &p->dev[d];
        v->used = gmg_peak_in_use(d);
        v->limit = gmg_quota_limit(d);
        v->peak = gmg_peak_run(d);
        v->refused = gmg_quota_refused(d);
        v->driver_oom = gmg_quota_driver_oom(d);
        v->growth = p->interval_ms ? (int64_t)(v->used - prev_used[d]) : 0;
        v->live_allocs = live[d];
        if (grouped) {
            v->group_used = gmg_quota_charged(d);
            v->group_peak = gmg_quota_group_peak(d);
        }
        prev_used[d] = v->used;
    }
    prev_at = now;
    if (k && top.bytes) {
        if ((!named || top.stack != named_stack) && watched(&real)) { /* named once per new biggest site */
            char names[GMG_STATUS_SITE] = "";
            if (name_site)
                name_site(&top.stack, 1, names, sizeof names);
            memcpy(site_name, names, sizeof site_name);
            site_name[sizeof site_name - 1] = 0;
            named_stack = top.stack;
            named = site_name[0] != 0; /* no name this time: asked again at the next tick */
        }
        if (named && top.stack == named_stack)
            memcpy(p->site, site_name, sizeof p->site); /* else "" until a reader watches */
        p->site_bytes = top.bytes;
        p->site_allocs = top.count;
        p->site_device = top.device;
    }
}

/* The body between `done` and `begun`, under their two numbers. */
static void publish(const struct gmg_status_page *p)
{
    uint64_t n = page->done + 1; /* only this thread writes */
    __atomic_store_n(&page->begun, n, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    size_t from = offsetof(struct gmg_status_page, version), to = offsetof(struct gmg_status_page, begun);
    memcpy((char *)page + from, (const char *)p + from, to - from);
    __atomic_store_n(&page->done, n, __ATOMIC_RELEASE);
}

/* Dead processes' pages of this user (killed with SIGKILL, ended by
 * _exit), judged as `gpumemguard top` judges them, removed: once per
 * process, after it publishes its first page, so that a node where nobody
 * runs top does not gather them. Only a whole, valid page of ours (mode
 * 0600, its name's pid and uid) is judged; at most SWEEP_MAX names are
 * looked at. The reporter thread, outside `mu` (an exit waits for `mu`). */
#define SWEEP_MAX 4096
static int swept_for; /* the pid that swept */

static void sweep(void)
{
    int dfd = gmg_open_high(GMG_STATUS_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
    DIR *dir = dfd >= 0 ? fdopendir(dfd) : NULL;
    if (!dir) {
        if (dfd >= 0)
            close(dfd);
        return;
    }
    static struct gmg_status_page p; /* as fill's: only this thread uses it */
    uid_t me = geteuid();
    uint64_t ns = pid_ns();
    /* only where /proc is this process's own (its pid namespace known, and
     * this very process found there as it is): a /proc of another
     * namespace (unshare -p without its own /proc) would make every live
     * page look dead */
    if (!ns || !my_start || gmg_status_alive(gmg_read_small, getpid(), my_start) != 1) {
        closedir(dir);
        return;
    }
    size_t plen = strlen(GMG_STATUS_PREFIX), looked = 0;
    struct dirent *e;
    while ((e = readdir(dir)) && looked++ < SWEEP_MAX) {
        unsigned long uid;
        long pid;
        char at[sizeof GMG_STATUS_DIR + sizeof e->d_name];
        if (strncmp(e->d_name, GMG_STATUS_PREFIX, plen) != 0 || gmg_status_parse_name(e->d_name + plen, &uid, &pid) != 0 ||
            uid != me || pid == getpid())
            continue;
        snprintf(at, sizeof at, GMG_STATUS_DIR "/%s", e->d_name);
        int fd = open_unmarked(at);
        if (fd < 0)
            continue;
        struct stat st, now;
        int judged = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == me && (st.st_mode & 07777) == 0600 &&
                     st.st_size == (off_t)sizeof p && pread(fd, &p, sizeof p, 0) == (ssize_t)sizeof p &&
                     p.done && p.done == p.begun && p.magic == GMG_STATUS_MAGIC && p.version == GMG_STATUS_VERSION &&
                     p.size == sizeof p && p.pid == pid && p.uid == me && p.pid_ns;
        close(fd);
        /* (a process of that pid that replaces the file between the lstat
         * and the unlink loses its page until its next tick makes it anew) */
        if (judged && gmg_status_dead(gmg_read_small, &p, ns) && lstat(at, &now) == 0 && now.st_dev == st.st_dev &&
            now.st_ino == st.st_ino)
            unlink(at);
    }
    closedir(dir);
}

void gmg_status_tick(gmg_site_namer name_site)
{
    if (gmg_cfg.secure)
        return;
    int first = 0;
    pthread_mutex_lock(&mu);
    struct timespec real;
    clock_gettime(CLOCK_REALTIME, &real); /* before still_there's stat: fill */
    if (!__atomic_load_n(&closed, __ATOMIC_RELAXED) && !given_up) {
        if (page && (owner != getpid() || !still_there()))
            unmap();
        if (!page && create() != 0)
            given_up = 1;
        if (page) {
            static struct gmg_status_page p; /* 8 KiB: not on the reporter's stack; only this thread uses it */
            memset(&p, 0, sizeof p);
            fill(&p, name_site, real);
            publish(&p);
            first = swept_for != owner;
            swept_for = owner;
        }
    }
    pthread_mutex_unlock(&mu);
    if (first)
        sweep();
}

void gmg_status_remove(void)
{
    /* a child forked without fork handlers has its parent's state: the
     * page is not its own to remove */
    int o = __atomic_load_n(&owner, __ATOMIC_ACQUIRE);
    if (o && o != getpid())
        return;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 2; /* a tick under way (naming a frame) ends; one that hangs does not hold the exit */
    int locked = pthread_mutex_timedlock(&mu, &until) == 0;
    __atomic_store_n(&closed, 1, __ATOMIC_RELAXED);
    if (locked && page && still_there())
        unlink(path);
    else if (!locked && o && still_there())
        unlink(path); /* the tick holds on: path and inode were set before owner, and stay */
    /* the mapping stays: a tick that did not let go may still write it */
    if (locked)
        pthread_mutex_unlock(&mu);
}

void gmg_status_unpublish(void)
{
    if (__atomic_load_n(&owner, __ATOMIC_ACQUIRE) != getpid())
        return;
    pthread_mutex_lock(&mu);
    if (page && still_there())
        unlink(path);
    pthread_mutex_unlock(&mu);
}

void gmg_status_atfork_child(void)
{
    pthread_mutex_init(&mu, NULL);
    unmap(); /* the parent's file; the child never writes it */
    __atomic_store_n(&owner, 0, __ATOMIC_RELAXED);
    given_up = 0;
    named = 0;
}

void gmg_status_forget_exec(void)
{
    char p[sizeof path];
    struct gmg_status_page old;
    if (gmg_cfg.secure)
        return;
    make_path(p, sizeof p, getpid());
    int fd = open_unmarked(p);
    if (fd < 0)
        return; /* the usual case: none */
    struct stat st;
    int ours = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
               pread(fd, &old, sizeof old, 0) == (ssize_t)sizeof old && old.magic == GMG_STATUS_MAGIC &&
               old.pid == getpid() && old.start_time == start_time() && (!old.pid_ns || old.pid_ns == pid_ns());
    close(fd);
    if (ours)
        unlink(p);
}
