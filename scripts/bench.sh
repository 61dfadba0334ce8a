#!/usr/bin/env bash
# bench.sh BUILD_DIR - ns per cuMemAlloc+cuMemFree pair against the simulated
# driver, unguarded vs guarded (stacks off, 32 frames), at several live
# counts and thread counts; median of 5 runs each. Prints a Markdown table
# for docs/benchmarks.md.
set -eu
B=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
cc -std=gnu11 -O2 -g -I"${CUDA_HOME:-/usr/local/cuda}/include" -o "$B/bench" tests/bench/bench.c -L"$B/sim" -l:libcuda.so.1 -lpthread
export LD_LIBRARY_PATH="$ROOT/$B/sim" GPUMEM_SIGNAL=none GPUMEM_REPORT=/dev/null
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
run() { for i in 1 2 3 4 5; do env "$@" "$B/bench" "$PAIRS" "$LIVE" "$THREADS"; done | median; }
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(date -u +%F)"
echo
echo "| live allocations | threads | unguarded ns/pair | guarded, stacks off | guarded, 32 frames | added (off) | added (32) |"
echo "|---:|---:|---:|---:|---:|---:|---:|"
for cfg in "0 1" "100000 1" "1000000 1" "0 2"; do
    set -- $cfg; LIVE=$1; THREADS=$2; PAIRS=200000
    base=$(run GPUSIM_MEM=64G)
    off=$(run GPUSIM_MEM=64G LD_PRELOAD="$ROOT/$B/libgpumemguard.so" GPUMEM_STACK_DEPTH=0)
    full=$(run GPUSIM_MEM=64G LD_PRELOAD="$ROOT/$B/libgpumemguard.so" GPUMEM_STACK_DEPTH=32)
    printf "| %s | %s | %s | %s | %s | %.0f | %.0f |\n" "$LIVE" "$THREADS" "$base" "$off" "$full" \
        "$(echo "$off - $base" | bc)" "$(echo "$full - $base" | bc)"
done

# Python frames (issue 10): pairs made through ctypes from 10 and 50 Python
# frames; "capture" is guarded with GPUMEM_PYTHON=auto minus =off (both with
# stacks deep enough to keep every frame).
PY=$(command -v python3 || true)
if [ -n "$PY" ]; then
    echo
    echo "Python $("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])'), through ctypes, best of 5 rounds of 100,000 pairs:"
    echo
    echo "| Python frames | unguarded ns/pair | guarded, GPUMEM_PYTHON=off | guarded, auto | capture (auto - off) |"
    echo "|---:|---:|---:|---:|---:|"
    for d in 10 50; do
        base=$("$PY" tests/bench/pybench.py $d 100000)
        off=$(env LD_PRELOAD="$ROOT/$B/libgpumemguard.so" GPUMEM_STACK_DEPTH=64 GPUMEM_PYTHON=off "$PY" tests/bench/pybench.py $d 100000)
        auto=$(env LD_PRELOAD="$ROOT/$B/libgpumemguard.so" GPUMEM_STACK_DEPTH=64 GPUMEM_PYTHON=auto "$PY" tests/bench/pybench.py $d 100000)
        printf "| %s | %s | %s | %s | %.0f |\n" "$d" "$base" "$off" "$auto" "$(echo "$auto - $off" | bc)"
    done
fi
