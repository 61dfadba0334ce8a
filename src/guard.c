/*
 * guard.c - life cycle (see guard.h) and the public API (gpumemguard.h).
 *
 * Start-up reads the configuration and stops the process on a bad value.
 * The exit report runs from the library destructor, after the program's
 * atexit handlers and the CUDA runtime's own teardown: what that teardown
 * reclaimed is still reported, as reclaimed.
 */
#define _GNU_SOURCE
#include "guard.h"

#include "../include/gpumemguard.h"
#include "config.h"
#include "dumper.h"
#include "hooks.h"
#include "log.h"
#include "quota.h"
#include "report.h"
#include "stacks.h"
#include "track.h"

#include <pthread.h>
#include <unistd.h>

static int touched;

void gmg_guard_touched(void)
{
    if (!__atomic_exchange_n(&touched, 1, __ATOMIC_ACQ_REL))
        gmg_dumper_start();
}

static void prepare(void)
{
    gmg_stacks_atfork_prepare();
    gmg_track_atfork_prepare();
}

static void parent(void)
{
    gmg_track_atfork_parent();
    gmg_stacks_atfork_release();
}

static void child(void)
{
    gmg_track_atfork_child();
    gmg_stacks_atfork_release();
    gmg_quota_reset();
    gmg_dumper_atfork_child();
}

__attribute__((constructor)) static void gmg_start(void)
{
    char err[2048];
    if (gmg_config_load(err, sizeof err) < 0) {
        gmg_error("%s", err);
        _exit(2);
    }
    gmg_log_level = gmg_cfg.log_level;
    gmg_stacks_set_depth(gmg_cfg.stack_depth);
    pthread_atfork(prepare, parent, child);
    gmg_debug("loaded: %d entry points wrapped", H_COUNT);
}

__attribute__((destructor)) static void gmg_stop(void)
{
    if (__atomic_load_n(&touched, __ATOMIC_ACQUIRE))
        gmg_report_now(GMG_TRIGGER_EXIT);
}

GMG_EXPORT int gpumemguard_dump(void)
{
    gmg_report_now(GMG_TRIGGER_API);
    return 0;
}

GMG_EXPORT unsigned long long gpumemguard_live_bytes(int device)
{
    if (device >= 0)
        return gmg_quota_used(device);
    unsigned long long sum = 0;
    for (int d = 0; d < GMG_MAX_DEVICES; d++)
        sum += gmg_quota_used(d);
    return sum;
}

GMG_EXPORT unsigned long long gpumemguard_limit(int device)
{
    return gmg_quota_limit(device);
}
