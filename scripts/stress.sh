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

echo
echo "stress took $((SECONDS - t0)) s"
echo "$PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
