/*
 * test_metrics.c - cluster/metrics.c on its own: the file's call sites when
 * memory runs out while they are gathered. The live totals are stubbed (100
 * call sites on device 0, growing: the biggest come last, and a reserved
 * range, which is no site), and realloc fails here while they are walked
 * (linked with -Wl,--wrap=realloc), so that only the first 64 sites can be
 * kept. The file must say how many it left out (gpumem_sites_dropped), keep
 * counting every live allocation, and, once memory is back, rank the
 * biggest again and say 0. Writes METRICS_FILE.1 and .2 for promtool (the
 * caller checks that the guard said it once on stderr). Prints
 * "metrics: N checks, M failed"; exits 1 on a failed check.
 */
#define _GNU_SOURCE
#include "cluster/metrics.h"

#include "core/quota.h"
#include "core/record.h"
#include "core/track.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* metrics.c's (and buf.c's) realloc, with --wrap=realloc: fails while
 * no_realloc is set */
static int no_realloc;
void *__real_realloc(void *p, size_t n);
void *__wrap_realloc(void *p, size_t n);
void *__wrap_realloc(void *p, size_t n)
{
    if (no_realloc) {
        errno = ENOMEM;
        return NULL;
    }
    return __real_realloc(p, n);
}

/* core/track.c, stubbed: 100 sites, the kth of k * 4096 bytes in k
 * allocations; site 1 also holds a reserved range; realloc fails from the
 * 65th site on while fail_walk is set */
#define NSITES 100
static int fail_walk;
void gmg_track_live_each(void (*fn)(uint32_t stack, int device, int family, uint64_t bytes, uint64_t count,
                                    void *arg),
                         void *arg)
{
    fn(1, 0, GMG_FAM_VA, 1ull << 30, 1, arg);
    for (uint32_t k = 1; k <= NSITES; k++) {
        no_realloc = fail_walk && k > 64;
        fn(k, 0, GMG_FAM_LINEAR, (uint64_t)k * 4096, k, arg);
    }
    no_realloc = 0;
}

void gmg_track_lost(struct gmg_track_lost *out)
{
    memset(out, 0, sizeof *out);
}

/* core/quota.c, stubbed: one device, no group */
int gmg_quota_devices_seen(void) { return 1; }
uint64_t gmg_quota_used(int dev) { (void)dev; return 7; }
uint64_t gmg_quota_limit(int dev) { (void)dev; return 0; }
uint64_t gmg_peak_run(int dev) { (void)dev; return 7; }
uint64_t gmg_peak_in_use(int dev) { (void)dev; return 7; }
uint64_t gmg_quota_refused(int dev) { (void)dev; return 0; }
uint64_t gmg_quota_driver_oom(int dev) { (void)dev; return 0; }
uint64_t gmg_quota_host_driver_oom(void) { return 0; }
uint64_t gmg_quota_allocs(int dev) { (void)dev; return 5050; }
uint64_t gmg_quota_frees(int dev) { (void)dev; return 0; }
int gmg_quota_pooled(void) { return 0; }
void gmg_quota_refresh(void) {}
uint64_t gmg_quota_charged(int dev) { (void)dev; return 0; }
uint64_t gmg_quota_group_peak(int dev) { (void)dev; return 0; }
int gmg_quota_devices_with_group(void) { return gmg_quota_devices_seen(); }
unsigned gmg_quota_group_members(void) { return 0; }

static void namer(const uint32_t *stacks, size_t n, char *names, size_t each)
{
    for (size_t k = 0; k < n; k++)
        snprintf(names + k * each, each, "site%u", (unsigned)stacks[k]);
}

static int checks, failed;
#define CHECK(cond, what) do { checks++; if (!(cond)) { failed++; printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, what); } } while (0)

static int starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Does the file at path hold a line that starts with `line`? */
static int has_line(const char *path, const char *line)
{
    FILE *f = fopen(path, "r");
    char buf[1024];
    int found = 0;
    while (f && !found && fgets(buf, sizeof buf, f))
        found = starts(buf, line);
    if (f)
        fclose(f);
    return found;
}

int main(int argc, char **argv)
{
    const char *base = argc > 1 ? argv[1] : "test_metrics.prom";
    char p1[4096], p2[4096];
    snprintf(p1, sizeof p1, "%s.1", base);
    snprintf(p2, sizeof p2, "%s.2", base);

    /* out of memory for sites 65 to 100: they are left out, and said */
    fail_walk = 1;
    CHECK(gmg_metrics_write(p1, namer) == 0, "the file is written");
    CHECK(gmg_metrics_write(p1, namer) == 0, "written again (the guard says it once)");
    CHECK(has_line(p1, "# TYPE gpumem_sites_dropped gauge"), "gpumem_sites_dropped is a gauge");
    CHECK(has_line(p1, "gpumem_sites_dropped{pid="), "gpumem_sites_dropped is written");
    char want[256];
    snprintf(want, sizeof want, "gpumem_sites_dropped{pid=\"%d\",", (int)getpid());
    CHECK(has_line(p1, want), "labelled pid and exe");
    FILE *f = fopen(p1, "r");
    char buf[1024];
    unsigned long long dropped = ~0ull, live = 0;
    int top_is_kept = 0;
    while (f && fgets(buf, sizeof buf, f)) {
        const char *sp = strrchr(buf, ' ');
        if (starts(buf, "gpumem_sites_dropped{") && sp)
            dropped = strtoull(sp + 1, NULL, 10);
        if (starts(buf, "gpumem_live_allocations{device=\"0\"") && sp)
            live = strtoull(sp + 1, NULL, 10);
        if (starts(buf, "gpumem_site_bytes{") && strstr(buf, "rank=\"1\",site=\"site64\"}"))
            top_is_kept = 1;
    }
    if (f)
        fclose(f);
    CHECK(dropped == NSITES - 64, "the 36 sites left out are counted");
    CHECK(live == NSITES * (NSITES + 1) / 2, "every live allocation is still counted (5050)");
    CHECK(top_is_kept, "the sites kept are ranked (rank 1: site64, the biggest kept)");

    /* memory back: the biggest ranked first, nothing left out */
    fail_walk = 0;
    CHECK(gmg_metrics_write(p2, namer) == 0, "written with memory");
    f = fopen(p2, "r");
    dropped = ~0ull;
    int top_is_biggest = 0;
    while (f && fgets(buf, sizeof buf, f)) {
        const char *sp = strrchr(buf, ' ');
        if (starts(buf, "gpumem_sites_dropped{") && sp)
            dropped = strtoull(sp + 1, NULL, 10);
        if (starts(buf, "gpumem_site_bytes{") && strstr(buf, "rank=\"1\",site=\"site100\"}"))
            top_is_biggest = 1;
    }
    if (f)
        fclose(f);
    CHECK(dropped == 0, "gpumem_sites_dropped is 0 when nothing was left out");
    CHECK(top_is_biggest, "rank 1 is the biggest site (site100)");

    printf("metrics: %d checks, %d failed\n", checks, failed);
    return failed ? 1 : 0;
}
