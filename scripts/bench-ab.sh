#!/usr/bin/env bash
# bench-ab.sh BUILD_DIR A.so B.so [...] - two or more builds of the library
# side by side, taking turns process by process: CPU ns added per
# cuMemAlloc_v2+cuMemFree_v2 pair (through the guard minus the driver alone,
# in the same process: tests/bench/bench.c), 0 live, 1 2 4 8 threads
# (THREADS), stacks off and 32 of 48 frames on one call site, and 32 frames
# with each thread on a call site of its own; the least of PASSES (10)
# processes per figure. For a change's cost on a machine of many cores,
# where `make bench`'s table gives one build only.
set -eu
B=$1; shift
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
[ $# -ge 2 ] || { echo "usage: $0 BUILD_DIR A.so B.so [...]" >&2; exit 2; }
cc -std=gnu11 -O2 -g -fno-omit-frame-pointer -I"${CUDA_HOME:-/usr/local/cuda}/include" -o "$B/bench" tests/bench/bench.c \
   -L"$B/sim" -l:libcuda.so.1 -lpthread -ldl
export LD_LIBRARY_PATH="$ROOT/$B/sim${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" GPUMEM_SIGNAL=none GPUMEM_REPORT=/dev/null \
       GPUSIM_MEM=64G GPUSIM_THREAD_RANGES=1
declare -A best
for pass in $(seq "${PASSES:-10}"); do
    for t in ${THREADS:-1 2 4 8}; do
        for lib in "$@"; do
            for c in off 32 own; do
                d=32 sites=
                [ $c = off ] && d=0
                [ $c = own ] && sites=own
                read -r v _ _ r _ < <(BENCH_SITES=$sites GPUMEM_STACK_DEPTH=$d LD_PRELOAD="$(realpath "$lib")" \
                                      "$B/bench" pairs 100000 0 "$t" 48)
                a=$(awk -v a="$v" -v b="$r" 'BEGIN { printf "%.1f", a - b }')
                k="$t $c $lib"
                if [ -z "${best[$k]:-}" ] || awk -v a="$a" -v b="${best[$k]}" 'BEGIN { exit !(a < b) }'; then best[$k]=$a; fi
            done
        done
    done
done
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(uname -sr), $(date -u +%F); load average $(cut -d' ' -f1-3 /proc/loadavg); ${PASSES:-10} passes"
echo
printf '| threads | stacks |'; for lib in "$@"; do printf ' %s |' "$(basename "$lib")"; done; echo
printf '|---:|---|'; for lib in "$@"; do printf -- '---:|'; done; echo
for t in ${THREADS:-1 2 4 8}; do
    for c in off 32 own; do
        case $c in off) what="off, one call site" ;; 32) what="32 of 48 frames, one call site" ;; own) what="32 of 48 frames, a call site per thread" ;; esac
        printf '| %s | %s |' "$t" "$what"; for lib in "$@"; do printf ' %s |' "${best[$t $c $lib]}"; done; echo
    done
done
