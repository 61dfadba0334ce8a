/*
 * cpuslot.h - the CPU a thread runs on, as a slot number (base layer).
 *
 * Data that every allocation writes and that many threads would write at
 * once (the quota's credit, a busy call site's live totals) is kept in
 * slots, one per CPU the process may run on (a container's share, not the
 * machine's; at most GMG_CPU_SLOTS_MAX; a CPU numbered past them, or a mask
 * changed later, only shares a slot). A thread uses the slot of the CPU it
 * last found itself on, looked up every 64 uses: any thread may use any
 * slot, so a slot's data changes by atomic operations or under a lock of
 * its own; two threads share one only as they share its CPU, so its line
 * mostly stays there.
 */
#ifndef GMG_BASE_CPUSLOT_H
#define GMG_BASE_CPUSLOT_H

#define GMG_CPU_SLOTS_MAX 256

/* How many slots (1 to GMG_CPU_SLOTS_MAX), fixed at start-up. */
extern unsigned gmg_cpu_slots;

extern __thread unsigned gmg_cpu_slot_tl __attribute__((tls_model("initial-exec")));
extern __thread unsigned char gmg_cpu_slot_age __attribute__((tls_model("initial-exec")));
void gmg_cpu_slot_find(void);

/* The calling thread's slot, below gmg_cpu_slots. */
static inline unsigned gmg_cpu_slot(void)
{
    if (__builtin_expect(gmg_cpu_slot_age-- == 0, 0))
        gmg_cpu_slot_find();
    return gmg_cpu_slot_tl;
}

/* The slot it had last, without looking again. */
static inline unsigned gmg_cpu_slot_last(void) { return gmg_cpu_slot_tl; }

#endif
