/*
 * test_refusal_sites.c - the allocation path's set of call sites already
 * explained (hooks/refusal.c), with the report side stubbed: the upcall
 * answers "dropped" (too many at once) or "explained" as the test says.
 *   - a site whose refusal was dropped is explained at its next refusal;
 *   - sites dropped again and again never fill the set: after 20,000
 *     drops at 2,000 sites, each of those sites and a new one is still
 *     explained at its next refusal (a forgotten site's slot is taken
 *     again), for the quota's refusals and the driver's out of memory;
 *   - a site explained once is not handed up again;
 *   - the set's own cap stays: past its 4,096 sites it stays quiet.
 * Prints "refusal sites: N checks, M failed"; exits 1 on a failed check.
 */
#include "hooks/refusal.h"

#include "base/config.h"
#include "core/upcalls.h"

#include <stdarg.h>
#include <stdio.h>

static int checks, failed;
#define CHECK(cond, ...) do { checks++; if (!(cond)) { failed++; printf("FAIL %s:%d: ", __FILE__, __LINE__); \
    printf(__VA_ARGS__); printf("\n"); } } while (0)

/* ---- the stubbed world below the hooks ---- */
struct gmg_config gmg_cfg;
int gmg_log_level;
void gmg_log(int level, const char *fmt, ...) { (void)level; (void)fmt; }
const char *gmg_family_name(int family) { (void)family; return "cuMemAlloc"; }
char *gmg_fmt_size(char *out, size_t n, unsigned long long bytes) { snprintf(out, n, "%llu", bytes); return out; }
uint64_t gmg_peak_tracked(int dev) { (void)dev; return 0; }
uint64_t gmg_quota_charged(int dev) { (void)dev; return 0; }
uint64_t gmg_quota_limit(int dev) { (void)dev; return 0; }
uint64_t gmg_quota_used(int dev) { (void)dev; return 0; }
int gmg_quota_counting(void) { return 1; }
uint64_t gmg_peak_in_use(int dev) { (void)dev; return 0; }
void gmg_quota_count_driver_oom(int dev) { (void)dev; }
void gmg_quota_count_host_driver_oom(void) {}
void gmg_quota_count_refusal(int dev) { (void)dev; }

static int drop;         /* the upcall's answer: 0 dropped, 1 explained */
static unsigned handed;  /* refusals handed up */
int gmg_upcall_refused(const struct gmg_refusal *r)
{
    (void)r;
    handed++;
    return !drop;
}

static unsigned marked; /* refusals handed up to be marked only */
void gmg_upcall_marked(const struct gmg_refusal *r)
{
    (void)r;
    marked++;
}

/* Was a refusal at `stack` handed up to be explained? */
static int handed_up_on(int driver, uint32_t stack, int dev)
{
    struct gmg_op op = { .family = 0, .dev = dev, .stack = stack, .counted = 1 };
    unsigned before = handed;
    if (driver)
        gmg_driver_oom(&op, 1u << 20, 0, 0);
    else
        gmg_refuse(&op, 1u << 20);
    return handed != before;
}

static int handed_up(int driver, uint32_t stack)
{
    return handed_up_on(driver, stack, 0);
}

int main(void)
{
    for (int driver = 0; driver <= 1; driver++) {
        const char *what = driver ? "driver's out of memory" : "quota's refusal";
        uint32_t base = driver ? 100000 : 200000;
        drop = 1;
        CHECK(handed_up(driver, base + 1), "%s: a new site is handed up", what);
        drop = 0;
        CHECK(handed_up(driver, base + 1), "%s: a dropped site is handed up again", what);
        CHECK(!handed_up(driver, base + 1), "%s: an explained site is not handed up again", what);
        /* the same site on another device: marked on that device's timeline, no second message */
        unsigned m = marked;
        CHECK(!handed_up_on(driver, base + 1, 1) && marked == m + 1,
              "%s: an explained site refused on device 1 is marked there, not explained again", what);
        CHECK(!handed_up_on(driver, base + 1, 1) && !handed_up(driver, base + 1) && marked == m + 1,
              "%s: and marked there once", what);

        /* 2,000 sites, each dropped 10 times over */
        drop = 1;
        int lost = 0;
        for (int round = 0; round < 10; round++)
            for (uint32_t s = 0; s < 2000; s++)
                lost += !handed_up(driver, base + 10 + s);
        CHECK(lost == 0, "%s: %d dropped refusals were not handed up again", what, lost);
        drop = 0;
        int quiet = 0;
        for (uint32_t s = 0; s < 2000; s++)
            quiet += !handed_up(driver, base + 10 + s);
        CHECK(quiet == 0, "%s: after 20,000 drops, %d of 2,000 sites were not explained", what, quiet);
        CHECK(handed_up(driver, base + 5000), "%s: after 20,000 drops, a new site is explained", what);

        /* the cap: 4,096 sites in all, then quiet */
        int more = 0;
        for (uint32_t s = 0; s < 3000; s++)
            more += handed_up(driver, base + 6000 + s);
        CHECK(more == 4096 - 2002, "%s: %d more sites explained up to the cap, %d expected", what, more, 4096 - 2002);
        CHECK(!handed_up(driver, base + 9500), "%s: past the cap, quiet", what);
    }
    printf("refusal sites: %d checks, %d failed\n", checks, failed);
    return failed != 0;
}
