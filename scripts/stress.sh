#!/usr/bin/env bash
# stress.sh BUILD_DIR - the hostile cases of issue 9 as bounded storms
# against the simulated driver (make stress; each case has a time limit, the
# whole run stays well under 3 minutes on 2 cores). Ends "N passed, M failed".
set -u
B=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
T=$B/stress-tests # its own programs: make test may build its copies into $B/tests meanwhile (.ci/run)
mkdir -p "$T"
cc -std=gnu11 -O1 -g -Wall -Wextra -Werror -I"${CUDA_HOME:-/usr/local/cuda}/include" -o "$T/trust" \
    tests/integration/trust.c -L"$B/sim" -l:libcuda.so.1 -ldl -lpthread || exit 1
cc -std=gnu11 -O1 -g -Wall -Wextra -Werror -shared -fPIC -o "$T/liboomshim.so" tests/integration/oomshim.c -ldl || exit 1
for g in tests/integration/grouptest.c:grouptest tests/group/holdfast.c:holdfast; do
    cc -std=gnu11 -O1 -g -Wall -Wextra -Werror -Isrc -I"${CUDA_HOME:-/usr/local/cuda}/include" -o "$T/${g#*:}" "${g%%:*}" \
        -L"$B/sim" -l:libcuda.so.1 -ldl -lpthread || exit 1
done
export LD_LIBRARY_PATH="$ROOT/$B/sim${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
PRELOAD="$ROOT/$B/libgpumemguard.so"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
PASS=0; FAIL=0
ok()  { PASS=$((PASS + 1)); echo "ok   $1"; }
bad() { FAIL=$((FAIL + 1)); echo "FAIL $1"; [ -n "${2:-}" ] && sed 's/^/     | /' "$2" | head -30; }
run() { local limit=$1; shift; timeout "$limit" env LD_PRELOAD="$PRELOAD" "$@" >"$WORK/out" 2>"$WORK/err"; }
t0=$SECONDS

# 16 threads, every counted family, near a 64 MiB limit: the driver never holds more
for round in 1 2 3; do
    run 60 GPUMEM_LIMIT=64M GPUMEM_REPORT=/dev/null "$T/trust" storm 4000; rc=$?
    peak=$(sed -n 's/.*sim peak \([0-9]*\).*/\1/p' "$WORK/out")
    if [ $rc = 0 ] && [ -n "$peak" ] && [ "$peak" -le 67108864 ] && grep -q "sim live 0 guard 0 " "$WORK/out"; then
        ok "storm $round: 16 threads x 4000 mixed-family operations under 64 MiB: driver peak $peak, nothing left"
    else bad "storm $round (rc $rc)" "$WORK/out"; fi
done

# dump signals while 3 threads re-install the program's handler
run 90 GPUMEM_REPORT=/dev/null "$T/trust" sigstorm 20000; rc=$?
[ $rc = 0 ] && grep -q "handlers ran 20000, bad 0" "$WORK/out" \
    && ok "signal storm: 20000 dump signals, handlers re-installed from 3 threads, each called as installed" \
    || bad "signal storm (rc $rc)" "$WORK/out"

# forks while 4 threads allocate: every child starts clean and works
run 90 GPUMEM_REPORT=/dev/null "$T/trust" forkstorm 300; rc=$?
[ $rc = 0 ] && grep -q "forkstorm: 300 forks, 300 children clean" "$WORK/out" \
    && ok "fork storm: 300 forks while 4 threads allocate, every child clean" || bad "fork storm (rc $rc)" "$WORK/out"

# two threads freeing one pointer, many rounds
run 60 GPUSIM_FREE_DELAY_US=5 "$T/trust" double_free 5000; rc=$?
[ $rc = 0 ] && grep -q "5000 rounds, 0 phantoms, guard 0, sim 0" "$WORK/out" \
    && ok "racing frees: 5000 rounds, no phantom record" || bad "racing frees (rc $rc)" "$WORK/out"

# report paths: every hostile destination, dumps from 4 threads at once
mkfifo "$WORK/fifo"; mkdir -p "$WORK/dir" "$WORK/many"; ln -s "$WORK/nowhere" "$WORK/link"
for dest in "$WORK/fifo" "$WORK/dir" "$WORK/link" /dev/full "$WORK/missing/r.txt" /dev/null; do
    run 60 GPUMEM_REPORT="$dest" "$T/trust" apidumps 25; rc=$?
    # on stderr when the path cannot take them, else in files (dir.2, link.2: beside, never through)
    reports=$(cat "$WORK/err" "$dest".* 2>/dev/null | grep -c "SUMMARY: gpumemguard")
    if [ $rc = 0 ] && { [ "$dest" = /dev/null ] || [ "$reports" = 101 ]; } && [ ! -e "$WORK/nowhere" ]; then
        ok "report path torture: ${dest#$WORK/}: 101 reports from 4 threads, no hang, nothing lost"
    else bad "report path ${dest#$WORK/} (rc $rc, $reports reports on stderr)" "$WORK/err"; fi
done
run 60 GPUMEM_REPORT="$WORK/many/r.json" GPUMEM_REPORT_FORMAT=json "$T/trust" apidumps 100; rc=$?
n=$(ls "$WORK/many" | grep -cE '^r(\.[0-9]+)?\.json$')
bad_json=0
for f in "$WORK/many"/*.json; do jq -e .schema "$f" >/dev/null 2>&1 || bad_json=$((bad_json + 1)); done
[ $rc = 0 ] && [ "$n" = 401 ] && [ "$bad_json" = 0 ] && [ -z "$(ls "$WORK/many" | grep tmp)" ] \
    && ok "report path torture: 400 concurrent dumps and the exit report to one path: 401 whole JSON files" \
    || bad "concurrent dumps to one path: $n files, $bad_json unreadable (rc $rc)" "$WORK/err"

# The guard out of memory, one of its own allocations at a time
# (tests/integration/oomshim.c fails only calls made from the guard's code;
# preloaded after the guard, so that its count, written by its destructor,
# takes in the guard's exit report: oomshim.c says why):
# every one, in a program that allocates, frees, reports at exit in text and
# JSON under a limit; every third in one that is refused and explained; then
# fork, dumps, cuGetProcAddress, VMM and stream-ordered pools (below).
# Never a crash, a hang, or fewer bytes counted than the driver holds.
# Each run starts with an empty $REP; sweep_check, when set, is a command
# that judges what the run left there (and in $WORK/err): non-zero fails it.
REP=$WORK/rep
sweep_check=
sweep() { # NAME ORACLE_GREP STEP ENV... CMD ARGS...: OOM_ONLY=1..N (N counted first), every STEP
    local name=$1 want=$2 step=$3; shift 3
    # N: the most any process counted (a forked child goes on from its parent's count)
    local n; n=$(rm -rf "$REP"; mkdir "$REP"
                 timeout 30 env LD_PRELOAD="$PRELOAD $ROOT/$T/liboomshim.so" OOM_STATS=1 OOM_AFTER=1000000000 "$@" \
                 2>&1 >/dev/null | sed -n 's/^\[shim\] eligible=\([0-9]*\).*/\1/p' | sort -n | tail -1)
    local k fails=0 runs=0 first="" since=$SECONDS
    for ((k = 1; k <= ${n:-0}; k += step)); do
        runs=$((runs + 1))
        rm -rf "$REP"; mkdir "$REP"
        timeout 30 env LD_PRELOAD="$PRELOAD $ROOT/$T/liboomshim.so" OOM_ONLY=$k "$@" >"$WORK/out" 2>"$WORK/err"; rc=$?
        if [ $rc != 0 ] || ! grep -q "$want" "$WORK/out" || { [ -n "$sweep_check" ] && ! $sweep_check >>"$WORK/err" 2>&1; }; then
            fails=$((fails + 1)); [ -z "$first" ] && first="OOM_ONLY=$k (rc $rc)" && cp "$WORK/err" "$WORK/first"
        fi
    done
    if [ "${n:-0}" -gt 0 ] && [ $fails = 0 ]; then
        ok "guard out of memory, $name: $runs of its $n allocations failed one at a time, never a crash, a hang or too few bytes counted ($((SECONDS - since)) s)"
    else bad "guard out of memory, $name: $fails of $runs runs failed (${n:-no} eligible; first: $first)" "$WORK/first"; fi
}
sweep "allocate, free, exit report (text, JSON) under a limit" \
    "guard 1024000 while held; after the frees sim 0" 1 \
    GPUMEM_LIMIT=64M GPUMEM_REPORT_FORMAT=text,json "$T/trust" nomem 2000
sweep "a refusal explained" "nomem_refuse: the fourth refused" 3 GPUMEM_LIMIT=3M "$T/trust" nomem_refuse

# Every report in $REP whole: JSON that jq reads, text that ends with its
# SUMMARY line. One that does not say it is incomplete must add up: its
# groups make its totals, every frame of the program is named (it is built
# with -g; libc's need debug symbols), and (the programs allocate device
# pointers only) the fragmentation section counts every allocation.
# The exit reports are there, or stderr says why one is not. One jq and one
# awk for all the files of a run (each costs more than the run).
whole_reports() {
    local bad=0 exits json txt judged
    json=$(ls "$REP"/*.json 2>/dev/null); txt=$(ls "$REP"/*.txt 2>/dev/null)
    # shellcheck disable=SC2086 # one name a line, without spaces (mktemp's)
    if [ -n "$json" ]; then
        judged=$(jq -r 'select((.schema == 1 and (.incomplete | type == "array") and ((.incomplete | length) > 0 or
                    (([.live[].bytes] | add // 0) == .totals.live_bytes and ([.live[].count] | add // 0) == .totals.live_allocations
                     and ([.live[].frames | length] | all(. > 0)) and ([.live[].frames[] | select(.module == "trust" and .function == null)] | length) == 0
                     and ([.fragmentation[].live_allocations] | add // 0) == .totals.live_allocations
                     and (.trigger == "exit" or .growth != null)))) | not) | input_filename' $json 2>&1) || judged="${judged:-jq failed}"
        [ -z "$judged" ] || { echo "JSON not whole, or incomplete without saying so: $judged"; bad=1; }
    fi
    # shellcheck disable=SC2086
    # sizes read "1.0 MiB (1048576 bytes) in 1 allocation", or "600 bytes in 2 allocations"
    [ -z "$txt" ] || awk 'function sized(s,    t) {
                 t = s; if (t ~ /^[0-9]+ bytes? in /) B = t + 0; else { sub(/^[^(]*\(/, "", t); B = t + 0 }
                 t = s; sub(/.* in /, "", t); C = t + 0
             }
             function judge() {
                 if (!started) return
                 if (last !~ /^SUMMARY: gpumemguard: [0-9]+ bytes in [0-9]+ allocations? still live at /) { print "no SUMMARY at its end: " name; bad = 1 }
                 else if (!inc && head && !(sum == live && cnt == n && !unnamed && frag && fragn == n)) { print "incomplete without saying so: " name; bad = 1 }
             }
             FNR == 1 { judge(); started = 1; name = FILENAME; live = n = head = sec = frag = fragn = sum = cnt = unnamed = inc = 0 }
             /^==[0-9]+== live: / { s = $0; sub(/^==[0-9]+== live: /, "", s); sized(s); live = B; n = C; head = 1 }
             /^Live allocations, by / { sec = 1; next }
             /^(Reclaimed by|Address ranges|Growth since|Live at the peak of device|Fragmentation, device)/ { sec = 0 }
             /^Fragmentation, device/ { frag++ }
             /^  live allocations: / { fragn += $3 }
             sec && / in [0-9]+ allocations? \(.*\) allocated from:$/ { sized($0); sum += B; cnt += C }
             / in \?\? (.* )?\(trust\+|no stack recorded/ { unnamed++ }
             /^WARNING: this report is incomplete/ { inc = 1 }
             { last = $0 }
             END { judge(); exit bad }' $txt || bad=1
    # the exit report, in each format: written, or stderr says why not
    exits=$(( $(cat "$REP"/*.json 2>/dev/null | grep -c '"trigger":"exit"') + $(cat "$REP"/*.txt 2>/dev/null | grep -c '^==[0-9]*== gpumemguard report (exit') \
              + $(grep -c "out of memory while formatting a report" "$WORK/err") ))
    [ "$exits" -ge 2 ] || { echo "exit reports: $exits of 2, and no word why"; bad=1; }
    return "$bad"
}

# fork while a thread allocates: each child starts clean, its allocations
# counted, its exit report its own; the parent's bytes stay its own
sweep_check=whole_reports
sweep "fork while a thread allocates, the children's exit reports" \
    "nomem_fork: 3 of 3 children fine; parent kept its bytes; guard never below the driver; sim 0 at the end" 2 \
    GPUMEM_LIMIT=64M GPUMEM_REPORT="$REP/r" GPUMEM_REPORT_FORMAT=text,json "$T/trust" nomem_fork 20
# dumps by signal and by gpumemguard_dump() while a thread allocates
sweep "dumps (signal, API) while allocating, to files in text and JSON" \
    "nomem_dumps: 6 dumps asked; guard never below the driver" 2 \
    GPUMEM_LIMIT=64M GPUMEM_REPORT="$REP/r" GPUMEM_REPORT_FORMAT=text,json "$T/trust" nomem_dumps 6
sweep_check=
# every counted family through pointers from cuGetProcAddress(_v2)
sweep "every family through cuGetProcAddress" \
    "nomem_gpa: 4 rounds through cuGetProcAddress; guard never below the driver; sim 0 at the end" 1 \
    GPUMEM_LIMIT=64M GPUMEM_REPORT=/dev/null "$T/trust" nomem_gpa 4
# The two below are of the quota's accounting up to a refusal, with stacks
# off: a run then takes milliseconds, not the tenth of a second that naming
# the refusal message's frames costs (the depot's failures are swept above).
# VMM: handles mapped twice, released while mapped, one unmap over two
# mappings, reserved ranges; then handles up to the limit
sweep "VMM handles, mappings and address ranges, up to the limit" \
    "nomem_maps: 3 rounds, [0-9]* handles then refused; guard never below the driver; sim 0 at the end" 1 \
    GPUMEM_STACK_DEPTH=0 GPUMEM_LIMIT=16M GPUMEM_REPORT=/dev/null "$T/trust" nomem_maps 3
# stream-ordered allocations, the current pool and the program's, up to the limit
sweep "stream-ordered allocations from pools, up to the limit" \
    "nomem_pool: 4 rounds, [0-9]* from the pool then refused; guard never below the driver; sim 0 at the end" 1 \
    GPUMEM_STACK_DEPTH=0 GPUMEM_LIMIT=16M GPUMEM_REPORT=/dev/null "$T/trust" nomem_pool 4

# GPUMEM_GROUP: kill and stop storms
. tests/group/storms.sh

echo
echo "stress took $((SECONDS - t0)) s"
echo "$PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
