# reused.sh - descriptors the program closes and reuses after the guard
# started: descriptor 2, a daemon's closefrom(3), the symbolizer's files
# (tests/descriptors/reused.c). The guard never reads, writes or closes
# them. Sourced by tests/run.sh (its helpers, $ROOT, $T, $WORK, $PRELOAD).
build reused_fds tests/descriptors/reused.c -L"$B/sim" -l:libcuda.so.1

env LD_PRELOAD="$PRELOAD" "$T/reused_fds" fd2 "$WORK/data" >/dev/null 2>&1
[ "$(cat "$WORK/data")" = DATA ] && ok "descriptor 2 closed and reused for the program's data file: no report written into it" \
    || bad "descriptor 2 reused" "$WORK/data"

# a daemon's closefrom(3) after the guard started (after a first dump: its
# thread's symbolizer then holds descriptors): the program's own pipe and
# file take the numbers the guard's descriptors had. The guard never reads,
# writes or closes them, and its thread still answers refusals, dump signals
# and (GPUMEM_METRICS) its tick. Once it woke its thread with bytes on a pipe
# (they landed in the program's pipe, and the thread read the program's
# data); and its symbolizer kept its files at low numbers, which a warm-up
# still under way then read and closed (the program's pipe read as libc's
# ELF header): they sit at 512 and up now
for metrics in "" "GPUMEM_METRICS=$WORK/cf.prom GPUMEM_METRICS_INTERVAL=1"; do
    if [ "${GMG_SANITIZER:-}" = tsan ]; then
        # TSan tracks descriptors: the program closing one another thread
        # opened (the guard's) is a race on it there, which is this case
        skip "closefrom(3) in the program${metrics:+ (GPUMEM_METRICS)}" "TSan reports the program's close of the guard's descriptors as a race"; continue
    fi
    rm -rf "$WORK/cf" "$WORK/cf.prom"; mkdir -p "$WORK/cf"
    timeout 60 env LD_PRELOAD="$PRELOAD" GPUMEM_LIMIT=1M GPUMEM_REPORT="$WORK/cf/r.txt" $metrics \
        "$T/reused_fds" closefrom "$WORK/cf/own.dat" "$WORK/cf/r.txt" "$WORK/cf/r.2.txt" >"$WORK/out" 2>"$WORK/err"; rc=$?
    if [ $rc = 0 ] && has "closefrom: ELF files open below descriptor 512: 0" "$WORK/out" \
       && has "closefrom: pipe 5 bytes 'hello', file 0 bytes, dump while running: yes" "$WORK/out" \
       && has "gpumemguard: refused cuMemAlloc of 1.0 TiB" "$WORK/err" && grep -q "(signal, dump 2)" "$WORK/cf/r.2.txt" \
       && { [ -z "$metrics" ] || grep -q "^gpumem_refused_allocations_total" "$WORK/cf.prom"; }; then
        ok "descriptors 3..1023 closed by the program and reused for its pipe and file: nothing read from or written into them; refusal, dump${metrics:+ and metrics} still made"
    else bad "closefrom(3) in the program${metrics:+ (GPUMEM_METRICS)} (rc $rc): $(cat "$WORK/out")" "$WORK/err"; fi
done

# ... and no reading of the process's maps by the guard's thread just after
# that dump: the device free memory of a report loads NVML's library, which
# made the next use of the symbolizer make it anew (libdw reading
# /proc/PID/maps, opened at a low number, when a daemon's closefrom then
# closed it and made its pipe there: the pipe read as maps, its read end
# closed). Here a shim holds that thread 200 ms at the first read of a maps
# file; the library NVML's is the guard's own, and keeps the symbolizer.
if [ -z "${GMG_SANITIZER:-}" ]; then
    $CC -std=gnu11 -O1 -g -Wall -Wextra -Werror -shared -fPIC -o "$T/libslowmaps.so" tests/descriptors/slowmaps.c -ldl || exit 1
    rm -rf "$WORK/cf"; mkdir -p "$WORK/cf"
    timeout 60 env LD_PRELOAD="$PRELOAD $ROOT/$T/libslowmaps.so" GPUMEM_LIMIT=1M GPUMEM_REPORT="$WORK/cf/r.txt" \
        "$T/reused_fds" closefrom "$WORK/cf/own.dat" "$WORK/cf/r.txt" "$WORK/cf/r.2.txt" >"$WORK/out" 2>"$WORK/err"; rc=$?
    if [ $rc = 0 ] && has "closefrom: pipe 5 bytes 'hello', file 0 bytes, dump while running: yes" "$WORK/out" \
       && ! has "could not be read" "$WORK/err" && grep -q " in refused_after_closefrom " "$WORK/err"; then
        ok "closefrom(3) just after a dump that loaded NVML, the guard's thread slow at reading maps: the symbolizer is not made anew, the program's pipe untouched, frames named"
    else bad "closefrom(3) after a dump that loaded NVML, slow maps (rc $rc): $(cat "$WORK/out")" "$WORK/err"; fi
else
    skip "closefrom(3) after a dump that loaded NVML, slow maps" "the shim is for the plain build"
fi

# the symbolizer's descriptors (libdw keeps the ELF files it read open until
# the symbolizer is made anew, after a library is loaded): closed by the
# program and reused, they were closed under it then, and the numbers
# reopened as the guard's ELF files
if [ "${GMG_SANITIZER:-}" = tsan ]; then
    # as closefrom above: the report thread's warm-up may have opened them
    skip "the symbolizer's descriptors closed by the program" "TSan reports the program's close of the guard's descriptors as a race"
else
    rm -f "$WORK/symfds.dat"
    timeout 60 env LD_PRELOAD="$PRELOAD" "$T/reused_fds" symfds "$WORK/symfds.dat" "$ROOT/$T/libgmgmod1.so" >"$WORK/out" 2>"$WORK/err"; rc=$?
    [ $rc = 0 ] && has "symfds: 32 of 32 descriptors still the program's file (two reports)" "$WORK/out" \
        && ok "the symbolizer made anew after the program closed and reused its descriptors: none of the program's closed or replaced" \
        || bad "the symbolizer's descriptors closed by the program (rc $rc): $(cat "$WORK/out")" "$WORK/err"
fi
