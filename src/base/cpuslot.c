/* cpuslot.c - see cpuslot.h. */
#define _GNU_SOURCE /* sched_getcpu, sched_getaffinity */
#include "base/cpuslot.h"

#include <sched.h>
#include <unistd.h>

unsigned gmg_cpu_slots = 1;
__thread unsigned gmg_cpu_slot_tl __attribute__((tls_model("initial-exec")));
__thread unsigned char gmg_cpu_slot_age __attribute__((tls_model("initial-exec")));

__attribute__((constructor)) static void cpu_slots_init(void)
{
    cpu_set_t set;
    long n = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : sysconf(_SC_NPROCESSORS_ONLN);
    gmg_cpu_slots = n < 1 ? 1 : n > GMG_CPU_SLOTS_MAX ? GMG_CPU_SLOTS_MAX : (unsigned)n;
}

void gmg_cpu_slot_find(void)
{
    int cpu = sched_getcpu();
    gmg_cpu_slot_tl = cpu > 0 ? (unsigned)cpu % gmg_cpu_slots : 0;
    gmg_cpu_slot_age = 63;
}
