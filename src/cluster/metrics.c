/* metrics.c - see metrics.h. */
#define _GNU_SOURCE
#include "cluster/metrics.h"

#include "base/buf.h"
#include "base/config.h"
#include "base/exe.h"
#include "base/fd.h"
#include "base/limit_parse.h"
#include "base/log.h"
#include "core/peak.h"
#include "core/quota.h"
#include "core/ranges.h"
#include "core/track.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SITES 10

static int by_stack(const void *a, const void *b)
{
    const struct gmg_live_site *x = a, *y = b;
    if (x->stack != y->stack)
        return x->stack < y->stack ? -1 : 1;
    return x->device - y->device;
}

/* Biggest first; equal sizes by stack and device. */
static int by_bytes(const void *a, const void *b)
{
    const struct gmg_live_site *x = a, *y = b;
    if (x->bytes != y->bytes)
        return x->bytes > y->bytes ? -1 : 1;
    return by_stack(a, b);
}

/* A label value: s with backslash, quote and newline escaped, as the
 * format asks, into out (n bytes, cut short if it is longer): on the
 * stack, so that out of memory never blanks a label. */
static const char *label(char *out, size_t n, const char *s)
{
    size_t k = 0;
    while (*s) {
        /* label values are UTF-8 (promtool refuses a file with one that is
         * not): a byte of no well-formed sequence is U+FFFD, and a value
         * cut short is cut between characters */
        size_t len = gmg_utf8_seq(s), w = len ? len : 3;
        if (*s == '\\' || *s == '"' || *s == '\n')
            w = 2;
        if (k + w + 1 > n)
            break;
        if (*s == '\\' || *s == '"') {
            out[k++] = '\\';
            out[k++] = *s;
        } else if (*s == '\n') {
            out[k++] = '\\';
            out[k++] = 'n';
        } else if (!len) {
            memcpy(out + k, "\xef\xbf\xbd", 3);
            k += 3;
            s++;
            continue;
        } else {
            memcpy(out + k, s, len);
            k += len;
            s += len;
            continue;
        }
        s++;
    }
    out[k] = 0;
    return out;
}

static void metric(struct gmg_buf *b, const char *name, const char *type, const char *help)
{
    gmg_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void series(struct gmg_buf *b, const char *name, int dev, const char *common, unsigned long long v)
{
    gmg_buf_printf(b, "%s{device=\"%d\",%s} %llu\n", name, dev, common, v);
}

struct sites { struct gmg_live_site *v; size_t n, cap; uint64_t *live; uint64_t dropped; };

/* Out of memory for the sites: said once per process; each file says how
 * many it left out (gpumem_sites_dropped), as a report says it is
 * incomplete, since the ten it ranks may then not be the ten biggest. */
static void sites_dropped_once(void)
{
    static int said;
    if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
        gmg_error("out of memory for the metrics file's call sites: some are left out of gpumem_site_bytes, which "
                  "may then miss bigger ones (gpumem_sites_dropped says how many, at each write)");
}

static void site_add(uint32_t stack, int device, int family, uint64_t bytes, uint64_t count, void *arg)
{
    struct sites *all = arg;
    if (gmg_family_is_range(family) || family == GMG_FAM_NVTX_REGION) /* a region is inside a segment counted here */
        return;
    if (device >= 0 && device < GMG_MAX_DEVICES)
        all->live[device] += count;
    if (all->n == all->cap) {
        size_t cap = all->cap ? all->cap * 2 : 64;
        struct gmg_live_site *v = realloc(all->v, cap * sizeof *v);
        if (!v) { /* its count is in `live` still; the site is not ranked */
            all->dropped++;
            return;
        }
        all->v = v;
        all->cap = cap;
    }
    all->v[all->n++] = (struct gmg_live_site){ stack, device, bytes, count };
}

size_t gmg_live_sites_top(struct gmg_live_site *top, size_t max, uint64_t *live, uint64_t *dropped)
{
    struct sites all = { .live = live };
    gmg_track_live_each(site_add, &all);
    *dropped = all.dropped;
    if (!all.v)
        return 0;
    qsort(all.v, all.n, sizeof *all.v, by_stack);
    size_t k = 0; /* one site per (stack, device), whatever the families */
    for (size_t i = 0; i < all.n; i++) {
        if (k && all.v[k - 1].stack == all.v[i].stack && all.v[k - 1].device == all.v[i].device) {
            all.v[k - 1].bytes += all.v[i].bytes;
            all.v[k - 1].count += all.v[i].count;
            continue;
        }
        all.v[k++] = all.v[i];
    }
    qsort(all.v, k, sizeof *all.v, by_bytes);
    if (k > max)
        k = max;
    memcpy(top, all.v, k * sizeof *top);
    free(all.v);
    return k;
}

static void build(struct gmg_buf *b, gmg_site_namer name_site)
{
    /* the whole path, however deep (base/exe.h), so that the label is the
     * program's file name and not a cut-off piece of a directory's; that
     * name (at most NAME_MAX bytes) fits its label escaped (3 bytes a byte) */
    const char *exe = gmg_exe_path();
    char common[3 * NAME_MAX + 3 * HOST_NAME_MAX + 128];
    const char *base = strrchr(exe, '/');
    char lab[3 * NAME_MAX + 1], hlab[3 * HOST_NAME_MAX + 1];
    /* pid alone names no process on a node of containers: every pod's
     * first process is pid 1 (node_exporter refuses two series of one name
     * and labels). The host name (a pod's or container's own name there)
     * and the pid namespace (apart even where pods share the node's host
     * name) make the series this process's own. */
    char host[HOST_NAME_MAX + 1] = "";
    if (gethostname(host, sizeof host) != 0)
        host[0] = '\0';
    host[HOST_NAME_MAX] = '\0';
    struct stat ns;
    unsigned long long pidns = stat("/proc/self/ns/pid", &ns) == 0 ? (unsigned long long)ns.st_ino : 0;
    snprintf(common, sizeof common, "pid=\"%d\",exe=\"%s\",host=\"%s\",pidns=\"%llu\"", (int)getpid(),
             label(lab, sizeof lab, base ? base + 1 : exe), label(hlab, sizeof hlab, host), pidns);
    int ndev = gmg_quota_devices_seen();

    static const struct { const char *name, *type, *help; int what; } m[] = {
        { "gpumem_used_bytes", "gauge", "Device memory this process holds now: its allocations, as the quota counts them.", 0 },
        { "gpumem_limit_bytes", "gauge", "The quota of the device (GPUMEM_LIMIT); 0 when there is none.", 1 },
        { "gpumem_peak_bytes", "gauge", "The most device memory counted at once since the process started.", 2 },
        { "gpumem_refused_allocations_total", "counter", "Allocations the quota refused (or allowed over it, under warn).", 3 },
        { "gpumem_allocations_total", "counter", "Allocations made through the guard.", 4 },
        { "gpumem_frees_total", "counter", "Frees of allocations the guard tracked.", 5 },
        { "gpumem_driver_oom_total", "counter", "Allocations the driver itself refused with CUDA_ERROR_OUT_OF_MEMORY.", 6 },
    };
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) {
        metric(b, m[i].name, m[i].type, m[i].help);
        for (int d = 0; d < ndev; d++) {
            uint64_t v = m[i].what == 0 ? gmg_peak_in_use(d) : m[i].what == 1 ? gmg_quota_limit(d)
                       : m[i].what == 2 ? gmg_peak_run(d) : m[i].what == 3 ? gmg_quota_refused(d)
                       : m[i].what == 4 ? gmg_quota_allocs(d) : m[i].what == 5 ? gmg_quota_frees(d)
                       : gmg_quota_driver_oom(d);
            series(b, m[i].name, d, common, v);
        }
    }
    metric(b, "gpumem_host_driver_oom_total", "counter",
           "Pinned host memory allocations the driver itself refused with CUDA_ERROR_OUT_OF_MEMORY (no device's).");
    gmg_buf_printf(b, "gpumem_host_driver_oom_total{%s} %llu\n", common, (unsigned long long)gmg_quota_host_driver_oom());
    struct gmg_live_site top[SITES];
    uint64_t live[GMG_MAX_DEVICES] = { 0 }, dropped;
    size_t k = gmg_live_sites_top(top, SITES, live, &dropped);
    if (dropped)
        sites_dropped_once();
    metric(b, "gpumem_live_allocations", "gauge",
           "Live allocations (as the report counts them: not reserved ranges or mappings).");
    for (int d = 0; d < ndev; d++)
        series(b, "gpumem_live_allocations", d, common, live[d]);
    struct gmg_track_lost lost;
    gmg_track_lost(&lost);
    metric(b, "gpumem_untracked_allocations_total", "counter",
           "Allocations the guard could not track (it ran out of memory): in no report or series above; what they "
           "counted against the quota stays counted.");
    gmg_buf_printf(b, "gpumem_untracked_allocations_total{%s} %llu\n", common,
                   (unsigned long long)lost.untracked_allocs);

    if (gmg_quota_pooled()) { /* GPUMEM_GROUP: the same numbers in every member's file */
        gmg_quota_refresh();
        char g[2 * GMG_GROUP_NAME_MAX + 2], gcommon[sizeof common + sizeof g + 16];
        snprintf(gcommon, sizeof gcommon, "group=\"%s\",%s", label(g, sizeof g, gmg_cfg.group), common);
        static const struct { const char *name, *help; int what; } gm[] = {
            { "gpumem_group_used_bytes", "Device memory counted against the group's budget, all members (GPUMEM_GROUP).", 0 },
            { "gpumem_group_limit_bytes", "The group's budget per device (GPUMEM_LIMIT of GPUMEM_GROUP); 0 when none.", 1 },
            { "gpumem_group_peak_bytes", "The most device memory the group held at once since it started clean.", 2 },
        };
        int gdev = gmg_quota_devices_with_group(); /* another member's devices too */
        for (size_t i = 0; i < sizeof gm / sizeof gm[0]; i++) {
            metric(b, gm[i].name, "gauge", gm[i].help);
            for (int d = 0; d < gdev; d++)
                series(b, gm[i].name, d, gcommon, gm[i].what == 0 ? gmg_quota_charged(d)
                                                  : gm[i].what == 1 ? gmg_quota_limit(d) : gmg_quota_group_peak(d));
        }
        metric(b, "gpumem_group_members", "gauge", "Processes of the group now (GPUMEM_GROUP).");
        gmg_buf_printf(b, "gpumem_group_members{%s} %u\n", gcommon, gmg_quota_group_members());
    }

    metric(b, "gpumem_site_bytes", "gauge", "Live bytes of the ten biggest call sites (rank 1 is the biggest).");
    uint32_t stacks[SITES];
    char names[SITES][256];
    for (size_t i = 0; i < k; i++) {
        stacks[i] = top[i].stack;
        names[i][0] = 0;
    }
    if (name_site && k)
        name_site(stacks, k, names[0], sizeof names[0]);
    for (size_t i = 0; i < k; i++) {
        char l[2 * sizeof names[i]];
        gmg_buf_printf(b, "gpumem_site_bytes{device=\"%d\",%s,rank=\"%zu\",site=\"%s\"} %llu\n", top[i].device, common,
                       i + 1, label(l, sizeof l, *names[i] ? names[i] : "unknown"), (unsigned long long)top[i].bytes);
    }
    /* last, so that the series above stay as they were */
    metric(b, "gpumem_sites_dropped", "gauge",
           "Live call-site totals left out of gpumem_site_bytes at this write (the guard ran out of memory): when not "
           "0, the sites ranked may not be the ten biggest.");
    gmg_buf_printf(b, "gpumem_sites_dropped{%s} %llu\n", common, (unsigned long long)dropped);
}

/* The temporary file beside `path` (same directory: rename is atomic only
 * there), named so that it always fits NAME_MAX whatever the file's own
 * name (a legal 255-byte name leaves no room for a suffix), starts with a
 * dot and does not end in .prom, so that node_exporter's textfile
 * collector never reads it half-written. */
static void temp_name(char *out, size_t n, const char *path)
{
    static unsigned count;
    const char *slash = strrchr(path, '/');
    int dirlen = slash ? (int)(slash - path + 1) : 0;
    snprintf(out, n, "%.*s.gpumem-metrics.%d.%u.tmp", dirlen, path, (int)getpid(),
             __atomic_fetch_add(&count, 1, __ATOMIC_RELAXED));
}

int gmg_metrics_write(const char *path, gmg_site_namer name_site)
{
    struct gmg_buf b = { 0 };
    build(&b, name_site);
    if (b.failed) {
        gmg_buf_free(&b);
        errno = ENOMEM;
        return -1;
    }
    /* a directory, device, FIFO, socket or symbolic link there is never
     * replaced (rename would: /dev/stdout, a link to /dev/null) */
    struct stat st;
    if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        gmg_buf_free(&b);
        errno = S_ISDIR(st.st_mode) ? EISDIR : S_ISLNK(st.st_mode) ? ELOOP : EEXIST;
        return -1;
    }
    char tmp[PATH_MAX + 64];
    int fd = -1;
    /* a stale temporary of this pid's name (left by a process killed
     * mid-write, whose pid this one has again: pods reuse low pids) is
     * stepped over; anything else is final */
    for (int tries = 0; fd < 0 && tries < 100; tries++) {
        temp_name(tmp, sizeof tmp, path);
        fd = gmg_open_high(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    /* readable by node_exporter, which runs as another user: 0644 whatever
     * the umask (077 would make it 0600) */
    int rc = fd < 0 || fchmod(fd, 0644) != 0 ? -1 : gmg_write_all(fd, b.p, b.len);
    int saved = errno;
    if (fd >= 0 && close(fd) != 0 && rc == 0) {
        rc = -1;
        saved = errno;
    }
    if (rc == 0 && rename(tmp, path) != 0) {
        rc = -1;
        saved = errno;
    }
    if (rc != 0 && fd >= 0)
        unlink(tmp);
    gmg_buf_free(&b);
    errno = saved;
    return rc;
}

int gmg_metrics_check_path(const char *setting, const char *path)
{
    char dirbuf[PATH_MAX + 64];
    struct stat st;
    snprintf(dirbuf, sizeof dirbuf, "%s", path);
    if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        /* the file is replaced by rename: never a directory, a device, a
         * FIFO or a symbolic link (/dev/stdout is one) */
        gmg_error("GPUMEM_METRICS='%s': %s is %s; it is left as it is, and each rewrite tries again", setting, path,
                  S_ISDIR(st.st_mode)   ? "a directory, not a file"
                  : S_ISLNK(st.st_mode) ? "a symbolic link, which is neither followed nor replaced"
                                        : "a device, FIFO or socket, not a file");
        return -1;
    }
    const char *dir = gmg_path_dir(dirbuf);
    if (stat(dir, &st) != 0) {
        gmg_error("GPUMEM_METRICS='%s': directory %s %s (%s); each rewrite tries again", setting, dir,
                  errno == ENOENT || errno == ENOTDIR ? "does not exist" : "cannot be looked at", strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        gmg_error("GPUMEM_METRICS='%s': %s is not a directory; each rewrite tries again", setting, dir);
        return -1;
    }
    if (access(dir, W_OK | X_OK) != 0) {
        gmg_error("GPUMEM_METRICS='%s': directory %s is not writable (%s); each rewrite tries again", setting, dir,
                  strerror(errno));
        return -1;
    }
    return 0;
}
