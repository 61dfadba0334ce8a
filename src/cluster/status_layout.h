/*
 * status_layout.h - the status page a guarded process publishes for
 * `gpumemguard top` (cluster layer). cluster/status.c writes it; the
 * command (src/cli/top.c) reads it. Header only: the layout, and the one
 * parse of /proc/PID/stat both sides use.
 *
 * One file per process, GMG_STATUS_DIR "/gpumemguard-top-UID-PID" (UID the
 * effective uid, PID the process's pid), created with O_EXCL|O_NOFOLLOW,
 * mode 0600, owned by that user, exactly sizeof(struct gmg_status_page)
 * bytes (allocated at once: a full /dev/shm is seen at creation, never as
 * a SIGBUS later). The process maps it and the reporter thread rewrites it
 * in place about once a second; it is removed at exit. A reader takes a
 * page only when the file is a regular file (never through a symlink) of
 * the UID in its name, mode 0600, of this size, magic and version, and
 * when its pid is alive with the same start time (/proc/PID/stat, field
 * 22) in the reader's pid namespace; a dead process's page is removed by
 * the next reader that may remove it, and by the next guarded process of
 * its user to publish a page (gmg_status_dead).
 *
 * A reader that shows the page sets the file's access time to now
 * (futimens, UTIME_NOW) each time it reads it: the process names its
 * biggest site (site[]) only while that was within the last 10 s: a site
 * that became the biggest otherwise is "" until then. updated_ns is read
 * before the process looks at the access time.
 *
 * Consistency without a lock: `begun` (the last field) is set to n before
 * the body is written and `done` (near the start) to n after it. A reader
 * copies the page in one read, in address order (done, body, begun) and
 * keeps the copy when done == begun != 0; else it reads again.
 *
 * Byte values are bytes; device numbers are the driver's ordinals. All
 * fields are native-endian (a reader runs on the same machine).
 */
#ifndef GMG_CLUSTER_STATUS_LAYOUT_H
#define GMG_CLUSTER_STATUS_LAYOUT_H

#include <stdint.h>

#define GMG_STATUS_DIR      "/dev/shm"
#define GMG_STATUS_PREFIX   "gpumemguard-top-"          /* then UID-PID */
#define GMG_STATUS_MAGIC    0x31706f74676d6721ull       /* "!gmgtop1" */
#define GMG_STATUS_VERSION  1
#define GMG_STATUS_DEVICES  64                          /* as GMG_MAX_DEVICES */
#define GMG_STATUS_CMD      1024                        /* program and arguments */
#define GMG_STATUS_GROUP    72                          /* GPUMEM_GROUP (64 at most) */
#define GMG_STATUS_SITE     256                         /* "function file:line" */

struct gmg_status_dev {
    uint64_t used;        /* bytes of the allocations this process holds now, as the quota counts them */
    uint64_t limit;       /* the quota, or the group's budget; 0: no limit */
    uint64_t peak;        /* the most this process held at once */
    uint64_t refused;     /* allocations the quota refused (or let over, under warn) */
    uint64_t driver_oom;  /* CUDA_ERROR_OUT_OF_MEMORY answers from the driver itself */
    int64_t growth;       /* used now less used at the previous write */
    uint64_t live_allocs; /* live allocations (not reserved ranges or mappings) */
    uint64_t group_used;  /* under GPUMEM_GROUP: every member's bytes; else 0 */
    uint64_t group_peak;  /* under GPUMEM_GROUP: the most the group held at once */
    uint64_t pad[3];
};

struct gmg_status_page {
    uint64_t magic;                 /* GMG_STATUS_MAGIC */
    uint64_t done;                  /* the number of the last write finished */
    uint32_t version;               /* GMG_STATUS_VERSION */
    uint32_t size;                  /* sizeof(struct gmg_status_page) */
    int32_t pid;                    /* getpid() */
    uint32_t uid;                   /* geteuid() */
    uint64_t start_time;            /* /proc/self/stat field 22 (clock ticks after boot) */
    uint64_t pid_ns;                /* inode of /proc/self/ns/pid; 0 when unknown */
    uint64_t updated_ns;            /* CLOCK_REALTIME of this write, nanoseconds */
    uint32_t interval_ms;           /* time since the previous write (growth's interval); 0 at the first */
    uint32_t devices;               /* entries of dev[] in use: 1 + the highest device used */
    uint32_t group_members;         /* under GPUMEM_GROUP: processes of the group now */
    uint32_t flags;                 /* GMG_STATUS_* below */
    char command[GMG_STATUS_CMD];   /* /proc/self/cmdline, arguments joined by spaces, cut short */
    char group[GMG_STATUS_GROUP];   /* GPUMEM_GROUP, "" for none */
    char site[GMG_STATUS_SITE];     /* the biggest live call site, "" when none is live or not yet named */
    uint64_t site_bytes;            /* its live bytes */
    uint64_t site_allocs;           /* its live allocations */
    int32_t site_device;            /* its device */
    uint32_t pad0;
    struct gmg_status_dev dev[GMG_STATUS_DEVICES];
    uint64_t begun;                 /* the number of the last write begun (last field) */
};

#define GMG_STATUS_GROUPED   1u     /* the process is in a group (group[] named) */
#define GMG_STATUS_STACKS    2u     /* stacks are on: site[] names a frame */

#include "base/procstat.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* A page is rewritten every second while its process lives. One of another
 * pid namespace, whose pid cannot be checked from here, is a dead
 * process's once it has not been written for this long (a live writer
 * whose page was judged dead, stopped meanwhile, makes it anew). */
#define GMG_STATUS_STALE_S 30

/* Was the page written within GMG_STATUS_STALE_S of now (either way: a
 * clock set back)? */
static inline int gmg_status_written_lately(const struct gmg_status_page *p)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec, w = p->updated_ns;
    uint64_t d = now > w ? now - w : w - now;
    return d < (uint64_t)GMG_STATUS_STALE_S * 1000000000u;
}

/* From the text of /proc/PID/stat: the process's state letter and its
 * start time (field 22, clock ticks after boot). 0 on success, -1 when the
 * text is not such a line. */
static inline int gmg_status_parse_stat(const char *text, char *state, uint64_t *start_time)
{
    const char *s = gmg_proc_stat_field(text, 3), *p = gmg_proc_stat_field(text, 22);
    if (!s || !p)
        return -1;
    char *end;
    unsigned long long v = strtoull(p, &end, 10);
    if (end == p || (*end != ' ' && *end != '\n' && *end))
        return -1;
    *state = *s;
    *start_time = v;
    return 0;
}

/* "UID-PID" after the prefix: digits only, nothing else. 0, or -1. */
static inline int gmg_status_parse_name(const char *s, unsigned long *uid, long *pid)
{
    char *end;
    if (*s < '0' || *s > '9')
        return -1;
    errno = 0;
    *uid = strtoul(s, &end, 10);
    if (errno || *end != '-' || end[1] < '0' || end[1] > '9' || *uid > UINT32_MAX)
        return -1;
    const char *p = end + 1;
    *pid = strtol(p, &end, 10);
    if (errno || *end || *pid <= 0 || *pid > INT32_MAX)
        return -1;
    return 0;
}

/* Reads a small file whole into buf (cap bytes, NUL-terminated): its
 * length, or -1 with errno (the library's raises its descriptor out of the
 * program's way, base/fd.h; top's is plain). */
typedef long (*gmg_status_reader)(const char *path, char *buf, size_t cap);

/* Opens a file for reading (O_RDONLY and `flags`, O_CLOEXEC among them:
 * the caller's), returning a descriptor or -1 with errno (the library's
 * raises its descriptor out of the program's way, base/fd.h; top's is
 * plain). */
typedef int (*gmg_status_opener)(const char *path, int flags);

/* A page opened to be read with its access time left alone (O_NOATIME),
 * since that time is a top's mark that it watches the page; without it
 * where O_NOATIME is refused (EPERM: not the file's owner, whose access
 * time is then no mark of ours to keep). Never through a symlink. */
static inline int gmg_status_open_unmarked(gmg_status_opener op, const char *path)
{
    int fd = op(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOATIME);
    if (fd < 0 && errno == EPERM)
        fd = op(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    return fd;
}

/* 1: alive with that start time (0: any); 0: gone (or another process, or
 * a zombie: a main thread that ended by pthread_exit, the process's other
 * threads running on, is not one); -1: cannot tell. */
static inline int gmg_status_alive(gmg_status_reader rd, pid_t pid, uint64_t start_time)
{
    char path[64], buf[1024], state;
    uint64_t t;
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    errno = 0;
    long n = rd(path, buf, sizeof buf);
    if (n < 0)
        return errno == ENOENT || errno == ESRCH ? 0 : -1;
    if (n == 0 || gmg_status_parse_stat(buf, &state, &t) != 0)
        return -1;
    if (start_time && t != start_time)
        return 0;
    if (state == 'X')
        return 0;
    if (state == 'Z') { /* field 20: the threads, the zombie leader among them */
        const char *th = gmg_proc_stat_field(buf, 20);
        return th && strtol(th, NULL, 10) > 1 ? 1 : 0;
    }
    return 1;
}

/* Is a valid page (magic, version, size, the pid and uid of its name
 * checked) a dead process's, judged from pid namespace `ns` (0: unknown)?
 * One of another namespace, whose pids are not ours to check, is dead
 * once not written for GMG_STATUS_STALE_S. */
static inline int gmg_status_dead(gmg_status_reader rd, const struct gmg_status_page *p, uint64_t ns)
{
    if (p->pid_ns && ns && p->pid_ns != ns)
        return !gmg_status_written_lately(p);
    return gmg_status_alive(rd, (pid_t)p->pid, p->start_time) == 0;
}

#endif
