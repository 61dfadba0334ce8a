#!/usr/bin/env bash
# bench.sh BUILD_DIR - the guard's costs at scale against the simulated
# driver (tests/bench/bench.c), each measured with and without the guard in
# the same run, printed as one Markdown table for docs/benchmarks.md:
#   - CPU ns added per cuMemAlloc_v2+cuMemFree_v2 pair, by threads (1 2 4 8)
#     and live allocations (0, 100k, 1M; made by the main thread, and for
#     1 thread also by the thread making the pairs), stacks off and 32 frames kept of
#     a 48-frame stack (the benchmark recurses 48 frames before its loop;
#     built with frame pointers, as Ubuntu 24.04 and Fedora build their
#     packages; one more row built without them), against the
#     simulated driver with per-thread ranges (GPUSIM_THREAD_RANGES=1), and
#     with 1 and 2 threads also against its default (one mutex for all);
#     and 8 threads each on a call site of its own, 32 frames;
#   - guard memory per live allocation at 1M live: VmRSS guarded minus
#     unguarded, over 1M, and the same less what the guard holds with
#     nothing live (its libraries, its thread), which no allocation adds;
#   - a report over 1M live allocations through the public API: its time
#     and the most memory it added while written;
#   - the HTML page over 1M live allocations in 100,000 stacks: seconds to
#     write it, its size, its script's time in headless Chromium;
#   - a refusal message at 1M live: from the refused call to the message,
#     the first (it makes the symbolizer) and the next at a new call site.
# Pair costs are CPU time in the least disturbed of 40 rounds of a process,
# the best of REPS processes per configuration, every configuration run
# once per pass, unguarded and guarded in turn: on a shared machine other
# programs only ever add to them. "Added" is a guarded process's rounds
# through the guard minus its rounds, alternating with them, through the
# simulated driver's own names (the driver alone, in the same moments);
# the unguarded process is shown beside them. Other rows are the median of 3.
# BENCH_QUICK=1: fewer pairs and passes.
set -eu
B=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
cc -std=gnu11 -O2 -g -fno-omit-frame-pointer -I"${CUDA_HOME:-/usr/local/cuda}/include" -o "$B/bench" tests/bench/bench.c -L"$B/sim" -l:libcuda.so.1 -lpthread -ldl
cc -std=gnu11 -O2 -g -fomit-frame-pointer -I"${CUDA_HOME:-/usr/local/cuda}/include" -o "$B/bench-nofp" tests/bench/bench.c -L"$B/sim" -l:libcuda.so.1 -lpthread -ldl
DEPTH=48
# The run measures copies of the library and the simulated driver taken now:
# a rebuild while it runs (minutes) cannot change them under it.
SNAP=$(mktemp -d)
trap 'rm -rf "$SNAP"' EXIT
mkdir "$SNAP/sim"
cp "$B/libgpumemguard.so" "$SNAP/libgpumemguard.so"
cp "$B/sim/libcuda.so.1" "$SNAP/sim/libcuda.so.1"
export LD_LIBRARY_PATH="$SNAP/sim${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" GPUMEM_SIGNAL=none GPUMEM_REPORT=/dev/null GPUSIM_MEM=64G
LIB="$SNAP/libgpumemguard.so"
CORES=$(nproc)
if [ -n "${BENCH_QUICK:-}" ]; then REPS=2; PAIRS=40000; else REPS=${BENCH_REPS:-8}; PAIRS=100000; fi

min() { sort -g | head -1; }
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
calc() { awk "BEGIN { printf \"%.${2:-0}f\", $1 }"; }

# Every (threads, live) configuration is run once per pass, unguarded and
# guarded one after the other, and the passes repeat: each configuration's
# best comes from moments spread over the whole run, as every other's does.
declare -A best sleeps raw raw_sleeps line line_sleeps
one() { # KEY ENV...: keep the least CPU ns per pair through the entry points, and that run's sleeps;
        # and apart, the least through the driver's own names in the same processes, and
        # (BENCH_LINE=1) through them with the quota counter's line
    local key=$1; shift
    local v s r rs l ls; read -r v _ s r rs l ls < <(env "$@" "$B/${BIN:-bench}" pairs "$PAIRS" "$live" "$threads" "$DEPTH")
    if [ "$l" != - ] && { [ -z "${line[$key]:-}" ] || awk -v a="$l" -v b="${line[$key]}" 'BEGIN { exit !(a < b) }'; }; then
        line[$key]=$l; line_sleeps[$key]=$ls
    fi
    if [ -z "${best[$key]:-}" ] || awk -v a="$v" -v b="${best[$key]}" 'BEGIN { exit !(a < b) }'; then
        best[$key]=$v; sleeps[$key]=$s
    fi
    if [ -z "${raw[$key]:-}" ] || awk -v a="$r" -v b="${raw[$key]}" 'BEGIN { exit !(a < b) }'; then
        raw[$key]=$r; raw_sleeps[$key]=$rs
    fi
}
# The pair rows run the simulated driver with GPUSIM_THREAD_RANGES=1: each
# thread allocates from an address range of its own, and threads do not meet
# at a lock in the driver (tests/sim/sim.c). The driver's default, one mutex
# for every call, is measured apart (threads 1 and 2, 0 live, keys "s..."):
# its thread rows measure how often threads sleep on that mutex
# (docs/benchmarks.md, fourth and eleventh passes).
for pass in $(seq "$REPS"); do
    for threads in 1 2 4 8; do
        for live in 0 100000 1000000; do
            one "u $threads $live" GPUSIM_MEM=64G GPUSIM_THREAD_RANGES=1
            one "o $threads $live" LD_PRELOAD="$LIB" GPUMEM_STACK_DEPTH=0 BENCH_LINE=1 GPUSIM_THREAD_RANGES=1
            one "f $threads $live" LD_PRELOAD="$LIB" GPUMEM_STACK_DEPTH=32 GPUSIM_THREAD_RANGES=1
        done
    done
    # the live allocations made by the thread that makes the pairs (a
    # program of one thread), where the rows above have the main thread make
    # them (the tables' shards and the device's word are then another
    # thread's first: base/bias.h)
    threads=1
    for live in 100000 1000000; do
        one "ho 1 $live" LD_PRELOAD="$LIB" GPUMEM_STACK_DEPTH=0 GPUSIM_THREAD_RANGES=1 BENCH_LIVE_HERE=1
        one "hf 1 $live" LD_PRELOAD="$LIB" GPUMEM_STACK_DEPTH=32 GPUSIM_THREAD_RANGES=1 BENCH_LIVE_HERE=1
    done
    live=0 threads=1
    BIN=bench-nofp one "nu 1 0" GPUSIM_MEM=64G GPUSIM_THREAD_RANGES=1
    BIN=bench-nofp one "nf 1 0" LD_PRELOAD="$LIB" GPUMEM_STACK_DEPTH=32 GPUSIM_THREAD_RANGES=1
    # two call sites taking turns, one frame size: each walk starts where
    # the last did and differs from it (the walk's memo at its worst)
    one "tu 1 0" GPUSIM_MEM=64G GPUSIM_THREAD_RANGES=1 BENCH_SITES=2
    one "tf 1 0" LD_PRELOAD="$LIB" GPUMEM_STACK_DEPTH=32 GPUSIM_THREAD_RANGES=1 BENCH_SITES=2
    # 8 threads, each on a call site of its own (their totals kept apart)
    threads=8
    one "wu 8 0" GPUSIM_MEM=64G GPUSIM_THREAD_RANGES=1 BENCH_SITES=own
    one "wf 8 0" LD_PRELOAD="$LIB" GPUMEM_STACK_DEPTH=32 GPUSIM_THREAD_RANGES=1 BENCH_SITES=own
    threads=1
    for threads in 1 2; do
        one "su $threads 0" GPUSIM_MEM=64G
        one "so $threads 0" LD_PRELOAD="$LIB" GPUMEM_STACK_DEPTH=0
        one "sf $threads 0" LD_PRELOAD="$LIB" GPUMEM_STACK_DEPTH=32
    done
done

echo "machine: $CORES cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(uname -sr), $(date -u +%F); load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| measure | live | threads | unguarded | driver alone in the guarded runs (off / 32) | guarded, stacks off | guarded, 32 of 48 frames | added, stacks off | added, 32 of 48 frames | target | met |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|"
declare -A one_off one_full
for threads in 1 2 4 8; do
    for live in 0 100000 1000000; do
        # added: through the guard minus the driver alone, each the least of
        # its rounds in the same guarded processes (bench.c, pair_loop)
        set -- "${best[u $threads $live]}" "${best[o $threads $live]}" "${best[f $threads $live]}" \
            "${raw[o $threads $live]}" "${raw[f $threads $live]}"
        add_off=$(calc "$2 - $4"); add_full=$(calc "$3 - $5")
        label="CPU ns per alloc+free pair"
        if [ "$threads" = 1 ]; then
            one_off[$live]=$add_off; one_full[$live]=$add_full
            target="≤ 60 added (off), ≤ 150 (32 of 48 frames)"
            met=$([ "$add_off" -le 60 ] && [ "$add_full" -le 150 ] && echo yes || echo no)
        else
            target="≤ 2 × 1 thread (${one_off[$live]}, ${one_full[$live]})"
            met=$(awk -v a="$add_off" -v b="$add_full" -v x="${one_off[$live]}" -v y="${one_full[$live]}" \
                  'BEGIN { print (a <= 2 * (x > 0 ? x : 0) && b <= 2 * y) ? "yes" : "no" }')
            [ "$threads" -gt "$CORES" ] && label="$label, oversubscribed ($threads threads on $CORES cores)" \
                && met="not measured ($met here)"
        fi
        echo "| $label | $live | $threads | $1 | $4 / $5 | $2 | $3 | $add_off | $add_full | $target | $met |"
    done
done
for live in 100000 1000000; do
    add_off=$(calc "${best[ho 1 $live]} - ${raw[ho 1 $live]}"); add_full=$(calc "${best[hf 1 $live]} - ${raw[hf 1 $live]}")
    echo "| CPU ns per alloc+free pair, the live allocations made by the thread that makes the pairs (a program of one thread) | $live | 1 | ${best[u 1 $live]} | ${raw[ho 1 $live]} / ${raw[hf 1 $live]} | ${best[ho 1 $live]} | ${best[hf 1 $live]} | $add_off | $add_full | ≤ 60 added (off), ≤ 150 (32 of 48 frames) | $([ "$add_off" -le 60 ] && [ "$add_full" -le 150 ] && echo yes || echo no) |"
done
# the same program built without frame pointers: every frame's rule from its
# call frame information
add_nofp=$(calc "${best[nf 1 0]} - ${raw[nf 1 0]}")
echo "| CPU ns per alloc+free pair, program built without frame pointers | 0 | 1 | ${best[nu 1 0]} | - / ${raw[nf 1 0]} | | ${best[nf 1 0]} | | $add_nofp | ≤ 150 (32 of 48 frames) | $([ "$add_nofp" -le 150 ] && echo yes || echo no) |"
# not a target's row: what a walk costs when the last one is not the same
add_two=$(calc "${best[tf 1 0]} - ${raw[tf 1 0]}")
echo "| CPU ns per alloc+free pair, two call sites taking turns (each walk starts where the last did, one return address apart) | 0 | 1 | ${best[tu 1 0]} | - / ${raw[tf 1 0]} | | ${best[tf 1 0]} | | $add_two | (no target: the memo's worst case) | - |"

# threads at call sites of their own: no line of one site's totals is another's
add_own=$(calc "${best[wf 8 0]} - ${raw[wf 8 0]}")
own_met=$(awk -v a="$add_own" -v y="${one_full[0]}" 'BEGIN { print a <= 2 * y ? "yes" : "no" }')
[ "$CORES" -lt 8 ] && own_met="not measured ($own_met here)"
echo "| CPU ns per alloc+free pair, each thread on a call site of its own$([ "$CORES" -lt 8 ] && echo ", oversubscribed (8 threads on $CORES cores)") | 0 | 8 | ${best[wu 8 0]} | - / ${raw[wf 8 0]} | | ${best[wf 8 0]} | | $add_own | ≤ 2 × 1 thread (${one_full[0]}) | $own_met |"

# guard memory per live allocation at 1M
LIVE=1000000
rss() { local n=$1; shift; for i in 1 2 3; do env "$@" "$B/bench" rss "$n"; done | median; }
z0=$(rss 0 GPUSIM_MEM=64G); z1=$(rss 0 LD_PRELOAD="$LIB" GPUMEM_STACK_DEPTH=0); z2=$(rss 0 LD_PRELOAD="$LIB" GPUMEM_STACK_DEPTH=32)
r0=$(rss $LIVE GPUSIM_MEM=64G); r1=$(rss $LIVE LD_PRELOAD="$LIB" GPUMEM_STACK_DEPTH=0); r2=$(rss $LIVE LD_PRELOAD="$LIB" GPUMEM_STACK_DEPTH=32)
b1=$(calc "($r1 - $r0) * 1024 / $LIVE" 1); b2=$(calc "($r2 - $r0) * 1024 / $LIVE" 1)
m1=$(calc "($r1 - $r0 - ($z1 - $z0)) * 1024 / $LIVE" 1); m2=$(calc "($r2 - $r0 - ($z2 - $z0)) * 1024 / $LIVE" 1)
echo "| bytes of guard memory per live allocation, 1,000,000 live from one call site: VmRSS kB; (guarded − unguarded) / 1,000,000, and the same less the guard's own with nothing live ($((z1 - z0)), $((z2 - z0)) kB) | $LIVE | 1 | $r0 | | $r1 | $r2 | $b1 / $m1 | $b2 / $m2 | ≤ 96 (guarded − unguarded) | $(awk -v a="$b1" -v b="$b2" 'BEGIN { print (a <= 96 && b <= 96) ? "yes" : "no" }') |"

# a report over 1M live allocations (public API), 32-frame stacks
report() { for i in 1 2 3; do env LD_PRELOAD="$LIB" "$@" "$B/bench" report "$LIVE" 32; done | sort -g | sed -n 2p; }
set -- $(report GPUMEM_STACK_DEPTH=0); ro_s=$1; ro_kb=$2
set -- $(report GPUMEM_STACK_DEPTH=32); rf_s=$1; rf_kb=$2
echo "| report: seconds, and MB added while written | $LIVE | 1 | - | | $ro_s s, $(calc "$ro_kb / 1024" 1) MB | $rf_s s, $(calc "$rf_kb / 1024" 1) MB | | | < 0.3 s, ≤ 32 MB | $(awk -v a="$ro_s" -v b="$rf_s" -v c="$ro_kb" -v d="$rf_kb" 'BEGIN { print (a < 0.3 && b < 0.3 && c <= 32768 && d <= 32768) ? "yes" : "no" }') |"

# the HTML page over 1M live allocations in 100,000 distinct stacks
# (tests/bench/stacks.c): the report's time, the page's size, and the ms
# its script takes to read and draw it in headless Chromium (when there)
cc -std=gnu11 -O2 -g -I"${CUDA_HOME:-/usr/local/cuda}/include" -o "$B/bench_stacks" tests/bench/stacks.c -L"$B/sim" -l:libcuda.so.1 -ldl
html() { for i in 1 2 3; do env LD_PRELOAD="$LIB" GPUMEM_STACK_DEPTH=32 GPUMEM_REPORT_FORMAT=html GPUMEM_REPORT="$SNAP/page.html" \
         "$B/bench_stacks" "$LIVE" 100000; done | median; }
h_s=$(html); h_mb=$(calc "$(stat -c %s "$SNAP/page.html") / 1048576" 1)
CHROME=$(command -v chromium || true); h_ms="-"
if [ -n "$CHROME" ]; then
    h_ms=$(HOME=$SNAP timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --user-data-dir="$SNAP/chrome" \
           --dump-dom "file://$SNAP/page.html" 2>/dev/null | sed -n 's/.*data-gmg-ms="\([0-9]*\)".*/\1/p' | head -1)
fi
echo "| HTML page, 100,000 stacks: seconds to write it, its MB, and ms for its script to draw it in Chromium | $LIVE | 1 | - | | | $h_s s, $h_mb MB, ${h_ms:--} ms | | | < 1 s, < 10 MB | $(awk -v a="$h_s" -v b="$h_mb" 'BEGIN { print (a < 1 && b < 10) ? "yes" : "no" }') |"

# a refusal message at 1M live: the first, the next at a new call site
# (stacks off: every call site is one, explained once)
refusal() { local n=$1; shift; for i in 1 2 3; do env LD_PRELOAD="$LIB" GPUMEM_LIMIT=1G "$@" "$B/bench" refusal "$LIVE" 32 "$n"; done | sort -g | sed -n 2p; }
so1=$(refusal 1 GPUMEM_STACK_DEPTH=0)
set -- $(refusal 2 GPUMEM_STACK_DEPTH=32); sf1=$1; sf2=$2
echo "| refusal message: ms from the refused call to the message; 32 frames: first / next call site | $LIVE | 1 | - | | $so1 | $sf1 / $sf2 | | | < 1 ms | $(awk -v a="$so1" -v b="$sf1" -v c="$sf2" 'BEGIN { print (a < 1 && b < 1 && c < 1) ? "yes" : "no" }') |"

# The same pairs against the driver's default, which serialises every call
# on one mutex and puts a waiting thread to sleep: with 2 threads, "added"
# holds whatever the guard changes in how often the threads meet there.
echo
echo "Against the simulated driver's default (one mutex for every call), 0 live: unguarded / driver alone (off / 32) / guarded off / guarded 32 → added off, added 32; sleeps per 1,000 pairs unguarded / off / 32:"
for threads in 1 2; do
    set -- "${best[su $threads 0]}" "${best[so $threads 0]}" "${best[sf $threads 0]}" "${raw[so $threads 0]}" "${raw[sf $threads 0]}"
    echo "- $threads thread$([ "$threads" = 1 ] || echo s): $1 / $4 / $5 / $2 / $3 → $(calc "$2 - $4"), $(calc "$3 - $5"); sleeps ${sleeps[su $threads 0]} / ${sleeps[so $threads 0]} / ${sleeps[sf $threads 0]}"
done

# Where the threads' time goes: each best run's sleeps per 1,000 pairs
# (bench.c), which should be near 0 where the driver has no shared lock.
echo
echo "Sleeps per 1,000 pairs in each thread row's best runs (voluntary context switches; unguarded / driver alone in the stacks-off runs / stacks off / 32 frames):"
for threads in 2 4 8; do
    line="- $threads threads:"
    for live in 0 100000 1000000; do
        line="$line $live live ${sleeps[u $threads $live]} / ${raw_sleeps[o $threads $live]} / ${sleeps[o $threads $live]} / ${sleeps[f $threads $live]};"
    done
    echo "${line%;}"
done
echo

# The one line SPEC §6 lets every allocation write, the device's quota
# counter, on its own: the driver alone plus two atomic operations per pair
# on one line all threads share (bench.c, line_alloc), less the driver alone,
# in the same stacks-off processes. With more than one thread that line moves
# between cores on every pair. It is what the quota cost before its credits
# (core/quota.c): a thread's pairs now write no shared line.
echo "A shared counter's line alone, as the quota wrote it before its credits (driver alone plus two atomic operations per pair on one shared line, less the driver alone, in the stacks-off runs; ns per pair, sleeps per 1,000 pairs):"
for threads in 1 2 4 8; do
    row="- $threads thread$([ "$threads" = 1 ] || echo s):"
    for live in 0 100000 1000000; do
        row="$row $live live $(calc "${line[o $threads $live]} - ${raw[o $threads $live]}") ns (${line_sleeps[o $threads $live]} sleeps);"
    done
    echo "${row%;}"
done
echo

# Instructions added per pair, which no other program on the machine can
# change (callgrind; the timed rows above can be disturbed): half of the
# 100,000 pairs of bench.c go through the guard; against the same driver as
# the pair rows (GPUSIM_THREAD_RANGES=1).
if command -v valgrind >/dev/null 2>&1; then
    ins() { env "$@" valgrind --tool=callgrind --callgrind-out-file=/dev/null "$B/bench" pairs 100000 0 1 32 2>&1 \
            | sed -n 's/.*Collected : //p'; }
    iu=$(ins GPUSIM_THREAD_RANGES=1); io=$(ins GPUSIM_THREAD_RANGES=1 LD_PRELOAD="$LIB" GPUMEM_STACK_DEPTH=0)
    echo "Instructions added per pair through the guard (1 thread, 0 live, stacks off; callgrind): $(( (io - iu) / 50000 ))"
else
    echo "Instructions added per pair: not measured (no valgrind)"
fi
echo

# NVTX memory API: nvtxMemRegionsRegister + nvtxMemRegionsUnregister pairs
# (4 KiB regions in one heap), 32 frames deep; unguarded, NVTX's calls are
# no-ops (no injection). Least CPU ns per pair of 40 rounds, best of 3 runs.
nvtx() { for _ in 1 2 3; do env "$@" "$B/bench" nvtx 400000 32; done | min; }
nu=$(nvtx); no=$(nvtx LD_PRELOAD="$LIB" NVTX_INJECTION64_PATH="$LIB" GPUMEM_STACK_DEPTH=0)
nf=$(nvtx LD_PRELOAD="$LIB" NVTX_INJECTION64_PATH="$LIB" GPUMEM_STACK_DEPTH=32)
echo "NVTX region register+unregister pair (CPU ns, 32 frames deep): unguarded $nu; guarded, stacks off $no (added $(calc "$no - $nu")); 32 frames $nf (added $(calc "$nf - $nu"))"
# the same, each pair in the next of 1000 heaps in turn (the heap is found by its address)
hu=$(nvtx BENCH_HEAPS=1000); hf=$(nvtx BENCH_HEAPS=1000 LD_PRELOAD="$LIB" NVTX_INJECTION64_PATH="$LIB" GPUMEM_STACK_DEPTH=32)
echo "NVTX pair, 1000 heaps in turn (CPU ns, 32 frames deep): unguarded $hu; guarded, 32 frames $hf (added $(calc "$hf - $hu"))"
echo

# Python: pairs made through ctypes from 10 and 50 Python frames, on every
# CPython of 3.11, 3.12 and 3.13 found (pyenv's or on PATH). As the pair
# rows, each process takes turns between two paths to the same driver from
# the same Python frames (tests/bench/pybench.py): cuMemAlloc_v2/cuMemFree_v2
# (the guard's) and the simulated driver's own names (the driver alone).
# "added" is the guarded path less the driver alone, each the least of its
# rounds in the same processes (GPUMEM_PYTHON=auto, 32 frames kept); "capture"
# is auto less off, through the guard. The unguarded processes' own figure
# is shown beside it.
pythons() {
    local v c
    for v in 3.11 3.12 3.13; do
        for c in "$(pyenv root 2>/dev/null)/versions/$v".*/bin/python"$v" "$HOME/.pyenv/versions/$v".*/bin/python"$v" \
                 /usr/bin/python"$v" /usr/local/bin/python"$v" "$(command -v python"$v" || true)"; do
            [ -n "$c" ] && [ -x "$c" ] && { echo "$c"; break; }
        done
    done
    return 0 # none found is no failure (set -e)
}
# py_best PY DEPTH ENV...: 5 processes; "ENTRY RAW", each the least of its column
py_best() {
    local py=$1 d=$2; shift 2
    for _ in 1 2 3 4 5; do env GPUSIM_THREAD_RANGES=1 "$@" "$py" tests/bench/pybench.py "$d" 10000; done |
        awk 'NR == 1 || $1 < e { e = $1 } NR == 1 || $2 < r { r = $2 } END { print e, r }'
}
PYS=$(pythons)
if [ -n "$PYS" ]; then
    echo
    echo "Python through ctypes, CPU ns per pair (the thread's own CPU time; rounds of 10,000 pairs, 40 through the guard and 40 through the driver alone taking turns in each process; the least of each over 5 processes), against the simulated driver with GPUSIM_THREAD_RANGES=1 as the pair rows:"
    echo
    echo "| Python | Python frames | unguarded process | driver alone in the guarded processes (off / auto) | guarded, GPUMEM_PYTHON=off | guarded, auto | added (auto − driver alone) | capture (auto − off) | target | met |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|---|---|"
    for PY in $PYS; do
        for d in 10 50; do
            read -r base _ < <(py_best "$PY" $d)
            read -r off off_raw < <(py_best "$PY" $d LD_PRELOAD="$LIB" GPUMEM_STACK_DEPTH=32 GPUMEM_PYTHON=off)
            read -r auto auto_raw < <(py_best "$PY" $d LD_PRELOAD="$LIB" GPUMEM_STACK_DEPTH=32 GPUMEM_PYTHON=auto)
            add=$(calc "$auto - $auto_raw")
            printf "| %s | %s | %s | %s / %s | %s | %s | %s | %.0f | ≤ 250 | %s |\n" "$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')" \
                "$d" "$base" "$off_raw" "$auto_raw" "$off" "$auto" "$add" "$(calc "$auto - $off" 1)" "$([ "$add" -le 250 ] && echo yes || echo no)"
        done
    done
fi
echo

# Peak tracking and the driver's out of memory. What was live at the peak
# is kept on every allocation and free (core/peak.c): its cost is measured
# against a copy of the library built without it (-DGMG_NO_PEAK), which
# keeps the quota's counter without a limit instead (its in-use and peak
# figures come from there; with peak tracking no counter is kept without a
# limit): "own" is what peak tracking adds over that counter. Each the
# best of REPS processes, alternating, 1 thread, stacks off, against the
# per-thread-range driver as the pair rows above. The 100,000-stack row
# times an out-of-memory message, which reads the peak's make-up of every
# stack, over 1,000,000 live allocations made from 100,000 distinct stacks,
# with and without peak tracking. The out-of-memory row asks the 64 GiB simulated
# device for 1 TiB with no GPUMEM_LIMIT at 1,000,000 live (bench.c, refusal).
echo
echo "Peak tracking and the driver's out of memory ($(date -u +%F)):"
echo
NOPEAK="$SNAP/nopeak"
if make -s B="$NOPEAK" EXTRA_CFLAGS=-DGMG_NO_PEAK "$NOPEAK/libgpumemguard.so" >"$SNAP/nopeak.log" 2>&1; then
    declare -A pk_best pk_raw
    pk_one() { # KEY LIB LIVE
        local v r; read -r v _ _ r _ < <(env LD_PRELOAD="$2" GPUMEM_STACK_DEPTH=0 GPUSIM_THREAD_RANGES=1 "$B/bench" pairs "$PAIRS" "$3" 1 32)
        local a; a=$(calc "$v - $r" 1)
        if [ -z "${pk_best[$1]:-}" ] || awk -v x="$a" -v y="${pk_best[$1]}" 'BEGIN { exit !(x < y) }'; then pk_best[$1]=$a; fi
    }
    for pass in $(seq "$REPS"); do
        for live in 0 100000 1000000; do
            pk_one "p $live" "$LIB" $live
            pk_one "n $live" "$NOPEAK/libgpumemguard.so" $live
        done
    done
    echo "| measure | live | with peak tracking | without (GMG_NO_PEAK: the quota's counter instead) | peak tracking's own | target | met |"
    echo "|---|---:|---:|---:|---:|---|---|"
    for live in 0 100000 1000000; do
        own=$(calc "${pk_best[p $live]} - ${pk_best[n $live]}" 1)
        echo "| CPU ns added per alloc+free pair, 1 thread, stacks off | $live | ${pk_best[p $live]} | ${pk_best[n $live]} | $own | ≤ 60 added with peak tracking | $(awk -v a="${pk_best[p $live]}" 'BEGIN { print a <= 60 ? "yes" : "no" }') |"
    done
    # what was live at the peak over 100,000 stacks: the driver's out-of-memory
    # message at a new call site (it reads the live totals, and the peak's
    # make-up, of every stack) with and without peak tracking
    stk() { for i in 1 2 3; do env LD_PRELOAD="$1" GPUSIM_MEM=64G GPUMEM_STACK_DEPTH=32 BENCH_STACKS=100000 "$B/bench" refusal 1000000 32 2 | cut -d' ' -f2; done | median; }
    sp=$(stk "$LIB"); sn=$(stk "$NOPEAK/libgpumemguard.so"); sd=$(calc "$sp - $sn" 2)
    echo "| the peak's make-up over 1,000,000 live in 100,000 stacks: ms of an out-of-memory message (next call site) | 1000000 | $sp | $sn | $sd | < 100 ms | $(awk -v a="$sd" 'BEGIN { print a < 100 ? "yes" : "no" }') |"
else
    echo "(the copy without peak tracking did not build: $(tail -3 "$SNAP/nopeak.log" | tr '\n' ' '))"
    echo
    echo "| measure | live | with peak tracking | without (GMG_NO_PEAK: the quota's counter instead) | peak tracking's own | target | met |"
    echo "|---|---:|---:|---:|---:|---|---|"
fi
oom() { local n=$1; shift; for i in 1 2 3; do env LD_PRELOAD="$LIB" GPUSIM_MEM=64G "$@" "$B/bench" refusal 1000000 32 "$n"; done | sort -g | sed -n 2p; }
oo1=$(oom 1 GPUMEM_STACK_DEPTH=0)
set -- $(oom 2 GPUMEM_STACK_DEPTH=32); of1=$1; of2=$2
echo "| the driver's out-of-memory message: ms from the call to the message; stacks off / 32 frames first / next call site | 1000000 | $oo1 / $of1 / $of2 | | | < 1 ms | $(awk -v a="$oo1" -v b="$of1" -v c="$of2" 'BEGIN { print (a < 1 && b < 1 && c < 1) ? "yes" : "no" }') |"
