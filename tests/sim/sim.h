/*
 * sim.h - internals of the simulated CUDA driver (tests/sim/libcuda.so.1).
 *
 * The simulator is a test double for the real libcuda.so.1: it has the same
 * soname, exports the legacy, _v2 and _ptsz entry points, answers
 * cuGetProcAddress(_v2) with version thresholds and flags, keeps contexts
 * (primary and created) and a finite device memory per device with a real
 * first-fit allocator, so out-of-memory and fragmentation really happen.
 *
 * Environment:
 *   GPUSIM_DEVICES   number of devices (default 1, at most SIM_MAX_DEVICES)
 *   GPUSIM_MEM       device memory in bytes, K/M/G suffixes; "a,b" per device
 *                    (default 8G)
 *   GPUSIM_STATS     path: statistics written at exit ("key value" lines)
 *   GPUSIM_THREAD_RANGES=1  cuMemAlloc_v2/cuMemFree_v2 serve each thread from
 *                    an address range of its own, under that range's lock
 *                    (no lock shared by all threads; nothing else sees those
 *                    allocations): the benchmark's pair rows (sim.c)
 *   GPUSIM_TRACE_LOOKUPS  name on stderr each cuGetProcAddress lookup that
 *                    finds only a NOT_SUPPORTED stub or nothing (what a new
 *                    client still lacks)
 *
 * Beyond memory, it answers what real clients (cuda-bindings, numba-cuda,
 * cuda.core, the CUDA runtime) ask at start-up: device attributes of an
 * H100 (compute capability 9.0), UUIDs, PCI bus ids, error names and texts,
 * streams with priorities, events, memory pools with their attributes,
 * pointer attributes. Device memory has bytes behind it (allocated on first
 * access), so copies and sets really move data; all work is done when it is
 * issued (streams are always idle). Device code is not simulated: loading a
 * module or launching a kernel is CUDA_ERROR_NOT_SUPPORTED.
 */
#ifndef GPUSIM_SIM_H
#define GPUSIM_SIM_H

#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <stdint.h>

#define SIM_MAX_DEVICES 8
#define SIM_GRANULARITY 512ull             /* linear allocation rounding   */
#define SIM_VMM_GRANULARITY (2ull << 20)   /* cuMemCreate granularity      */
#define SIM_DRIVER_VERSION 13000

#define SIM_EXPORT __attribute__((visibility("default")))

/* Statistics a test reads through simGetStats() or GPUSIM_STATS. */
struct sim_stats {
    uint64_t total;        /* device memory                                */
    uint64_t live;         /* bytes live now (as counted by the quota)     */
    uint64_t peak;         /* highest value 'live' ever had                */
    uint64_t live_allocs;  /* allocations live now                         */
    uint64_t allocs;       /* allocations ever made                        */
    uint64_t frees;        /* frees ever made                              */
    uint64_t oom;          /* allocations refused for lack of memory       */
};

/* A device's statistics: 0, or -1 for a device that is not. */
SIM_EXPORT int simGetStats(int dev, struct sim_stats *out);

/* Lookup table used by cuGetProcAddress (sim_procaddr.c). */
struct sim_proc {
    const char *name;   /* the name a caller asks for, e.g. "cuMemAlloc"   */
    int version;        /* lowest cudaVersion this ABI answers             */
    int ptsz;           /* 1: per-thread default stream variant            */
    void *fn;
};

extern const struct sim_proc sim_proc_table[];
extern const unsigned sim_proc_count;
extern const struct sim_proc sim_stub_table[]; /* generated: other names */
extern const unsigned sim_stub_count;

#endif
