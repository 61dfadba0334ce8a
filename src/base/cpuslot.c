/* cpuslot.c - see cpuslot.h. */
#define _GNU_SOURCE /* sched_getcpu, sched_getaffinity */
#include "base/cpuslot.h"

#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

unsigned gmg_cpu_slots = 1;
__thread unsigned gmg_cpu_slot_tl __attribute__((tls_model("initial-exec")));
__thread unsigned char gmg_cpu_slot_age __attribute__((tls_model("initial-exec")));

/* GMG_CPU_SLOTS=N (tests): N slots, and every use takes another slot (a
 * stride through them) instead of the CPU's, so that a free lands on
 * another slot than its allocation, as on a machine of N CPUs whose
 * threads move often. */
static unsigned turns;

__attribute__((constructor)) static void cpu_slots_init(void)
{
    cpu_set_t set;
    long n = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : sysconf(_SC_NPROCESSORS_ONLN);
    const char *t = getenv("GMG_CPU_SLOTS");
    if (t && t[0] >= '1' && t[0] <= '9') {
        n = strtol(t, NULL, 10);
        turns = 1;
    }
    gmg_cpu_slots = n < 1 ? 1 : n > GMG_CPU_SLOTS_MAX ? GMG_CPU_SLOTS_MAX : (unsigned)n;
}

void gmg_cpu_slot_find(void)
{
    static unsigned next;
    int cpu = turns ? (int)(__atomic_fetch_add(&next, 1, __ATOMIC_RELAXED) * 40503u % gmg_cpu_slots) : sched_getcpu();
    gmg_cpu_slot_tl = cpu > 0 ? (unsigned)cpu % gmg_cpu_slots : 0;
    gmg_cpu_slot_age = turns ? 0 : 63;
}
