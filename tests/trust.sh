# trust.sh - regression tests for hostile cases (a program, a library or a
# driver that works against the guard), sourced by run.sh (uses its
# helpers). Each would fail on the guard before the fix.

# 1. cuMemCreate -> cuMemMap -> cuMemRelease: the memory counts until unmapped
guarded GPUMEM_LIMIT=64M "$T/trust" vmm_bypass
if has "create 2: 2" "$WORK/out" && has "while mapped: alloc 60MiB 2, guard 67108864, sim 67108864" "$WORK/out" \
   && has "after unmap: alloc 60MiB 0, guard 62914560, sim 62914560, sim peak 67108864" "$WORK/out"; then
    ok "VMM handle released while mapped keeps counting until unmapped: driver never above the 64 MiB limit"
else bad "VMM release while mapped" "$WORK/out"; fi

# 2. a failed cuMemCreate at location -1 leaks no quota
guarded GPUMEM_LIMIT=8M "$T/trust" vmm_badloc
has "failed creates 40; then alloc of the whole limit: 0; guard 8388608" "$WORK/out" \
    && ok "40 failed cuMemCreate at location -1 keep no quota" || bad "cuMemCreate location -1" "$WORK/out"

# 3. failed huge requests leave the counters exact, with no limit and under warn
for cfg in "" "GPUMEM_LIMIT=8M GPUMEM_ON_LIMIT=warn"; do
    guarded $cfg "$T/trust" huge
    if has "huge: 2 2 2 2; guard 1048576;" "$WORK/out" && has "then 1MiB more: guard 2097152" "$WORK/out" \
       && has "in use 2.0 MiB (2097152 bytes), peak 2.0 MiB (2097152 bytes)" "$WORK/err"; then
        ok "failed SIZE_MAX-sized alloc, pitch, array, managed leave the counters exact (${cfg:-no limit})"
    else bad "huge requests (${cfg:-no limit})" "$WORK/out"; fi
done

# the same, with a third thread allocating the freed address again at once
guarded GPUSIM_FREE_DELAY_US=100 GPUSIM_AFTER_FREE_US=2000 "$T/trust" free_reuse 100
has "free and reuse: 100 rounds, 0 with the guard below the driver" "$WORK/out" \
    && ok "racing frees while a third thread reuses the address: its allocation stays counted (100 rounds)" \
    || bad "racing frees with address reuse" "$WORK/out"
# a context torn down while a thread frees its memory: reclaimed, not live
guarded GPUSIM_FREE_DELAY_US=100000 "$T/trust" ctxrace
if has "after teardown: guard 0 sim 0" "$WORK/out" && grep -A3 "Reclaimed by context teardown" "$WORK/err" | grep -q leak_in_doomed; then
    ok "a context torn down during a free of its memory: the record is reclaimed, its quota released"
else bad "teardown during a free" "$WORK/err"; fi

# 9. two threads freeing one pointer; equal legacy pointers on two devices
guarded GPUSIM_FREE_DELAY_US=20 "$T/trust" double_free 1500
has "double free: 1500 rounds, 0 phantoms, guard 0, sim 0" "$WORK/out" \
    && ok "two threads freeing one pointer at once, 1500 rounds: no phantom record, no double release" \
    || bad "concurrent double free" "$WORK/out"
guarded GPUSIM_DEVICES=2 "$T/trust" legacy2dev
if has "legacy pointers equal; dev0 1048576 dev1 2097152" "$WORK/out" \
   && has "after freeing dev1's: dev0 1048576 dev1 0" "$WORK/out" && has "after freeing dev0's: dev0 0 dev1 0" "$WORK/out"; then
    ok "equal legacy 32-bit pointers on two devices are two records, each freed on its own device"
else bad "legacy pointers on two devices" "$WORK/out"; fi

# 10. NULL outputs under a limit get the driver's CUDA_ERROR_INVALID_VALUE
guarded GPUMEM_LIMIT=8M "$T/trust" nulls
has "nulls: 1 1 1 1 1 1" "$WORK/out" && ! grep -q "unknown frees: [1-9]" "$WORK/err" \
    && ok "cuMemGetInfo/cuDeviceTotalMem with NULL outputs under a limit: CUDA_ERROR_INVALID_VALUE; frees of 0 are no-ops" \
    || bad "NULL outputs under a limit" "$WORK/out"

# 11. the simulated driver: sizes that overflow fail; fork while inside it
"$T/trust" sim_sizes >"$WORK/out" 2>&1
has "sim sizes: 2 2 2" "$WORK/out" && ok "simulated driver: SIZE_MAX alloc, pitch and array sizes that wrap fail (out of memory)" \
    || bad "simulated driver sizes" "$WORK/out"
timeout 120 "$T/trust" sim_fork 60 >"$WORK/out" 2>&1
has "forks 60, children fine 60" "$WORK/out" && ok "simulated driver: 60 forks while two threads are inside it, every child works" \
    || bad "simulated driver fork" "$WORK/out"

# 4. handlers re-installed from 3 threads while signals arrive: no crash, every
#    handler called in its own form
timeout 120 env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT=/dev/null "$T/trust" sigstorm 2000 >"$WORK/out" 2>"$WORK/err"; rc=$?
if [ $rc = 0 ] && has "sigstorm: 2000 signals, handlers ran 2000, bad 0" "$WORK/out"; then
    ok "2000 dump signals while 3 threads re-install SIGUSR1 handlers (plain and SA_SIGINFO): each called as installed"
else bad "signal storm with re-installed handlers (rc $rc)" "$WORK/out"; fi

# 5. the program's sa_flags (no SA_RESTART: EINTR), sa_mask and SA_RESETHAND stand
timeout 60 env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT=/dev/null "$T/trust" sigsem >"$WORK/out" 2>"$WORK/err"; rc=$?
if [ $rc = 0 ] && has "read interrupted: yes" "$WORK/out" && has "sa_mask kept: yes" "$WORK/out" \
   && has "resethand: calls 1, now SIG_DFL" "$WORK/out" && has "flags read back: same" "$WORK/out"; then
    ok "the program's SIGUSR1 sa_flags (EINTR without SA_RESTART), sa_mask and SA_RESETHAND behave as without the guard"
else bad "signal semantics (rc $rc)" "$WORK/out"; fi

# 6. a report path that is a FIFO with no reader (or a directory) never hangs
mkfifo "$WORK/fifo"; mkdir -p "$WORK/adir"
for dest in "$WORK/fifo" "$WORK/adir"; do
    kind=$([ -d "$dest" ] && echo "directory" || echo "FIFO with no reader")
    timeout 30 env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT="$dest" "$T/trust" dump_exit >"$WORK/out" 2>"$WORK/err"; rc=$?
    if [ $rc = 0 ] && has "cannot write report to $dest" "$WORK/err" && has "SUMMARY: gpumemguard" "$WORK/err"; then
        ok "GPUMEM_REPORT is a $kind: no hang, one message, the report on stderr"
    else bad "report to a $kind (rc $rc)" "$WORK/err"; fi
done

# exit() from the program's signal handler while the same thread writes a
# dump (held 5 s by a FIFO that takes 4 KiB): the process exits with the
# handler's status, no hang (the exit report used to wait for the lock the
# dump held, for ever; so did libdw exiting out of memory in a report)
rm -f "$WORK/slowfifo"; mkfifo "$WORK/slowfifo"
timeout 30 env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT="$WORK/slowfifo" "$T/trust" exit_in_dump "$WORK/slowfifo" \
    >"$WORK/out" 2>"$WORK/err"; rc=$?
if [ $rc = 0 ] && has "exit() called during a report on the same thread: no exit report" "$WORK/err"; then
    ok "exit() from a signal handler while its thread writes a dump: the process exits, no hang"
else bad "exit() during a dump on the same thread (rc $rc)" "$WORK/err"; fi

# 7. no report lost or misplaced
misses=""
for i in 1 2 3 4 5; do   # a dump signalled just before exit: written, and before the exit report
    rm -rf "$WORK/d"; mkdir -p "$WORK/d"
    env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT="$WORK/d/r.%n.txt" "$T/trust" dump_exit >/dev/null 2>"$WORK/err"
    { grep -q "(signal, dump 1)" "$WORK/d/r.1.txt" && grep -q "(exit, dump 2)" "$WORK/d/r.2.txt"; } 2>/dev/null || misses="$misses $i"
done
[ -z "$misses" ] && ok "a dump signalled just before exit is written, numbered before the exit report (5 of 5 runs)" \
    || bad "dump just before exit (runs:$misses)" "$WORK/err"

rm -rf "$WORK/n"; mkdir -p "$WORK/n"
env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT="$WORK/n/r.txt" "$T/trust" dumps 2 >/dev/null 2>"$WORK/err"
if grep -q "(signal, dump 1)" "$WORK/n/r.txt" 2>/dev/null && grep -q "(signal, dump 2)" "$WORK/n/r.2.txt" 2>/dev/null \
   && grep -q "(exit, dump 3)" "$WORK/n/r.3.txt" 2>/dev/null && [ "$(ls "$WORK/n" | wc -l)" = 3 ]; then
    ok "a path without %n: dumps 2 and 3 go to r.2.txt and r.3.txt, none replaced"
else bad "path without %n: $(ls "$WORK/n" | tr '\n' ' ')" "$WORK/err"; fi

rm -rf "$WORK/f"; mkdir -p "$WORK/f"
timeout 60 env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT="$WORK/f/r.txt" "$T/trust" forkreport >"$WORK/out" 2>"$WORK/err"
child=$(sed -n 's/^child \([0-9]*\)$/\1/p' "$WORK/out")
if [ -n "$child" ] && grep -q "1048576 bytes in 1 allocation still live at exit" "$WORK/f/r.txt" 2>/dev/null \
   && grep -q "2097152 bytes in 1 allocation still live at exit" "$WORK/f/r.$child.txt" 2>/dev/null \
   && ! grep -q parent_site "$WORK/f/r.$child.txt" && grep -q "allocations made: 1$" "$WORK/f/r.$child.txt"; then
    ok "a path without %p: the forked child's report goes to r.PID.txt with only its own allocations"
else bad "path without %p, fork: $(ls "$WORK/f" | tr '\n' ' ')" "$WORK/err"; fi

rm -rf "$WORK/a"; mkdir -p "$WORK/a"
env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT="$WORK/a/r.txt" "$T/trust" apidumps 40 >/dev/null 2>"$WORK/err"
n=$(ls "$WORK/a" | grep -cE '^r(\.[0-9]+)?\.txt$')
[ "$n" = 161 ] && ! has "cannot write" "$WORK/err" && [ -z "$(ls "$WORK/a" | grep tmp)" ] \
    && ok "160 concurrent API dumps from 4 threads and the exit report, one path: 161 files, no temporary collides" \
    || bad "concurrent dumps: $n files" "$WORK/err"

# A dump that cannot be written anywhere (its directory gone, stderr full)
# leaves its growth to the next: twice rather than never
rm -rf "$WORK/g"; mkdir -p "$WORK/g"
env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT="$WORK/g/r.json" GPUMEM_REPORT_FORMAT=json "$T/trust" dumplost "$WORK/g" \
    >"$WORK/out" 2>/dev/full
g=$(jq -c '[.growth[] | .count, .bytes]' "$WORK/g/r.2.json" 2>/dev/null)
if grep -q "dumplost: two dumps" "$WORK/out" && [ ! -e "$WORK/g/r.json" ] && [ "$g" = "[1,2097152,1,1048576]" ]; then
    ok "a dump lost (no directory, stderr full): the next dump's growth still lists its allocation"
else bad "dump lost, growth: $g, files: $(ls "$WORK/g" | tr '\n' ' ')" "$WORK/out"; fi

rm -rf "$WORK/s"; mkdir -p "$WORK/s"
env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT="$WORK/s/r.txt" "$T/trust" stale_tmp "$WORK/s/r.txt" >/dev/null 2>"$WORK/err"
grep -q "SUMMARY: gpumemguard" "$WORK/s/r.txt" 2>/dev/null && ! has "cannot write" "$WORK/err" \
    && ok "stale temporaries left by an earlier process with this pid: the report still lands in its file" \
    || bad "stale temporaries" "$WORK/err"

env LD_PRELOAD="$PRELOAD" "$T/trust" fd2 "$WORK/data" >/dev/null 2>&1
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
        "$T/trust" closefrom "$WORK/cf/own.dat" "$WORK/cf/r.txt" "$WORK/cf/r.2.txt" >"$WORK/out" 2>"$WORK/err"; rc=$?
    if [ $rc = 0 ] && has "closefrom: ELF files open below descriptor 512: 0" "$WORK/out" \
       && has "closefrom: pipe 5 bytes 'hello', file 0 bytes, dump while running: yes" "$WORK/out" \
       && has "gpumemguard: refused cuMemAlloc of 1.0 TiB" "$WORK/err" && grep -q "(signal, dump 2)" "$WORK/cf/r.2.txt" \
       && { [ -z "$metrics" ] || grep -q "^gpumem_refused_allocations_total" "$WORK/cf.prom"; }; then
        ok "descriptors 3..1023 closed by the program and reused for its pipe and file: nothing read from or written into them; refusal, dump${metrics:+ and metrics} still made"
    else bad "closefrom(3) in the program${metrics:+ (GPUMEM_METRICS)} (rc $rc): $(cat "$WORK/out")" "$WORK/err"; fi
done

# the symbolizer's descriptors (libdw keeps the ELF files it read open until
# the symbolizer is made anew, after a library is loaded): closed by the
# program and reused, they were closed under it then, and the numbers
# reopened as the guard's ELF files
if [ "${GMG_SANITIZER:-}" = tsan ]; then
    # as closefrom above: the report thread's warm-up may have opened them
    skip "the symbolizer's descriptors closed by the program" "TSan reports the program's close of the guard's descriptors as a race"
else
    rm -f "$WORK/symfds.dat"
    timeout 60 env LD_PRELOAD="$PRELOAD" "$T/trust" symfds "$WORK/symfds.dat" "$ROOT/$T/libgmgmod1.so" >"$WORK/out" 2>"$WORK/err"; rc=$?
    [ $rc = 0 ] && has "symfds: 32 of 32 descriptors still the program's file (two reports)" "$WORK/out" \
        && ok "the symbolizer made anew after the program closed and reused its descriptors: none of the program's closed or replaced" \
        || bad "the symbolizer's descriptors closed by the program (rc $rc): $(cat "$WORK/out")" "$WORK/err"
fi

# 8. a leak from a library unloaded since, another loaded at its address: the
#    frames keep the first library's names
guarded "$T/trust" dlclose "$ROOT/$T/libgmgmod1.so" "$ROOT/$T/libgmgmod2.so"
gone=$(grep -A2 "(795648 bytes) in 1 allocation" "$WORK/err"); live=$(grep -A2 "(568320 bytes) in 1 allocation" "$WORK/err")
if grep -q "in module_leak_inner .*(libgmgmod1.so+0x[0-9a-f]*, unloaded)" <<<"$gone" && grep -q "in module_leak .*(libgmgmod1.so+" <<<"$gone" \
   && ! grep -q "libgmgmod2\|other_" <<<"$gone" && grep -q "in other_inner .*(libgmgmod2.so+0x[0-9a-f]*)$" <<<"$live" \
   && ! grep -q "libgmgmod1\|module_leak\|unloaded" <<<"$live"; then
    ok "frames of a library unloaded with dlclose keep its names; the library loaded after it keeps its own"
else bad "frames of an unloaded library" "$WORK/err"; fi

# ---------------------------------------------- small defects

# 14.1 the dump signal before the first allocation does not kill a CUDA program;
#      a program that never touches CUDA keeps its signals
guarded "$T/trust" early_signal; rc=$?
[ $rc = 0 ] && has "survived the dump signal" "$WORK/out" && has "gpumemguard report (signal" "$WORK/err" \
    && ok "SIGUSR1 right after cuInit, before any allocation: a dump, not a death" || bad "early signal (rc $rc)" "$WORK/err"
if [ "${GMG_SANITIZER:-}" = tsan ]; then
    skip "a process that never touches CUDA" "a TSan-built guard cannot be preloaded into an uninstrumented sh"
else
    # (in braces: bash says "User defined signal 1" of a child the signal
    # killed on its own stderr, which is that death, expected here)
    { env LD_PRELOAD="$PRELOAD" sh -c 'kill -USR1 $$; echo alive' >"$WORK/out"; rc=$?; } 2>/dev/null
    [ $rc = 138 ] && ! has alive "$WORK/out" && ok "a process that never touches CUDA keeps SIGUSR1's default action" \
        || bad "non-CUDA process signals (rc $rc)" "$WORK/out"
fi

# libc's other installers of a handler, after the guard armed SIGUSR1: each
# chained as sigaction and signal are (they called libc's sigaction past the
# guard's, which lost its handler: no dump), with its own semantics, the
# same the program reads back without the guard
for spec in "signal|previous SIG_DFL, now handler, flags RESTART, mask USR1; 2 signals: dumps 2, handler calls 2, then handler" \
            "bsd_signal|previous SIG_DFL, now handler, flags RESTART, mask USR1; 2 signals: dumps 2, handler calls 2, then handler" \
            "ssignal|previous SIG_DFL, now handler, flags RESTART, mask USR1; 2 signals: dumps 2, handler calls 2, then handler" \
            "sysv_signal|previous SIG_DFL, now handler, flags RESETHAND NODEFER, mask empty; 2 signals: dumps 2, handler calls 1, then SIG_DFL" \
            "__sysv_signal|previous SIG_DFL, now handler, flags RESETHAND NODEFER, mask empty; 2 signals: dumps 2, handler calls 1, then SIG_DFL" \
            "sigset|previous SIG_DFL, now handler, flags none, mask empty; hold returned handler, calls while held 0, release returned SIG_HOLD, dump made; 2 signals: dumps 2, handler calls 2, then handler" \
            "sigignore|previous SIG_DFL, now SIG_IGN, flags none, mask empty; 2 signals: dumps 2, handler calls 0, then SIG_IGN"; do
    how=${spec%%|*}; want=${spec#*|}
    if [ "${GMG_SANITIZER:-}" = tsan ]; then
        # as for sigaction and signal (reports.sh): TSan's interceptors in the
        # program install its handlers by system call, past the guard
        skip "a SIGUSR1 handler installed with $how after arming" "TSan's runtime replaces the guard's handler by syscall"; continue
    fi
    rm -rf "$WORK/installers"; mkdir -p "$WORK/installers"
    timeout 60 env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT="$WORK/installers/d.%n.txt" "$T/trust" installers "$how" "$WORK/installers" \
        >"$WORK/out" 2>"$WORK/err"; rc=$?
    [ $rc = 0 ] && has "installers $how: $want" "$WORK/out" \
        && ok "a SIGUSR1 handler installed with $how after arming: chained, a dump per signal, $how's own semantics" \
        || bad "$how after arming (rc $rc): $(cat "$WORK/out")" "$WORK/err"
done

# what the library exports besides the driver's names: dlsym, dlclose
# (hooks/unload.c), the installers of a signal handler (report/dumpsig.c),
# the public API and NVTX's injection entry points (hooks/nvtx.c), nothing
# else (-fvisibility=hidden, base/export.h)
exports=$(nm -D --defined-only "$ROOT/$B/libgpumemguard.so" | awk '{print $3}' | grep -v '^cu[A-Z]' | LC_ALL=C sort | tr '\n' ' ')
[ "$exports" = "InitializeInjectionNvtx2 InitializeInjectionNvtxExtension __sysv_signal bsd_signal dlclose dlsym gpumemguard_dump gpumemguard_leaked_bytes gpumemguard_limit gpumemguard_live_bytes gpumemguard_mark gpumemguard_mark_release gpumemguard_parse_size gpumemguard_peak gpumemguard_peak_growth gpumemguard_peak_reset gpumemguard_peak_text gpumemguard_retained_bytes gpumemguard_since gpumemguard_since_text gpumemguard_version sigaction sigignore signal sigset ssignal sysv_signal " ] \
    && ok "exports: the driver's names, dlsym, dlclose, the eight signal installers, the public API and the two NVTX injection entry points, nothing else" \
    || bad "exports beyond the driver's names: $exports"

# 14.2 a symlink as report path: one line, no misleading errno
ln -sf "$WORK/target2" "$WORK/link2"
guarded GPUMEM_REPORT="$WORK/link2" "$T/trust" dump_exit
[ "$(grep -c "link2" "$WORK/err")" = 1 ] && ! has "Invalid argument" "$WORK/err" \
    && ok "a symlinked report path is refused in one line" || bad "symlink message" "$WORK/err"

# 14.3 an out-of-range stack depth says so
guarded GPUMEM_STACK_DEPTH=99999 "$T/trust" nulls; rc=$?
[ $rc = 2 ] && has "out of range" "$WORK/err" && ok "GPUMEM_STACK_DEPTH=99999 is refused as out of range" \
    || bad "stack depth range message" "$WORK/err"

# 14.5 a refusal is not labelled an error
guarded GPUMEM_LIMIT=4M "$T/apitest" direct limit 4194304
has "gpumemguard: refused cuMemAlloc of 1 byte" "$WORK/err" && ! grep -q "error: refused" "$WORK/err" \
    && ok "a refusal reads 'gpumemguard: refused ...', not 'error:'" || bad "refusal label" "$WORK/err"

# 14.7 a driver whose cuDevicePrimaryCtxGetState cannot answer: reset still reclaims
guarded GPUSIM_NO_PRIMARY_STATE=1 "$T/apitest" direct reset
if has "guard live 131072 sim live 131072" "$WORK/out" && grep -A3 "Reclaimed by context teardown" "$WORK/err" | grep -q leak_before_reset; then
    ok "without cuDevicePrimaryCtxGetState, a primary context reset still reclaims (context remembered from retain)"
else bad "reset without GetState" "$WORK/err"; fi

# review findings: a fork while threads install the handler; SIGPIPE; wrappers
if [ "${GMG_SANITIZER:-}" = tsan ]; then
    skip "fork during handler installation" "TSan installs the program's handlers itself and defers them in a forked child"
else
    timeout 120 env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT=/dev/null "$T/trust" forksig 200 >"$WORK/out" 2>"$WORK/err"; rc=$?
    [ $rc = 0 ] && has "forksig: 200 forks, 200 children took their signal" "$WORK/out" \
        && ok "200 forks while 3 threads install SIGUSR1 handlers: every child installs and takes its own" \
        || bad "fork during handler installation (rc $rc)" "$WORK/out"
fi
env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT=stdout "$T/trust" dumps 0 2>"$WORK/err" | (exec 0<&-); rc=${PIPESTATUS[0]}
env LD_PRELOAD="$PRELOAD" "$T/trust" dumps 0 2>&1 >/dev/null | (exec 0<&-); rc2=${PIPESTATUS[0]}
[ $rc = 0 ] && [ $rc2 = 0 ] && has "cannot write report to stdout" "$WORK/err" \
    && ok "a report to a pipe whose reader has gone: no SIGPIPE death, the report falls back to stderr" \
    || bad "SIGPIPE (status $rc, $rc2)" "$WORK/err"
if [ "${GMG_SANITIZER:-}" != tsan ]; then
    rm -rf "$WORK/w"; mkdir -p "$WORK/w"
    env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT="$WORK/w/r.txt" sh -c "\"$ROOT/$T/trust\" dump_exit" >/dev/null 2>&1
    [ "$(ls "$WORK/w" | tr '\n' ' ')" = "r.2.txt r.txt " ] \
        && ok "a guarded wrapper (sh -c) around the program does not move its reports to r.PID.txt" \
        || bad "reports behind a wrapper: $(ls "$WORK/w" | tr '\n' ' ')"
fi

# ------------------------ a simulated driver that disagrees
guarded GPUSIM_FAIL="cuMemAlloc_v2:7,cuMemFree_v2:5,cuMemCreate:3,cuMemRelease:2,cuArrayCreate_v2:4,cuMemAllocPitch_v2:2,cuMemAllocManaged:3,cuMemAllocAsync:6,cuMemFreeAsync:4" \
    "$T/trust" injected
if grep -qE "injected: [1-9][0-9]* failed calls, guard off the driver 0 times, guard ([0-9]+) sim \1$" "$WORK/out"; then
    ok "the driver failing allocations and frees of every family: after each call the guard counts what the driver holds"
else bad "injected driver failures" "$WORK/out"; fi
# the guard out of memory for its table: the program lives on, told once;
# what it could not track stays counted, and the exit report says how much
# (uthash's default, exit(-1) inside the shard lock, hung the exit report).
# 0 and 200 calls: some shards' tables are never made; 600: every shard's
# table is made (two calls each), then no bucket array can double (200,000
# allocations: about 780 a shard, where 20,000 never needed a doubling),
# and every allocation is still tracked, on longer chains.
for ok in 0 200 600; do
    nallocs=$([ $ok = 600 ] && echo 200000 || echo 20000)
    if [ "${GMG_SANITIZER:-}" = tsan ]; then
        skip "the guard out of memory for its table" "TSan's runtime, linked into the program, has its own aligned_alloc, found before any preloaded one"
        continue
    fi
    # first of all, ahead of ASan's runtime too (which has its own aligned_alloc)
    timeout 60 env LD_PRELOAD="$T/libgmgnomem.so $PRELOAD" \
        GMGTEST_ALIGNED_OK=$ok "$T/trust" nomem $nallocs >"$WORK/out" 2>"$WORK/err"; rc=$?
    untracked=$(sed -n 's/^nomem: untracked \([0-9]*\) bytes$/\1/p' "$WORK/out")
    said=$(grep -c "out of memory for the guard's records" "$WORK/err")
    if [ $ok = 600 ]; then
        if [ $rc = 0 ] && has "nomem: 200000 allocs, 200000 frees; guard 102400000 while held; after the frees sim 0, guard 0" "$WORK/out" \
           && [ "$untracked" = 0 ] && [ "$said" = 0 ] && ! grep -q "incomplete" "$WORK/err"; then
            ok "the guard's buckets cannot double (aligned_alloc fails after $ok calls): all 200,000 allocations tracked on longer chains, exact, the report whole (e5acd81: 95,737 untracked)"
        else bad "buckets that cannot double (aligned_alloc fails after $ok calls; exit $rc)" "$WORK/out" "$WORK/err"; fi
        continue
    fi
    if [ $rc = 0 ] && has "nomem: 20000 allocs, 20000 frees; guard 10240000 while held; after the frees sim 0, guard the untracked bytes" "$WORK/out" \
       && [ "$said" = 1 ] && [ "${untracked:-0}" -gt 0 ] \
       && has "WARNING: this report is incomplete (the guard ran out of memory or room):" "$WORK/err" \
       && grep -qE "^  [0-9]+ allocations made since start-up could not be tracked: none of them is in this report; the $untracked bytes they counted against the quota stay counted\.$" "$WORK/err"; then
        ok "the guard's tables cannot be made (aligned_alloc fails after $ok calls): 20,000 allocations go on, said once, untracked bytes stay counted, and the exit report says how many ($untracked bytes)"
    else bad "the guard out of memory for its table (aligned_alloc fails after $ok calls; exit $rc)" "$WORK/out" "$WORK/err"; fi
done
if [ "${GMG_SANITIZER:-}" != tsan ]; then
    timeout 60 env LD_PRELOAD="$T/libgmgnomem.so $PRELOAD" GMGTEST_ALIGNED_OK=0 GPUMEM_REPORT_FORMAT=json \
        GPUMEM_METRICS="$WORK/nomem.prom" "$T/trust" nomem 20000 >"$WORK/out" 2>"$WORK/err"; rc=$?
    if [ $rc = 0 ] && sed -n '/^{/,$p' "$WORK/err" | jq -e '.incomplete == ["untracked"] and .untracked.allocations == 20001
            and .untracked.counted_bytes == 10240000 and .unlisted.allocations == 0 and .totals.live_allocations == 0' >/dev/null \
       && grep -q '^gpumem_untracked_allocations_total{pid="[0-9]*",exe="trust"} 20001$' "$WORK/nomem.prom"; then
        ok "JSON says the report is incomplete: \"incomplete\": [\"untracked\"], 20,000 allocations and an address range untracked, 10240000 bytes of them counted; the metrics file counts them too"
    else bad "JSON of a report the guard's out of memory made incomplete (exit $rc)" "$WORK/out" "$WORK/err"; fi
fi
# GPUMEM_EXITCODE when nothing could be tracked: a leak among untracked
# allocations fails the job (more allocations than frees the guard never
# saw); all of them freed does not
for leak in 0 1; do
    [ "${GMG_SANITIZER:-}" = tsan ] && { skip "GPUMEM_EXITCODE with untracked allocations" "as above"; continue; }
    mode=$([ $leak = 1 ] && echo nomem_leak || echo nomem)
    timeout 60 env LD_PRELOAD="$T/libgmgnomem.so $PRELOAD" GMGTEST_ALIGNED_OK=0 GPUMEM_EXITCODE=23 \
        "$T/trust" $mode 50 >"$WORK/out" 2>"$WORK/err"; rc=$?
    if [ $leak = 1 ] && [ $rc = 23 ] && has "  At least 1 of them were never freed (more than the 49 frees of pointers the guard never saw)" "$WORK/err"; then
        ok "GPUMEM_EXITCODE=23 with every allocation untracked: 50 made, 49 freed, the one leak fails the job"
    elif [ $leak = 0 ] && [ $rc = 0 ] && ! grep -q "never freed" "$WORK/err"; then
        ok "GPUMEM_EXITCODE=23 with every allocation untracked and all freed: the program's own status"
    else bad "GPUMEM_EXITCODE with untracked allocations ($mode; exit $rc)" "$WORK/out" "$WORK/err"; fi
done
# ... and family against family, as for tracked records: reserved ranges
# and mappings the guard could not track are no leaks (a range kept, a
# handle mapped and all undone: the program's own status), and the free of
# a range never stands for an allocation's (one allocation kept: 23)
for leak in 0 1; do
    [ "${GMG_SANITIZER:-}" = tsan ] && { skip "GPUMEM_EXITCODE with untracked ranges" "as above"; continue; }
    rm -f "$WORK"/rg.*
    timeout 60 env LD_PRELOAD="$T/libgmgnomem.so $PRELOAD" GMGTEST_ALIGNED_OK=0 GPUMEM_EXITCODE=23 \
        GPUMEM_REPORT="$WORK/rg" GPUMEM_REPORT_FORMAT=text,json "$T/trust" nomem_ranges $leak >"$WORK/out" 2>"$WORK/err"; rc=$?
    if [ $leak = 0 ] && [ $rc = 0 ] && has "  51 allocations made since start-up could not be tracked" "$WORK/rg.txt" \
       && has "  3 reserved address ranges or mappings could not be tracked: none of them is in this report; they hold no memory of their own and are no leaks." "$WORK/rg.txt" \
       && has "  Untracked, by API: cuMemAlloc 50, cuMemCreate 1, cuMemMap 1, cuMemAddressReserve 2." "$WORK/rg.txt" \
       && ! grep -q "never freed" "$WORK/rg.txt" \
       && jq -e '.untracked == {"allocations": 54, "counted_bytes": 2301952, "never_freed": 0, "ranges": 3,
                 "by_api": {"cuMemAlloc": 50, "cuMemCreate": 1, "cuMemMap": 1, "cuMemAddressReserve": 2}}' "$WORK/rg.json" >/dev/null; then
        ok "GPUMEM_EXITCODE=23 with untracked ranges and mappings, every allocation freed: no leak, the program's own status; the report counts them apart, by API"
    elif [ $leak = 1 ] && [ $rc = 23 ] \
       && has "  At least 1 of them were never freed (more than the 50 frees of pointers the guard never saw, ranges apart)" "$WORK/rg.txt" \
       && jq -e '.untracked.never_freed == 1 and .untracked.ranges == 3' "$WORK/rg.json" >/dev/null; then
        ok "GPUMEM_EXITCODE=23 with untracked ranges and one allocation kept: the freed range does not hide the leak"
    else bad "GPUMEM_EXITCODE with untracked ranges (leak $leak; exit $rc)" "$WORK/rg.txt" "$WORK/err"; fi
done
# ... and a leak reclaimed by a context teardown that the guard could not
# list (out of memory for its list: realloc fails there, the first of the
# guard's reallocs with stacks off) fails the job as a listed one does
if [ -n "${GMG_SANITIZER:-}" ]; then
    skip "GPUMEM_EXITCODE with a reclaimed leak not listed" "oomshim.c forwards to glibc's allocator, which a sanitizer's replaces"
else
    build liboomshim.so -shared -fPIC tests/integration/oomshim.c
    for oom in 0 1; do
        shim=$([ $oom = 1 ] && echo "$ROOT/$T/liboomshim.so" || echo "")
        timeout 60 env LD_PRELOAD="$PRELOAD $shim" OOM_FUNCS=r OOM_ONLY=1 OOM_LOG=1 GPUMEM_STACK_DEPTH=0 \
            GPUMEM_EXITCODE=23 "$T/trust" reclaimed_leak >"$WORK/out" 2>"$WORK/err"; rc=$?
        if [ $oom = 0 ] && [ $rc = 23 ] && has "4096 bytes in 1 allocation reclaimed by context teardown" "$WORK/err"; then
            ok "GPUMEM_EXITCODE=23 with a leak reclaimed by context teardown: the job fails"
        elif [ $oom = 1 ] && [ $rc = 23 ] && [ "$(grep -c '^\[shim\] fail r #1 ' "$WORK/err")" = 1 ] \
           && has "  1 allocation (4096 bytes) reclaimed by context teardown could not be listed" "$WORK/err"; then
            ok "GPUMEM_EXITCODE=23 with a reclaimed leak the guard could not list (out of memory): the job fails all the same"
        else bad "GPUMEM_EXITCODE with a reclaimed leak (out of memory $oom; exit $rc)" "$WORK/err"; fi
    done
fi
# a refusal while nothing could be tracked: the message cannot list what
# holds the bytes, and says so (it said they had been freed)
if [ "${GMG_SANITIZER:-}" != tsan ]; then
    timeout 60 env LD_PRELOAD="$T/libgmgnomem.so $PRELOAD" GMGTEST_ALIGNED_OK=0 GPUMEM_LIMIT=3M \
        "$T/trust" nomem_refuse >"$WORK/out" 2>"$WORK/err"; rc=$?
    if [ $rc = 0 ] && has "nomem_refuse: the fourth refused" "$WORK/out" \
       && has "  (none listed: 3 allocations could not be tracked (the guard ran out of memory), and 3145728 bytes of them stay counted)" "$WORK/err" \
       && ! grep -q "has been freed since" "$WORK/err"; then
        ok "a refusal with every allocation untracked: the message says the guard could not track them, not that they were freed"
    else bad "a refusal message with untracked allocations (exit $rc)" "$WORK/out" "$WORK/err"; fi
fi
# a mapping the guard could not record: its handle's bytes are not given back
# while the driver still holds them (a release while mapped)
for ok in 2 4; do
    [ "${GMG_SANITIZER:-}" = tsan ] && { skip "a mapping the guard could not record" "as above"; continue; }
    timeout 60 env LD_PRELOAD="$T/libgmgnomem.so $PRELOAD" GMGTEST_ALIGNED_OK=$ok \
        "$T/trust" nomem_vmm >"$WORK/out" 2>"$WORK/err"; rc=$?
    if [ $rc = 0 ] && has "nomem_vmm: guard never below the driver; sim 0 at the end" "$WORK/out" \
       && [ "$(grep -c "out of memory for the guard's records" "$WORK/err")" = 1 ]; then
        ok "a VMM mapping the guard could not record (aligned_alloc fails after $ok calls): never fewer bytes counted than the driver holds"
    else bad "a mapping the guard could not record (aligned_alloc fails after $ok calls; exit $rc)" "$WORK/out"; fi
done
guarded GPUSIM_DEVICES=2 GPUMEM_LIMIT=0:4M,1:8M "$T/trust" perdev
has "perdev: dev0 4MiB 0 +1 2; dev1 8MiB 0 +1 2; dev0 4194304 dev1 8388608" "$WORK/out" \
    && ok "two devices with their own limits (0:4M,1:8M): each reaches its own exactly" || bad "per-device limits on two devices" "$WORK/out"
guarded GPUSIM_DEVICES=2 GPUSIM_REUSE_CTX=1 "$T/trust" ctxreuse
has "ctxreuse: handle reused; dev0 2097152 dev1 0; sim dev0 2097152 dev1 0" "$WORK/out" \
    && ok "a destroyed context's handle handed out again for another device: allocations go to the right device" \
    || bad "reused context handle" "$WORK/out"
guarded GPUSIM_PITCH=2048 "$T/trust" pitch
r1=$(cat "$WORK/out")
guarded GPUSIM_PITCH=2048 GPUMEM_LIMIT=150K "$T/trust" pitch
if [ "$r1" = "pitch: 0, pitch 2048, guard 204800 sim 204800" ] && has "pitch: 2, pitch 2048, guard 0 sim 0" "$WORK/out"; then
    ok "a pitch of 2048 (not the guard's 512 guess): counted as granted, refused and freed when it does not fit"
else bad "pitch 2048: $r1 / $(cat "$WORK/out")"; fi
guarded GPUSIM_ROUND_LARGE=1 GPUMEM_REPORT_FORMAT=json "$T/trust" rounding
jq -e '.fragmentation[0] | .requested_bytes == 3146729 and .granted_bytes == 4195328 and .rounding_waste == 1048599' \
    "$WORK/err" >/dev/null 2>&1 && ok "a driver that rounds large requests to 2 MiB: granted bytes and rounding waste are the driver's" \
    || bad "2 MiB rounding" "$WORK/err"

# a refusal inside a library's constructor: the loader's lock is held, which
# the reporter needs to name frames. The refused call waits for its message
# no longer than 2 s; then its first line is written from the refusing
# thread, and the whole message follows once the library is loaded
timeout 60 env LD_PRELOAD="$PRELOAD" GPUMEM_LIMIT=1M "$T/trust" ctor_refuse "$ROOT/$T/libgmgctor.so" >"$WORK/out" 2>"$WORK/err"; rc=$?
short=$(grep -n "^gpumemguard: refused cuMemAlloc of 1.0 TiB .*(returning CUDA_ERROR_OUT_OF_MEMORY; the report thread is busy: this call's stack and the biggest live allocations follow when it can write them)$" "$WORK/err" | cut -d: -f1)
back=$(grep -n "^ctor: the refused call returned 2$" "$WORK/err" | cut -d: -f1)
whole=$(grep -n "^gpumemguard: refused cuMemAlloc of 1.0 TiB .*further refusals from this call site are counted, not shown)$" "$WORK/err" | cut -d: -f1)
if [ $rc = 0 ] && has "ctor_refuse: loaded in under 10 s" "$WORK/out" && [ -n "$short" ] && [ -n "$back" ] && [ -n "$whole" ] \
   && [ "$short" -lt "$back" ] && [ "$back" -lt "$whole" ] && sed -n "${whole},\$p" "$WORK/err" | grep -q " in refused_in_ctor "; then
    ok "a refusal in a library constructor (loader's lock held): the call comes back after the bounded wait, its first line written, the whole message after"
else bad "refusal with the loader's lock held (rc $rc; lines: short ${short:-none}, program ${back:-none}, whole ${whole:-none})" "$WORK/err"; fi

# a child made without fork handlers (glibc's _Fork(), a raw clone) has no
# report thread: its refused calls come back at once, each with its
# message's first line written, not after 2 s of waiting for a thread that
# is not there; the rest of their messages with its exit report. The
# parent's thread goes on explaining the parent's refusals.
for how in _Fork clone; do
    if [ "${GMG_SANITIZER:-}" = tsan ]; then
        skip "refusals in a child forked without fork handlers ($how)" "TSan sees no fork it did not make itself: to it the parent's threads live on in the child, and the child's fresh locks race with them; plain and ASan builds run it"
        continue
    fi
    timeout 60 env LD_PRELOAD="$PRELOAD" GPUMEM_LIMIT=1M "$T/trust" nohandler_fork $how >"$WORK/out" 2>"$WORK/err"; rc=$?
    line() { grep -n -F -- "$1" "$WORK/err" | head -1 | cut -d: -f1; }
    orphan="(returning CUDA_ERROR_OUT_OF_MEMORY; this process was forked without fork handlers and has no report thread: this call's stack and the biggest live allocations follow at its exit)"
    short1=$(grep -n "^gpumemguard: refused cuMemAlloc of 2.0 TiB " "$WORK/err" | grep -F -- "$orphan" | head -1 | cut -d: -f1)
    back1=$(line "child: the refused call returned 2 in under 1000 ms")
    back2=$(line "child again: the refused call returned 2 in under 1000 ms")
    short2=$(sed -n "$((${back1:-0} + 1)),\$p" "$WORK/err" | grep -c -F -- "$orphan")
    whole=$(grep -n " in refused_in_child_again " "$WORK/err" | head -1 | cut -d: -f1)
    if [ $rc = 0 ] && has "nohandler_fork: child exited 0" "$WORK/out" && [ -n "$short1" ] && [ -n "$back1" ] \
       && [ -n "$back2" ] && [ "$short1" -lt "$back1" ] && [ "$back1" -lt "$back2" ] && [ "$short2" = 1 ] \
       && [ -n "$whole" ] && [ "$whole" -gt "$back2" ] && grep -q " in refused_in_child " "$WORK/err" \
       && has "parent: the refused call returned 2 in under 10000 ms" "$WORK/err" \
       && has "parent after: the refused call returned 2 in under 10000 ms" "$WORK/err" \
       && grep -q " in refused_after_child " "$WORK/err" \
       && [ "$(grep -c "further refusals from this call site are counted, not shown)$" "$WORK/err")" = 4 ]; then
        ok "a child forked without fork handlers ($how): refused calls come back at once with their first line, the whole messages at its exit; the parent's thread still explains"
    else bad "refusals in a child forked without fork handlers ($how; rc $rc; lines: short ${short1:-none}, back ${back1:-none} ${back2:-none}, second short $short2, whole ${whole:-none})" "$WORK/err"; fi
done

# ... and a dump signal such a child gets is written at its exit, before
# its exit report, even when nothing else of the guard's ran in it first
# (the state taken over only at exit must not forget the signal)
for how in _Fork clone; do
    if [ "${GMG_SANITIZER:-}" = tsan ]; then
        skip "a dump signal in a child forked without fork handlers ($how)" "as above"
        continue
    fi
    rm -rf "$WORK/nd"; mkdir -p "$WORK/nd"
    timeout 60 env LD_PRELOAD="$PRELOAD" GPUMEM_STACK_DEPTH=0 GPUMEM_REPORT="$WORK/nd/r.%p.%n" "$T/trust" nohandler_dump $how >"$WORK/out" 2>"$WORK/err"; rc=$?
    cpid=$(sed -n 's/^nohandler_dump: child \([0-9]*\) exited 0$/\1/p' "$WORK/out")
    if [ $rc = 0 ] && [ -n "$cpid" ] && grep -q "^==$cpid== gpumemguard report (signal, dump 1)" "$WORK/nd/r.$cpid.1" 2>/dev/null \
       && grep -q "^SUMMARY: gpumemguard: 0 bytes in 0 allocations still live at exit" "$WORK/nd/r.$cpid.2" 2>/dev/null; then
        ok "a dump signal in a child forked without fork handlers ($how): written at its exit, before its exit report (clean: none of its parent's allocations is its own)"
    else bad "a dump signal in a child forked without fork handlers ($how; rc $rc; child ${cpid:-none}: $(ls "$WORK/nd" | tr '\n' ' '))" "$WORK/err"; fi
done

# a refusal's whole message written by the report thread, which then takes
# 3 s to say so (a write() preloaded beside the guard returns late; a loaded
# machine does the same, for less long): the refused call, past its 2 s
# wait, must not write the first line again after the whole message
if [ "${GMG_SANITIZER:-}" = tsan ]; then
    skip "a refusal's message written just as the wait ends" "a write() preloaded beside the guard crashes TSan-built programs, as close() does; plain and ASan builds run it"
else
    timeout 60 env LD_PRELOAD="$PRELOAD $ROOT/$T/libslowwrite.so" GPUMEM_LIMIT=1M "$T/trust" refuse_timed >"$WORK/out" 2>"$WORK/err"; rc=$?
    first=$(grep -n "^gpumemguard: refused cuMemAlloc of 5.0 TiB" "$WORK/err" | cut -d: -f1 | tr '\n' ' ')
    whole=$(grep -n "^gpumemguard: refused cuMemAlloc of 5.0 TiB .*further refusals from this call site are counted, not shown)$" "$WORK/err" | cut -d: -f1)
    back=$(grep -n "^refuse_timed: the refused call returned 2 in under 10000 ms$" "$WORK/err" | cut -d: -f1)
    if [ $rc = 0 ] && [ -n "$whole" ] && [ "$first" = "$whole " ] && [ -n "$back" ] && [ "$whole" -lt "$back" ] \
       && sed -n "${whole},\$p" "$WORK/err" | grep -q " in refused_once "; then
        ok "a refusal's message written just as the refused call's wait ends: written once, whole, before the call returns; no first line after it"
    else bad "a refusal's message at the end of the wait (rc $rc; first lines: ${first:-none}, whole ${whole:-none}, program ${back:-none})" "$WORK/err"; fi
fi

# C++ frames demangled when libstdc++ came in privately (a C host dlopens a
# C++ plugin RTLD_LOCAL, as Python loads extensions)
guarded "$T/trust" cxx "$ROOT/$T/libcxxplugin.so"
if grep -q "in plugin::Model::load_weights(std::" "$WORK/err" && ! has "_ZN6plugin" "$WORK/err"; then
    ok "C++ frames are demangled when libstdc++ is loaded RTLD_LOCAL (found with RTLD_NOLOAD)"
else bad "demangling with a private libstdc++" "$WORK/err"; fi
