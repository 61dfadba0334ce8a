/*
 * top.c - `gpumemguard top` (see top.h): reads the status pages under
 * /dev/shm (cluster/status_layout.h) and shows, refreshed every second, each
 * guarded process with its devices, group and biggest live call site, and a
 * line per group with its budget. --once prints one frame as plain text,
 * --json one frame as JSON; --pid and --group filter, --sort orders.
 *
 * A page is read only when it is a regular file (opened with O_NOFOLLOW)
 * owned by the uid its name carries, mode 0600, of the page's size; a user
 * reads only pages of their own uid, root every user's, and a page shows
 * its process only while that process runs as the page's uid. A page whose
 * process is gone (no /proc/PID, another start time, a zombie) is skipped
 * and removed by its owner or root. The terminal view is plain ANSI: the
 * alternate screen, raw keys (b, g, r to sort by bytes, growth or refusals,
 * q to quit), the terminal restored at exit and on the signals that end or
 * stop the command.
 */
#define _GNU_SOURCE
#include "cli/top.h"
#include "base/buf.h"
#include "cluster/status_layout.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

enum sort_key { SORT_BYTES, SORT_GROWTH, SORT_REFUSED };
static const char *const sort_names[] = { "bytes", "growth", "refused" };

struct proc {
    struct gmg_status_page p;
    uint64_t used, refused, driver_oom;
    int64_t growth;
    double age_s;           /* since its last write */
    int marked;             /* this scan set its access time: it names its site */
};

struct group {
    char name[GMG_STATUS_GROUP];
    uint32_t uid;
    const struct proc *latest; /* the member page written last: the group's numbers */
    unsigned shown;            /* members listed here */
};

struct frame {
    struct proc *v;
    size_t n, cap;
    struct group *g;
    size_t ng;
};

#define MAX_FILTERS 64
static pid_t want_pid[MAX_FILTERS];
static size_t nwant_pid;
static const char *want_group[MAX_FILTERS];
static size_t nwant_group;

static void die(int status, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));
static void die(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("gpumemguard: top: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs(status == 2 ? "\nTry 'gpumemguard top --help'.\n" : "\n", stderr);
    exit(status);
}

/* ------------------------------------------------------------ pages */

static uint64_t my_pid_ns(void)
{
    struct stat st;
    return stat("/proc/self/ns/pid", &st) == 0 ? (uint64_t)st.st_ino : 0;
}

/* Whether the process runs as `uid` (its real or effective uid, from
 * /proc/PID/status, which says so whoever owns the process's files): a page
 * is its process's only then, since any user may write a page naming any
 * pid and its start time, which /proc shows everyone. 1, 0, or -1: cannot
 * tell. */
static int runs_as(pid_t pid, uint32_t uid)
{
    char path[64], buf[4096];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = 0;
    const char *l = strstr(buf, "\nUid:");
    unsigned long real, eff;
    if (!l || sscanf(l + 5, "%lu %lu", &real, &eff) != 2)
        return -1;
    return real == uid || eff == uid;
}

/* A small file read whole (gmg_status_reader). */
static int plain_open(const char *path, int flags) { return open(path, flags); }

static long plain_read(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, cap - 1);
    int e = errno;
    close(fd);
    errno = e;
    if (n < 0)
        return -1;
    buf[n] = 0;
    return (long)n;
}

/* One consistent copy of the page: done == begun != 0 (status_layout.h).
 * A page being written is read again after a nap of 1 ms, out of *naps
 * left for the whole scan: a page that always reads as being written (its
 * writer stopped there, or a file planted so) costs the scan at most that,
 * however many there are. */
static int read_page(int fd, struct gmg_status_page *p, int *naps)
{
    for (;;) {
        if (pread(fd, p, sizeof *p, 0) != (ssize_t)sizeof *p)
            return -1;
        if (p->done && p->done == p->begun)
            return 0;
        if (!p->done && !p->begun)
            return -1; /* made, not written yet */
        if (*naps <= 0)
            return -1; /* shown at the next scan */
        --*naps;
        struct timespec ts = { 0, 1000000 };
        nanosleep(&ts, NULL);
    }
}

/* A page's text as a terminal may show it. Its writer is another process,
 * perhaps another user's (root sees every page), so nothing it holds may
 * reach the terminal as a control, nor a script as text that is not
 * UTF-8: C0 and C1 controls, DEL and each byte of no well-formed UTF-8
 * sequence become '?', in place (never longer). */
static void printable(char *s)
{
    char *w = s;
    for (const char *p = s; *p;) {
        const unsigned char *u = (const unsigned char *)p;
        size_t n = gmg_utf8_seq(p);
        if (n == 0 || (n == 1 && (u[0] < 0x20 || u[0] == 0x7f)) || (n == 2 && u[0] == 0xc2 && u[1] < 0xa0)) {
            *w++ = '?';
            p += n ? n : 1;
        } else {
            memmove(w, p, n);
            w += n;
            p += n;
        }
    }
    *w = 0;
}

static void proc_add(struct frame *f, const struct gmg_status_page *p)
{
    if (f->n == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 16;
        struct proc *v = realloc(f->v, cap * sizeof *v);
        if (!v)
            die(1, "out of memory");
        f->v = v;
        f->cap = cap;
    }
    struct proc *x = &f->v[f->n++];
    memset(x, 0, sizeof *x);
    x->p = *p;
    x->p.command[sizeof x->p.command - 1] = 0;
    x->p.group[sizeof x->p.group - 1] = 0;
    x->p.site[sizeof x->p.site - 1] = 0;
    printable(x->p.command);
    printable(x->p.group);
    printable(x->p.site);
    if (x->p.devices > GMG_STATUS_DEVICES)
        x->p.devices = GMG_STATUS_DEVICES;
    for (uint32_t d = 0; d < x->p.devices; d++) {
        x->used += x->p.dev[d].used;
        x->refused += x->p.dev[d].refused;
        x->driver_oom += x->p.dev[d].driver_oom;
        x->growth += x->p.dev[d].growth;
    }
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    double t = (double)now.tv_sec + now.tv_nsec / 1e9, u = (double)x->p.updated_ns / 1e9;
    x->age_s = t > u ? t - u : 0;
}

static int wanted(const struct gmg_status_page *p)
{
    int ok = !nwant_pid;
    for (size_t i = 0; i < nwant_pid && !ok; i++)
        ok = want_pid[i] == p->pid;
    if (!ok)
        return 0;
    ok = !nwant_group;
    for (size_t i = 0; i < nwant_group && !ok; i++)
        ok = (p->flags & GMG_STATUS_GROUPED) && strcmp(want_group[i], p->group) == 0;
    return ok;
}

/* A dead process's page: removed when it is still the file we judged (its
 * owner or root may; /dev/shm is sticky). */
static void clean(const char *path, const struct stat *judged)
{
    struct stat now;
    if (judged->st_uid != geteuid() && geteuid() != 0)
        return;
    if (lstat(path, &now) == 0 && now.st_dev == judged->st_dev && now.st_ino == judged->st_ino)
        unlink(path);
}

static void scan(struct frame *f)
{
    f->n = 0;
    uid_t me = geteuid();
    uint64_t ns = my_pid_ns();
    DIR *dir = opendir(GMG_STATUS_DIR);
    if (!dir)
        return;
    struct dirent *e;
    static struct gmg_status_page p;
    int naps = 50; /* the scan's waits for pages being written, 1 ms each */
    while ((e = readdir(dir))) {
        size_t plen = strlen(GMG_STATUS_PREFIX);
        unsigned long uid;
        long pid;
        if (strncmp(e->d_name, GMG_STATUS_PREFIX, plen) != 0 || gmg_status_parse_name(e->d_name + plen, &uid, &pid) != 0)
            continue;
        if (me != 0 && uid != me)
            continue; /* another user's: not ours to see */
        char path[PATH_MAX];
        snprintf(path, sizeof path, GMG_STATUS_DIR "/%s", e->d_name);
        /* (its access time left alone but for the pages shown: it marks them watched) */
        int fd = gmg_status_open_unmarked(plain_open, path);
        if (fd < 0)
            continue; /* a symlink (ELOOP), gone meanwhile, not readable */
        struct stat st;
        int ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == uid && (st.st_mode & 07777) == 0600;
        if (!ok) { /* planted: another owner, another mode, not a file; left alone */
            close(fd);
            continue;
        }
        int got = st.st_size == (off_t)sizeof p && read_page(fd, &p, &naps) == 0 && p.magic == GMG_STATUS_MAGIC &&
                  p.version == GMG_STATUS_VERSION && p.size == sizeof p && p.pid == pid && p.uid == uid;
        if (got && p.pid_ns && ns && p.pid_ns != ns) { /* another pid namespace's: its pids are not ours to check */
            close(fd);
            if (gmg_status_dead(plain_read, &p, ns))
                clean(path, &st); /* not written for 30 s: its process is gone (a live one makes it anew) */
            continue;
        }
        int live = gmg_status_alive(plain_read, (pid_t)pid, got ? p.start_time : 0);
        if (live == 0) {
            close(fd);
            clean(path, &st);
            continue;
        }
        if (!got || live < 0 || !wanted(&p) || runs_as((pid_t)pid, (uint32_t)uid) != 1) {
            close(fd);
            continue; /* another user's process: a page planted for it, left alone */
        }
        /* watched: the process names its biggest site while this is recent
         * (it needs write access: the owner's, or root's) */
        const struct timespec touch[2] = { { 0, UTIME_NOW }, { 0, UTIME_OMIT } };
        int marked = futimens(fd, touch) == 0;
        close(fd);
        proc_add(f, &p);
        f->v[f->n - 1].marked = marked;
    }
    closedir(dir);
}

/* Is x a page this scan marked that shows a site not named yet, written
 * lately (a stopped process writes none) but not since `after`? */
static int name_due(const struct proc *x, uint64_t after)
{
    return x->marked && x->p.site_bytes && !x->p.site[0] && x->age_s < 2.0 && x->p.updated_ns < after;
}

/* A process names its biggest site only while a reader watches its page
 * (the scan marks it): one frame waits for the next write of any page
 * that shows a site not named yet, up to a second and a half. A page
 * written after the marks were made was written by a process that saw
 * them (it reads the clock for updated_ns before it looks at the mark). */
static void scan_named(struct frame *f)
{
    scan(f);
    struct timespec t0;
    clock_gettime(CLOCK_REALTIME, &t0);
    uint64_t marked = (uint64_t)t0.tv_sec * 1000000000u + (uint64_t)t0.tv_nsec;
    for (int tries = 0; tries < 30; tries++) {
        size_t i = 0;
        while (i < f->n && !name_due(&f->v[i], marked))
            i++;
        if (i == f->n)
            return;
        struct timespec nap = { 0, 50000000 };
        nanosleep(&nap, NULL);
        scan(f);
    }
}

static void group_all(struct frame *f)
{
    free(f->g);
    f->g = NULL;
    f->ng = 0;
    if (!f->n)
        return;
    f->g = calloc(f->n, sizeof *f->g);
    if (!f->g)
        die(1, "out of memory");
    for (size_t i = 0; i < f->n; i++) {
        const struct proc *x = &f->v[i];
        if (!(x->p.flags & GMG_STATUS_GROUPED))
            continue;
        size_t k = 0;
        while (k < f->ng && !(f->g[k].uid == x->p.uid && strcmp(f->g[k].name, x->p.group) == 0))
            k++;
        if (k == f->ng) {
            snprintf(f->g[k].name, sizeof f->g[k].name, "%s", x->p.group);
            f->g[k].uid = x->p.uid;
            f->ng++;
        }
        if (!f->g[k].latest || x->p.updated_ns > f->g[k].latest->p.updated_ns)
            f->g[k].latest = x;
        f->g[k].shown++;
    }
}

static enum sort_key sort_by;

static int cmp_u64(uint64_t a, uint64_t b) { return a > b ? -1 : a < b; }

static int by_key(const void *a, const void *b)
{
    const struct proc *x = a, *y = b;
    int c = 0;
    if (sort_by == SORT_GROWTH)
        c = x->growth > y->growth ? -1 : x->growth < y->growth;
    else if (sort_by == SORT_REFUSED)
        c = cmp_u64(x->refused + x->driver_oom, y->refused + y->driver_oom);
    if (!c)
        c = cmp_u64(x->used, y->used);
    if (!c)
        c = x->p.pid < y->p.pid ? -1 : x->p.pid > y->p.pid;
    return c;
}

static void group_sort(struct frame *f)
{
    if (f->n > 1)
        qsort(f->v, f->n, sizeof *f->v, by_key);
    group_all(f); /* after the sort: `latest` points into v */
}

/* ------------------------------------------------------------ text */

struct out { char *p; size_t len, cap; };

static void outf(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void outf(struct out *o, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(o->p ? o->p + o->len : NULL, o->p ? o->cap - o->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0)
            return;
        if (o->p && o->len + (size_t)n < o->cap) {
            o->len += (size_t)n;
            return;
        }
        size_t cap = o->cap ? o->cap : 4096;
        while (cap <= o->len + (size_t)n)
            cap *= 2;
        char *p = realloc(o->p, cap);
        if (!p)
            die(1, "out of memory");
        o->p = p;
        o->cap = cap;
    }
}

/* "3.0 MiB", "512 B" */
static const char *human(char *buf, size_t n, uint64_t v)
{
    static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
    if (v < 1024) {
        snprintf(buf, n, "%" PRIu64 " B", v);
        return buf;
    }
    double x = (double)v;
    int u = 0;
    while (x >= 1024 && u < 6) {
        x /= 1024;
        u++;
    }
    snprintf(buf, n, "%.1f %s", x, unit[u]);
    return buf;
}

static const char *signed_human(char *buf, size_t n, int64_t v)
{
    char h[32];
    if (v == 0)
        snprintf(buf, n, "0");
    else
        snprintf(buf, n, "%c%s", v < 0 ? '-' : '+', human(h, sizeof h, v < 0 ? (uint64_t)(-(v + 1)) + 1 : (uint64_t)v));
    return buf;
}

static const char *limit_text(char *buf, size_t n, uint64_t v)
{
    return v ? human(buf, n, v) : strcpy(buf, "none");
}

/* Has the process used the device (a device below the highest it used may
 * be one it never touched)? */
static int dev_used(const struct gmg_status_dev *v)
{
    return v->used || v->peak || v->refused || v->driver_oom || v->live_allocs || v->growth;
}

/* One frame; each line ends with "\n". */
static void text_frame(struct out *o, const struct frame *f, const char *keys)
{
    char when[64];
    time_t now = time(NULL);
    struct tm tm;
    strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", localtime_r(&now, &tm));
    outf(o, "gpumemguard top - %s - %zu process%s, %zu group%s - sorted by %s%s\n", when, f->n, f->n == 1 ? "" : "es",
         f->ng, f->ng == 1 ? "" : "s", sort_names[sort_by], keys ? keys : "");
    outf(o, "%8s %3s %10s %10s %10s %7s %5s %10s  %-12s %s\n", "PID", "DEV", "IN USE", "LIMIT", "PEAK", "REFUSED",
         "OOMS", "GROWTH", "GROUP", "COMMAND");
    for (size_t i = 0; i < f->n; i++) {
        const struct proc *x = &f->v[i];
        const char *grp = (x->p.flags & GMG_STATUS_GROUPED) ? x->p.group : "-";
        char a[32], b[32], c[32], g[32];
        int shown = 0;
        for (uint32_t d = 0; d < x->p.devices; d++) {
            const struct gmg_status_dev *v = &x->p.dev[d];
            if (!dev_used(v))
                continue; /* below the highest it used, one it never used */
            if (!shown)
                outf(o, "%8d", (int)x->p.pid);
            else
                outf(o, "%8s", "");
            outf(o, " %3u %10s %10s %10s %7" PRIu64 " %5" PRIu64 " %10s", d, human(a, sizeof a, v->used),
                 limit_text(b, sizeof b, v->limit), human(c, sizeof c, v->peak), v->refused, v->driver_oom,
                 signed_human(g, sizeof g, v->growth));
            if (!shown++)
                outf(o, "  %-12s %s\n", grp, x->p.command);
            else
                outf(o, "\n");
        }
        if (!shown)
            outf(o, "%8d %3s %10s %10s %10s %7s %5s %10s  %-12s %s\n", (int)x->p.pid, "-", "0", "-", "-", "0", "0", "0",
                 grp, x->p.command);
        if (x->p.site_bytes)
            outf(o, "%8s     biggest site: %s in %" PRIu64 " allocation%s on device %d: %s\n", "",
                 human(a, sizeof a, x->p.site_bytes), x->p.site_allocs, x->p.site_allocs == 1 ? "" : "s",
                 (int)x->p.site_device, x->p.site[0] ? x->p.site : "(not named)");
    }
    for (size_t k = 0; k < f->ng; k++) {
        const struct group *gr = &f->g[k];
        const struct gmg_status_page *p = &gr->latest->p;
        outf(o, "group %s (uid %u): %u member%s", gr->name, (unsigned)gr->uid, p->group_members,
             p->group_members == 1 ? "" : "s");
        for (uint32_t d = 0; d < p->devices; d++) {
            char a[32], b[32], c[32];
            outf(o, "; device %u %s in use of %s budget, peak %s", d, human(a, sizeof a, p->dev[d].group_used),
                 p->dev[d].limit ? human(b, sizeof b, p->dev[d].limit) : "no", human(c, sizeof c, p->dev[d].group_peak));
        }
        outf(o, "\n");
    }
}

/* ------------------------------------------------------------ JSON */

static void json_str(struct out *o, const char *s)
{
    outf(o, "\"");
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c == '"' || *c == '\\')
            outf(o, "\\%c", *c);
        else if (*c < 0x20 || *c == 0x7f)
            outf(o, "\\u%04x", *c);
        else
            outf(o, "%c", *c);
    }
    outf(o, "\"");
}

static void json_frame(struct out *o, const struct frame *f)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    outf(o, "{\"schema\": 1, \"time\": %lld.%03ld, \"sort\": \"%s\", \"processes\": [", (long long)now.tv_sec,
         now.tv_nsec / 1000000, sort_names[sort_by]);
    for (size_t i = 0; i < f->n; i++) {
        const struct proc *x = &f->v[i];
        outf(o, "%s\n  {\"pid\": %d, \"uid\": %u, \"command\": ", i ? "," : "", (int)x->p.pid, (unsigned)x->p.uid);
        json_str(o, x->p.command);
        outf(o, ", \"group\": ");
        if (x->p.flags & GMG_STATUS_GROUPED)
            json_str(o, x->p.group);
        else
            outf(o, "null");
        outf(o, ", \"used\": %" PRIu64 ", \"growth\": %" PRId64 ", \"refused\": %" PRIu64 ", \"driver_oom\": %" PRIu64
                ", \"interval_ms\": %u, \"age_ms\": %.0f, \"devices\": [",
             x->used, x->growth, x->refused, x->driver_oom, x->p.interval_ms, x->age_s * 1000);
        for (uint32_t d = 0; d < x->p.devices; d++) {
            const struct gmg_status_dev *v = &x->p.dev[d];
            outf(o, "%s{\"device\": %u, \"used\": %" PRIu64 ", \"limit\": %" PRIu64 ", \"peak\": %" PRIu64
                    ", \"refused\": %" PRIu64 ", \"driver_oom\": %" PRIu64 ", \"growth\": %" PRId64
                    ", \"live_allocations\": %" PRIu64 "}",
                 d ? ", " : "", d, v->used, v->limit, v->peak, v->refused, v->driver_oom, v->growth, v->live_allocs);
        }
        outf(o, "], \"site\": ");
        if (x->p.site_bytes) {
            outf(o, "{\"bytes\": %" PRIu64 ", \"allocations\": %" PRIu64 ", \"device\": %d, \"name\": ", x->p.site_bytes,
                 x->p.site_allocs, (int)x->p.site_device);
            json_str(o, x->p.site);
            outf(o, "}");
        } else {
            outf(o, "null");
        }
        outf(o, "}");
    }
    outf(o, "%s], \"groups\": [", f->n ? "\n" : "");
    for (size_t k = 0; k < f->ng; k++) {
        const struct group *gr = &f->g[k];
        const struct gmg_status_page *p = &gr->latest->p;
        outf(o, "%s\n  {\"name\": ", k ? "," : "");
        json_str(o, gr->name);
        outf(o, ", \"uid\": %u, \"members\": %u, \"members_shown\": %u, \"devices\": [", (unsigned)gr->uid,
             p->group_members, gr->shown);
        for (uint32_t d = 0; d < p->devices; d++)
            outf(o, "%s{\"device\": %u, \"used\": %" PRIu64 ", \"budget\": %" PRIu64 ", \"peak\": %" PRIu64 "}",
                 d ? ", " : "", d, p->dev[d].group_used, p->dev[d].limit, p->dev[d].group_peak);
        outf(o, "]}");
    }
    outf(o, "%s]}\n", f->ng ? "\n" : "");
}

/* ------------------------------------------------------------ terminal */

static struct termios saved_tio;
static volatile sig_atomic_t tio_saved, resized, screen_on;

#define ENTER_SCREEN "\033[?1049h\033[?25l"
#define LEAVE_SCREEN "\033[?25h\033[?1049l"

static void put(const char *s)
{
    size_t n = strlen(s);
    while (n) {
        ssize_t w = write(STDOUT_FILENO, s, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        s += w;
        n -= (size_t)w;
    }
}

/* Async-signal-safe: only write(2) and tcsetattr(3). */
static void restore(void)
{
    if (screen_on) {
        put(LEAVE_SCREEN);
        screen_on = 0;
    }
    if (tio_saved)
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_tio);
}

static void raw_on(void)
{
    if (tio_saved) {
        struct termios t = saved_tio;
        t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
        t.c_cc[VMIN] = 1;
        t.c_cc[VTIME] = 0;
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &t);
    }
    put(ENTER_SCREEN);
    screen_on = 1;
}

static void on_fatal(int sig)
{
    int e = errno;
    restore();
    signal(sig, SIG_DFL);
    raise(sig); /* ends the command as the signal would have: status 128+N to its parent */
    errno = e;
}

static void on_stop(int sig)
{
    int e = errno;
    restore();
    signal(sig, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    raise(sig);
    sigprocmask(SIG_UNBLOCK, &set, NULL); /* stops here; a SIGCONT goes on below */
    signal(sig, on_stop);
    raw_on();
    resized = 1; /* draw again at once */
    errno = e;
}

static void on_winch(int sig)
{
    (void)sig;
    resized = 1;
}

static void handle(int sig, void (*fn)(int))
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = fn;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL); /* no SA_RESTART: poll returns at once */
}

/* Draw lines of the frame cut to the terminal's width and height. */
/* The columns a code point takes: 2 for the wide ones (East Asian scripts,
 * most emoji), 1 for the rest (the text is printable, UTF-8). */
static int columns_of(uint32_t c)
{
    /* East Asian Width W and F (Unicode 15), emoji presentation included */
    static const uint32_t wide[][2] = {
        { 0x1100, 0x115f }, { 0x231a, 0x231b }, { 0x2329, 0x232a }, { 0x23e9, 0x23ec }, { 0x23f0, 0x23f0 },
        { 0x23f3, 0x23f3 }, { 0x25fd, 0x25fe }, { 0x2614, 0x2615 }, { 0x2648, 0x2653 }, { 0x267f, 0x267f },
        { 0x2693, 0x2693 }, { 0x26a1, 0x26a1 }, { 0x26aa, 0x26ab }, { 0x26bd, 0x26be }, { 0x26c4, 0x26c5 },
        { 0x26ce, 0x26ce }, { 0x26d4, 0x26d4 }, { 0x26ea, 0x26ea }, { 0x26f2, 0x26f3 }, { 0x26f5, 0x26f5 },
        { 0x26fa, 0x26fa }, { 0x26fd, 0x26fd }, { 0x2705, 0x2705 }, { 0x270a, 0x270b }, { 0x2728, 0x2728 },
        { 0x274c, 0x274c }, { 0x274e, 0x274e }, { 0x2753, 0x2755 }, { 0x2757, 0x2757 }, { 0x2795, 0x2797 },
        { 0x27b0, 0x27b0 }, { 0x27bf, 0x27bf }, { 0x2b1b, 0x2b1c }, { 0x2b50, 0x2b50 }, { 0x2b55, 0x2b55 },
        { 0x2e80, 0x303e }, { 0x3041, 0x33ff }, { 0x3400, 0x4dbf }, { 0x4e00, 0x9fff }, { 0xa000, 0xa4cf },
        { 0xa960, 0xa97f }, { 0xac00, 0xd7a3 }, { 0xf900, 0xfaff }, { 0xfe10, 0xfe19 }, { 0xfe30, 0xfe6f },
        { 0xff00, 0xff60 }, { 0xffe0, 0xffe6 }, { 0x16fe0, 0x16fe4 }, { 0x17000, 0x18cd5 }, { 0x1b000, 0x1b2ff },
        { 0x1f004, 0x1f004 }, { 0x1f0cf, 0x1f0cf }, { 0x1f18e, 0x1f18e }, { 0x1f191, 0x1f19a },
        { 0x1f1e6, 0x1f202 }, { 0x1f210, 0x1f23b }, { 0x1f240, 0x1f248 }, { 0x1f250, 0x1f251 },
        { 0x1f260, 0x1f265 }, { 0x1f300, 0x1f64f }, { 0x1f680, 0x1f6ff }, { 0x1f7e0, 0x1f7eb }, { 0x1f7f0, 0x1f7f0 },
        { 0x1f90c, 0x1f9ff }, { 0x1fa70, 0x1faff }, { 0x20000, 0x3fffd },
    };
    for (size_t i = 0; i < sizeof wide / sizeof wide[0]; i++)
        if (c >= wide[i][0] && c <= wide[i][1])
            return 2;
    return 1;
}

/* How many bytes of a line of len bytes fit in cols columns, never half a
 * character. */
static size_t fit(const char *p, size_t len, int cols)
{
    size_t i = 0;
    int used = 0;
    while (i < len) {
        const unsigned char *u = (const unsigned char *)p + i;
        size_t n = u[0] < 0x80 ? 1 : u[0] < 0xe0 ? 2 : u[0] < 0xf0 ? 3 : 4;
        if (n > len - i)
            break;
        uint32_t c = n == 1 ? u[0] : n == 2 ? (u[0] & 0x1fu) : n == 3 ? (u[0] & 0x0fu) : (u[0] & 0x07u);
        for (size_t k = 1; k < n; k++)
            c = c << 6 | (u[k] & 0x3fu);
        int w = columns_of(c);
        if (used + w > cols)
            break;
        used += w;
        i += n;
    }
    return i;
}

static void draw(const struct out *o)
{
    struct winsize ws;
    int cols = 80, rows = 24;
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col && ws.ws_row) {
        cols = ws.ws_col;
        rows = ws.ws_row;
    }
    struct out s = { 0 };
    outf(&s, "\033[H");
    const char *p = o->p, *end = o->p + o->len;
    for (int row = 0; p < end && row < rows; row++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
        if (row == 1)
            outf(&s, "\033[7m"); /* the heading, inverted */
        outf(&s, "%.*s", (int)fit(p, len, cols), p);
        if (row == 1)
            outf(&s, "\033[0m");
        outf(&s, "\033[K%s", row + 1 < rows ? "\r\n" : "");
        p = nl ? nl + 1 : end;
    }
    outf(&s, "\033[J");
    put(s.p);
    free(s.p);
}

/* Is byte c part of an escape sequence (a function key, an arrow, or
 * what a terminal sends for the mouse wheel in the alternate screen:
 * ESC [ params final, the Linux console's ESC [ [ x, ESC O x, Alt+key as
 * ESC x, Alt+arrow as ESC ESC [ x), whose bytes are no keys of ours? An
 * ESC that nothing follows within 50 ms is the Esc key. */
static int in_escape(char c)
{
    /* 0 none, 1 after ESC, 2 after ESC [, 3 one byte more, 4 in ESC [ params */
    static int state;
    unsigned char u = (unsigned char)c;
    int final = u >= 0x40 && u <= 0x7e;
    switch (state) {
    case 1:
        state = u == '[' ? 2 : u == 'O' ? 3 : u == 0x1b ? 1 : 0;
        return 1;
    case 2:
        state = u == '[' ? 3 : final ? 0 : 4;
        return 1;
    case 4:
        if (final)
            state = 0;
        return 1;
    case 3:
        state = 0;
        return 1;
    default:
        if (u != 0x1b)
            return 0;
        struct pollfd more = { .fd = STDIN_FILENO, .events = POLLIN };
        int r;
        while ((r = poll(&more, 1, 50)) < 0 && errno == EINTR) /* a resize meanwhile */
            ;
        state = r > 0 && (more.revents & POLLIN) ? 1 : 0;
        return 1;
    }
}

static int live_view(struct frame *f)
{
    if (!isatty(STDOUT_FILENO))
        die(1, "standard output is not a terminal: use --once (plain text) or --json");
    if (isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved_tio) == 0)
        tio_saved = 1;
    static const int fatal[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE };
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++)
        handle(fatal[i], on_fatal);
    handle(SIGTSTP, on_stop);
    handle(SIGWINCH, on_winch);
    atexit(restore);
    raw_on();
    const char *keys = tio_saved ? " (b bytes, g growth, r refused, q quit)" : "";
    struct timespec next = { 0, 0 };
    for (;;) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec > next.tv_sec || (now.tv_sec == next.tv_sec && now.tv_nsec >= next.tv_nsec)) {
            scan(f);
            next = now;
            next.tv_sec += 1;
            resized = 1;
        }
        if (resized) {
            resized = 0;
            group_sort(f);
            struct out o = { 0 };
            text_frame(&o, f, keys);
            draw(&o);
            free(o.p);
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
        long long ms = (long long)(next.tv_sec - now.tv_sec) * 1000 + (next.tv_nsec - now.tv_nsec) / 1000000;
        struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
        int r = poll(&pfd, tio_saved ? 1 : 0, ms > 0 ? (int)ms : 0);
        if (r <= 0 || !(pfd.revents & POLLIN)) {
            if (r > 0 && (pfd.revents & (POLLHUP | POLLERR | POLLNVAL)))
                return 0; /* the terminal went away */
            continue;
        }
        char c;
        ssize_t n = read(STDIN_FILENO, &c, 1);
        if (n == 0)
            return 0;
        if (n < 0 || in_escape(c))
            continue;
        switch (c) {
        case 'q': case 'Q': case 3 /* ^C, if ISIG is off */: return 0;
        case 'b': case 'B': sort_by = SORT_BYTES; resized = 1; break;
        case 'g': case 'G': sort_by = SORT_GROWTH; resized = 1; break;
        case 'r': case 'R': sort_by = SORT_REFUSED; resized = 1; break;
        default: break;
        }
    }
}

/* ------------------------------------------------------------ main */

static void help(void)
{
    printf("usage: gpumemguard top [--once | --json] [--pid PID]... [--group NAME]... [--sort KEY]\n"
           "\n"
           "Shows every guarded process of this user on this machine (every user's, as root),\n"
           "refreshed every second: per device the bytes in use, limit, peak, refused allocations,\n"
           "out-of-memory answers of the driver and growth over the last second; its group, the\n"
           "program and arguments, and the biggest live call site (Python frame first when there is\n"
           "one); then a line per group with its budget. Keys: b, g, r sort by bytes, growth or\n"
           "refusals; q quits.\n"
           "\n"
           "  --once           print one frame as plain text and exit\n"
           "  --json           print one frame as JSON and exit\n"
           "  --pid PID        only this process (may be given again)\n"
           "  --group NAME     only the members of this GPUMEM_GROUP (may be given again)\n"
           "  --sort KEY       bytes (default), growth or refused\n"
           "  -h, --help       this text\n"
           "\n"
           "Each guarded process publishes its numbers in " GMG_STATUS_DIR "/" GMG_STATUS_PREFIX "UID-PID;\n"
           "a dead process's file is removed by the next reader, or by the user's next\n"
           "guarded process. See gpumemguard(1).\n");
}

static const char *value(int argc, char **argv, int *i, const char *name)
{
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (a[n] == '=')
        return a + n + 1;
    if (*i + 1 >= argc)
        die(2, "option '%s' needs a value", name);
    return argv[++*i];
}

static int option(const char *a, const char *name)
{
    size_t n = strlen(name);
    return strncmp(a, name, n) == 0 && (a[n] == 0 || a[n] == '=');
}

int gmg_top_main(int argc, char **argv)
{
    int once = 0, json = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            help();
            if (fflush(stdout) == 0 && !ferror(stdout))
                return 0;
            fprintf(stderr, "gpumemguard top: cannot write to standard output: %s\n", strerror(errno));
            return 1;
        } else if (!strcmp(a, "--once")) {
            once = 1;
        } else if (!strcmp(a, "--json")) {
            json = 1;
        } else if (option(a, "--pid")) {
            const char *v = value(argc, argv, &i, "--pid");
            char *end;
            errno = 0;
            long pid = strtol(v, &end, 10);
            if (errno || end == v || *end || pid <= 0 || pid > INT32_MAX)
                die(2, "--pid '%s' is not a process id", v);
            if (nwant_pid == MAX_FILTERS)
                die(2, "at most %d --pid options", MAX_FILTERS);
            want_pid[nwant_pid++] = (pid_t)pid;
        } else if (option(a, "--group")) {
            const char *v = value(argc, argv, &i, "--group");
            if (!*v || strlen(v) >= GMG_STATUS_GROUP)
                die(2, "--group '%s' is not a group name", v);
            if (nwant_group == MAX_FILTERS)
                die(2, "at most %d --group options", MAX_FILTERS);
            want_group[nwant_group++] = v;
        } else if (option(a, "--sort")) {
            const char *v = value(argc, argv, &i, "--sort");
            size_t k = 0;
            while (k < 3 && strcmp(v, sort_names[k]))
                k++;
            if (k == 3)
                die(2, "--sort '%s': use bytes, growth or refused", v);
            sort_by = (enum sort_key)k;
        } else {
            die(2, "unknown argument '%s'", a);
        }
    }
    if (once && json)
        die(2, "--once and --json: one or the other (a frame as text, or as JSON)");
    struct frame f = { 0 };
    if (once || json) {
        scan_named(&f);
        group_sort(&f);
        /* a --pid with no row: said (under --json its empty list says it) */
        for (size_t i = 0; !json && !nwant_group && i < nwant_pid; i++) {
            size_t k = 0;
            while (k < f.n && f.v[k].p.pid != want_pid[i])
                k++;
            if (k == f.n)
                fprintf(stderr, "gpumemguard top: no guarded process %d of yours (none running under the guard "
                                "with that pid, or it has not used CUDA yet)\n", (int)want_pid[i]);
        }
        struct out o = { 0 };
        if (json)
            json_frame(&o, &f);
        else
            text_frame(&o, &f, NULL);
        int rc = fwrite(o.p, 1, o.len, stdout) == o.len && fflush(stdout) == 0 ? 0 : 1;
        if (rc)
            fprintf(stderr, "gpumemguard top: cannot write to standard output: %s\n", strerror(errno));
        free(o.p);
        return rc;
    }
    return live_view(&f);
}
