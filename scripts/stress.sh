#!/usr/bin/env bash
# stress.sh BUILD_DIR - the hostile cases of issue 9 as bounded storms
# against the simulated driver (make stress; each case has a time limit, the
# whole run stays well under 3 minutes on 2 cores). Ends "N passed, M failed".
set -u
B=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
T=$B/tests
mkdir -p "$T"
cc -std=gnu11 -O1 -g -Wall -Wextra -Werror -I"${CUDA_HOME:-/usr/local/cuda}/include" -o "$T/trust" \
    tests/integration/trust.c -L"$B/sim" -l:libcuda.so.1 -ldl -lpthread || exit 1
cc -std=gnu11 -O1 -g -Wall -Wextra -Werror -shared -fPIC -o "$T/liboomshim.so" tests/integration/oomshim.c -ldl || exit 1
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
# (tests/integration/oomshim.c fails only calls made from the guard's code):
# every one, in a program that allocates, frees, reports at exit in text and
# JSON under a limit; and every third in one that is refused and explained.
# Never a crash, a hang, or fewer bytes counted than the driver holds.
sweep() { # NAME ORACLE_GREP ENV... -- ARGS...: OOM_ONLY=1..N (N counted first), every STEP
    local name=$1 want=$2 step=$3; shift 3
    local n; n=$(timeout 30 env LD_PRELOAD="$ROOT/$T/liboomshim.so $PRELOAD" OOM_STATS=1 OOM_AFTER=1000000000 "$@" \
                 2>&1 >/dev/null | sed -n 's/^\[shim\] eligible=\([0-9]*\).*/\1/p')
    local k fails=0 runs=0 first=""
    for ((k = 1; k <= ${n:-0}; k += step)); do
        runs=$((runs + 1))
        timeout 30 env LD_PRELOAD="$ROOT/$T/liboomshim.so $PRELOAD" OOM_ONLY=$k "$@" >"$WORK/out" 2>"$WORK/err"; rc=$?
        if [ $rc != 0 ] || ! grep -q "$want" "$WORK/out"; then
            fails=$((fails + 1)); [ -z "$first" ] && first="OOM_ONLY=$k (rc $rc)" && cp "$WORK/err" "$WORK/first"
        fi
    done
    if [ "${n:-0}" -gt 0 ] && [ $fails = 0 ]; then
        ok "guard out of memory, $name: $runs of its $n allocations failed one at a time, never a crash, a hang or too few bytes counted"
    else bad "guard out of memory, $name: $fails of $runs runs failed (${n:-no} eligible; first: $first)" "$WORK/first"; fi
}
sweep "allocate, free, exit report (text, JSON) under a limit" \
    "guard 1024000 while held; after the frees sim 0" 1 \
    GPUMEM_LIMIT=64M GPUMEM_REPORT_FORMAT=text,json "$T/trust" nomem 2000
sweep "a refusal explained" "nomem_refuse: the fourth refused" 3 GPUMEM_LIMIT=3M "$T/trust" nomem_refuse

echo
echo "stress took $((SECONDS - t0)) s"
echo "$PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
