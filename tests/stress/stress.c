/*
 * stress.c - the one program of make stress (scripts/stress.sh builds it as
 * tests/integration/trust.c, which includes this file, and runs it as
 * `trust MODE [N]`): its storms, the sweeps of the guard's own out of memory,
 * and cases of make test run for longer. Each mode is the code of the file
 * named, included here; built alone, each of those is the program of its
 * own test.
 *
 *   storm N, forkstorm N                            tests/stress/storms.c
 *   nomem_fork N, nomem_maps N, nomem_dumps N,
 *   nomem_gpa N, nomem_pool N                       tests/oom/sweeps.c
 *   nomem N, nomem_refuse (and the other modes)     tests/oom/untracked.c
 *   double_free N, free_reuse N                     tests/races/frees.c
 *   sigstorm N                                      tests/signals/storm.c
 *   apidumps N (and the other modes)                tests/dumps/dumps.c
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#define TL_NO_MAIN
#include "storms.c"
#include "../oom/sweeps.c"
#include "../oom/untracked.c"
#include "../races/frees.c"
#include "../signals/storm.c"
#include "../dumps/dumps.c"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: trust MODE [ARG...]\n");
        return 2;
    }
    tl_setup(0);
    if (!storms_mode(argc, argv) && !sweeps_mode(argc, argv) && !untracked_mode(argc, argv) && !frees_mode(argc, argv)
        && !signal_storm_mode(argc, argv) && !dumps_mode(argc, argv)) {
        fprintf(stderr, "unknown mode %s\n", argv[1]);
        return 2;
    }
    fflush(stdout);
    return 0;
}
