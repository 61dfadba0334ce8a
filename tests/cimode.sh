# cimode.sh - the guard in CI: exit code on leaks, suppressions,
# quiet clean runs, report words, start-up path check, version. Sourced by
# run.sh (uses its helpers).

# GPUMEM_EXITCODE: the status on leaks; the program's own without
guarded GPUMEM_EXITCODE=23 "$T/dumps" dumps 0; rc=$?
[ $rc = 23 ] && has "SUMMARY: gpumemguard: 197520 bytes in 1 allocation still live at exit" "$WORK/err" \
    && ok "GPUMEM_EXITCODE=23: a leaking program exits 23, with its report" || bad "exit code on a leak (rc $rc)" "$WORK/err"
guarded GPUMEM_EXITCODE=23 "$T/apitest" direct threads; rc=$?
[ $rc = 0 ] && ok "GPUMEM_EXITCODE=23: a clean program keeps its own status 0" || bad "exit code, clean (rc $rc)" "$WORK/err"
guarded GPUMEM_EXITCODE=23 "$T/apitest" direct reset; rc=$?
[ $rc = 23 ] && ok "GPUMEM_EXITCODE=23: memory reclaimed by context teardown is a leak too" || bad "exit code, reclaimed (rc $rc)" "$WORK/err"

# GPUMEM_SUPPRESSIONS: by function, by file, by module; all suppressed -> status kept
printf '# known leak\nleak:leak_before_exit\n' >"$WORK/s1"
guarded GPUMEM_EXITCODE=23 GPUMEM_SUPPRESSIONS="$WORK/s1" "$T/dumps" dumps 0; rc=$?
if [ $rc = 0 ] && has "Suppressions used:" "$WORK/err" && grep -qE "^ +1 +197520 leak_before_exit$" "$WORK/err" \
   && has "SUMMARY: gpumemguard: 0 bytes in 0 allocations still live at exit" "$WORK/err" && ! before_peak "$WORK/err" | grep -q "allocated from:" \
   && grep -qE "^==[0-9]+== suppressed: 192.9 KiB \(197520 bytes\) in 1 live allocation \(GPUMEM_SUPPRESSIONS: \"Suppressions used\" below\)$" "$WORK/err"; then
    ok "a suppression by function: the leak leaves the list and the exit code, counted under 'Suppressions used' and in a header line under 'live:'"
else bad "suppression by function (rc $rc)" "$WORK/err"; fi
printf 'leak:*dumps/dumps.c\n' >"$WORK/s2"
if [ "${GMG_SANITIZER:-}" = tsan ]; then
    skip "a suppression by source file" "no file:line for clang-built programs (known symbolizer gap, see reports.sh)"
else
    guarded GPUMEM_EXITCODE=23 GPUMEM_SUPPRESSIONS="$WORK/s2" "$T/dumps" dumps 0; rc=$?
    [ $rc = 0 ] && has "Suppressions used:" "$WORK/err" && ok "a suppression by source file ('*' wildcard)" || bad "suppression by file (rc $rc)" "$WORK/err"
fi
printf 'leak:libgmgmod2.so\n' >"$WORK/s3"
guarded GPUMEM_EXITCODE=23 GPUMEM_SUPPRESSIONS="$WORK/s3" "$T/unloaded" "$ROOT/$T/libgmgmod1.so" "$ROOT/$T/libgmgmod2.so"; rc=$?
if [ $rc = 23 ] && grep -qE "^ +1 +568320 libgmgmod2.so$" "$WORK/err" && has "(795648 bytes) in 1 allocation" "$WORK/err" \
   && ! before_peak "$WORK/err" | grep -qF "(568320 bytes) in 1 allocation"; then
    ok "a suppression by module: that library's leak is suppressed, another's still fails the run"
else bad "suppression by module (rc $rc)" "$WORK/err"; fi
# the program's whole path, the program started by a relative one
printf 'leak:%s\n' "$(realpath "$T/dumps")" >"$WORK/s5"
guarded GPUMEM_EXITCODE=23 GPUMEM_SUPPRESSIONS="$WORK/s5" "$T/dumps" dumps 0; rc=$?
case "$T" in /*) rel=no ;; *) rel=yes ;; esac
[ $rc = 0 ] && has "Suppressions used:" "$WORK/err" \
    && ok "a suppression by the program's whole path, the program started by a relative one ($rel)" \
    || bad "suppression by the program's whole path (rc $rc)" "$WORK/err"
printf 'leak:x\nbogus line\n' >"$WORK/s4"
guarded GPUMEM_SUPPRESSIONS="$WORK/s4" "$T/nulls"; rc=$?
[ $rc = 2 ] && has "line 2" "$WORK/err" && ok "a malformed suppressions file stops the process at start-up, naming the line" \
    || bad "bad suppressions file (rc $rc)" "$WORK/err"
# a FIFO (nothing writing to it) is refused at once, never waited on; the
# command reads a pipe (--suppressions <(...)) once for every process of
# the job (here a shell first, which used to read it empty for the program)
rm -f "$WORK/s.fifo"; mkfifo "$WORK/s.fifo"
tguarded 20 GPUMEM_SUPPRESSIONS="$WORK/s.fifo" "$T/nulls"; rc=$?
[ $rc = 2 ] && has "a pipe or FIFO, not a file" "$WORK/err" && ok "a suppressions FIFO is refused at start-up, not waited on" \
    || bad "a suppressions FIFO (rc $rc)" "$WORK/err"
if [ -z "${GMG_SANITIZER:-}" ]; then
    "$B/gpumemguard" --error-exitcode 23 --suppressions <(printf 'leak:leak_before_exit\n') -- \
        sh -c 'true; exec "$0" dumps 0' "$T/dumps" >"$WORK/out" 2>"$WORK/err"; rc=$?
    if [ $rc = 0 ] && grep -qE "^ +1 +197520 leak_before_exit$" "$WORK/err" && ! ls /tmp/gpumemguard-supp-* 2>/dev/null | grep -q .; then
        ok "gpumemguard --suppressions <(...) through a shell: the program reads the pipe's text (its leak suppressed), the copy removed at the end"
    else bad "--suppressions from a pipe through a shell (rc $rc)" "$WORK/err"; fi
    # relative paths, from the directory the command ran in, for a process
    # of the job that runs in another (make -C, a test runner, cd)
    # (a directory whose name has a %, which is no escape of the report's)
    job="$WORK/job%20x"; mkdir -p "$job/sub"; printf 'leak:leak_before_exit\n' >"$job/known.supp"
    (cd "$job" && "$ROOT/$B/gpumemguard" --error-exitcode 23 --suppressions known.supp --report rel.%p.txt \
        --metrics rel.prom -- sh -c 'cd sub && exec "$0" dumps 0' "$ROOT/$T/dumps") >"$WORK/out" 2>"$WORK/err"; rc=$?
    if [ $rc = 0 ] && grep -qsE "^ +1 +197520 leak_before_exit$" "$job"/rel.*.txt && [ -s "$job/rel.prom" ] \
       && ! ls "$job/sub" | grep -q .; then
        ok "gpumemguard with relative --suppressions, --report and --metrics, the program in another directory: read and written where the command ran (a % in its name too)"
    else bad "relative paths through the command (rc $rc): $(ls -R "$job" | tr '\n' ' ')" "$WORK/err"; fi
    # a mistyped report word stays as typed through the command: refused, no file made
    (cd "$job" && "$ROOT/$B/gpumemguard" --report STDOUT -- "$ROOT/$T/nulls") >"$WORK/out" 2>"$WORK/err"; rc=$?
    [ $rc = 2 ] && has "--report 'STDOUT' (GPUMEM_REPORT) is not valid" "$WORK/err" && [ ! -e "$job/STDOUT" ] \
        && ok "gpumemguard --report STDOUT: refused as typed, not made a file's path" || bad "--report STDOUT through the command (rc $rc)" "$WORK/err"
    "$B/gpumemguard" --suppressions <(printf 'leak:x\nbogus\n') -- "$T/nulls" >"$WORK/out" 2>"$WORK/err"; rc=$?
    if [ $rc = 2 ] && grep -q "^gpumemguard: --suppressions /dev/fd/[0-9]*: line 2: 'bogus' is not" "$WORK/err"; then
        ok "gpumemguard --suppressions <(...) with a bad line: status 2, named by the path given and the line"
    else bad "--suppressions from a pipe with a bad line (rc $rc)" "$WORK/err"; fi
fi
guarded GPUMEM_EXITCODE=300 "$T/nulls"; rc=$?
[ $rc = 2 ] && has "GPUMEM_EXITCODE='300' is not valid" "$WORK/err" && ok "GPUMEM_EXITCODE=300 is refused at start-up" \
    || bad "bad exit code value (rc $rc)" "$WORK/err"

# a clean run is quiet: the SUMMARY line alone, nothing at GPUMEM_LOG=quiet
guarded "$T/apitest" direct threads
[ "$(cat "$WORK/err")" = "SUMMARY: gpumemguard: 0 bytes in 0 allocations still live at exit" ] \
    && ok "a clean run prints the SUMMARY line alone" || bad "clean run output" "$WORK/err"
guarded GPUMEM_LOG=quiet "$T/apitest" direct threads
[ ! -s "$WORK/err" ] && ok "a clean run at GPUMEM_LOG=quiet prints nothing" || bad "quiet clean run" "$WORK/err"
guarded GPUMEM_LOG=quiet GPUMEM_REPORT_FORMAT=json,html "$T/apitest" direct threads
[ ! -s "$WORK/err" ] && ok "a clean run at GPUMEM_LOG=quiet prints nothing in JSON or HTML either" || bad "quiet clean run in JSON and HTML" "$WORK/err"

# report words: stdout and none
guarded GPUMEM_REPORT=stdout "$T/dumps" dump_exit
has "SUMMARY: gpumemguard: 197520 bytes" "$WORK/out" && ! has "SUMMARY" "$WORK/err" \
    && ok "GPUMEM_REPORT=stdout writes reports to standard output" || bad "GPUMEM_REPORT=stdout" "$WORK/out"
guarded GPUMEM_REPORT=none "$T/dumps" dump_exit
! has "SUMMARY" "$WORK/err" && ! has "SUMMARY" "$WORK/out" && [ ! -e none ] \
    && ok "GPUMEM_REPORT=none writes no report" || bad "GPUMEM_REPORT=none" "$WORK/err"
# a report word in another case, '-', or a format named twice: refused at
# start-up, never taken for a file's name (STDOUT, -) or one file for two
# formats (json,json wrote r.PID without its extension)
words_ok=1
for setting in GPUMEM_REPORT=STDOUT GPUMEM_REPORT=None GPUMEM_REPORT=- GPUMEM_REPORT_FORMAT=json,json; do
    (cd "$WORK" && env LD_PRELOAD="$PRELOAD" "$setting" "$ROOT/$T/nulls" >"$WORK/out" 2>"$WORK/err"); rc=$?
    if [ $rc != 2 ] || ! has "${setting%%=*}='${setting#*=}' is not valid" "$WORK/err" || [ -e "$WORK/${setting#*=}" ]; then
        words_ok=0; echo "$setting: rc $rc" >>"$WORK/words.err"; cat "$WORK/err" >>"$WORK/words.err"
    fi
done
[ $words_ok = 1 ] && ok "GPUMEM_REPORT=STDOUT, None or '-', GPUMEM_REPORT_FORMAT=json,json: refused at start-up, no file made" \
    || bad "report words mistyped" "$WORK/words.err"
# none: no report is even made (a walk of every record), but for GPUMEM_EXITCODE's leaks
guarded GPUMEM_REPORT=none GPUMEM_LOG=debug "$T/dumps" dumps 1
[ "$(grep -c "no report made: GPUMEM_REPORT=none" "$WORK/err")" -ge 2 ] && ! has "SUMMARY" "$WORK/err" \
    && ok "GPUMEM_REPORT=none makes no report at the dump signal or at exit" || bad "GPUMEM_REPORT=none still makes reports" "$WORK/err"
guarded GPUMEM_REPORT=none GPUMEM_EXITCODE=23 GPUMEM_LOG=debug "$T/dumps" dump_exit; rc=$?
[ $rc = 23 ] && ! has "SUMMARY" "$WORK/err" && ! has "SUMMARY" "$WORK/out" \
    && ok "GPUMEM_REPORT=none with GPUMEM_EXITCODE=23: no report written, the leak still exits 23" \
    || bad "GPUMEM_REPORT=none with GPUMEM_EXITCODE (exit $rc)" "$WORK/err"

# a report directory that does not exist is said at start-up
guarded GPUMEM_REPORT="$WORK/no/such/dir/r.txt" "$T/nulls"
head -1 "$WORK/err" | grep -q "directory $WORK/no/such/dir does not exist" \
    && ok "a report path whose directory does not exist is reported at start-up" || bad "report dir check" "$WORK/err"

# the refusal starts with the refused call and its own stack
guarded GPUMEM_LIMIT=64M "$T/released_mapped" vmm_bypass
grep -A2 "refused cuMemCreate of 32.0 MiB (33554432 bytes) on device 0" "$WORK/err" | grep -q "in vmm_bypass " \
    && ok "a refusal message names the refused call, its size as people read it, and its own stack" \
    || bad "refusal message" "$WORK/err"

# the version in every report
guarded GPUMEM_REPORT_FORMAT=json "$T/dumps" dump_exit
jq -e '.version == "0.3.0"' "$WORK/err" >/dev/null 2>&1 && guarded "$T/dumps" dump_exit && has "[gpumemguard 0.3.0]" "$WORK/err" \
    && ok "reports name the guard's version (text header, JSON 'version')" || bad "version in reports" "$WORK/err"

# the README's line for one's own program on the simulated driver builds and runs
cat >"$WORK/myprog.c" <<'CEOF'
#include <cuda.h>
#include <stdio.h>
int main(void)
{
    CUdevice d; CUcontext c; CUdeviceptr p; const char *name = "?";
    cuInit(0); cuDeviceGet(&d, 0); cuDevicePrimaryCtxRetain(&c, d); cuCtxSetCurrent(c);
    cuGetErrorName(cuMemAlloc(&p, 3 << 20), &name);
    printf("cuMemAlloc: %s\n", name);
    return 0;
}
CEOF
if $CC $SAN_FLAGS -I"$CUDA_INC" -o "$WORK/myprog" "$WORK/myprog.c" -L"$B/sim" -l:libcuda.so.1 2>"$WORK/err"; then
    guarded GPUMEM_LIMIT=2M "$WORK/myprog"
    has "cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY" "$WORK/out" && ok "an ordinary program (cuGetErrorName too) builds against the simulated driver as the README says" \
        || bad "own program on the simulator" "$WORK/out"
else bad "own program does not link against the simulated driver" "$WORK/err"; fi

# settings of SPEC §3 this version does not implement are refused, never ignored
for spec in GPUMEM_PYTHON=on GPUMEM_METRICS_INTERVAL=0 GPUMEM_METRICS=; do
    guarded "$spec" "$T/nulls"; rc=$?
    [ $rc = 2 ] && has "${spec%%=*}='${spec#*=}' is not valid" "$WORK/err" && ok "$spec is refused at start-up, not silently ignored" \
        || bad "$spec (rc $rc)" "$WORK/err"
done

# whole numbers with white space before them (strtol would skip it) are refused too
bad_ws=""
for name in GPUMEM_METRICS_INTERVAL GPUMEM_STACK_DEPTH GPUMEM_EXITCODE; do
    for v in $'\t1' $'\n1' $'\v1' ' 1'; do
        guarded "$name=$v" "$T/nulls"; rc=$?
        [ $rc = 2 ] && has "$name=" "$WORK/err" || bad_ws="$bad_ws $name=$(printf %q "$v")(rc $rc)"
    done
done
[ -z "$bad_ws" ] && ok "GPUMEM_METRICS_INTERVAL, GPUMEM_STACK_DEPTH, GPUMEM_EXITCODE with a tab, newline, vertical tab or blank before the number: refused" \
    || bad "white space before a number accepted:$bad_ws" "$WORK/err"

# a mistyped setting stops the process, naming the nearest one
guarded GPUMEM_LIMT=4G "$T/nulls"; rc=$?
[ $rc = 2 ] && has "GPUMEM_LIMT is not a setting of the guard; did you mean GPUMEM_LIMIT?" "$WORK/err" && ! has "nulls:" "$WORK/out" \
    && ok "GPUMEM_LIMT=4G stops the process at start-up: 'did you mean GPUMEM_LIMIT?'" || bad "mistyped setting (rc $rc)" "$WORK/err"
# the rule is the SPEC's (a mistyped name must not silently mean "not set"),
# for any GPUMEM_* name: the message names it and the setting most likely
# meant, or lists them; the README and the man page say so, for every name
miss=""
for spec in "GPUMEM_VERBOSE|did you mean GPUMEM_LOG?" "GPUMEM_limit|did you mean GPUMEM_LIMIT?" \
            "GPUMEM_REPORT_FILE|did you mean GPUMEM_REPORT?" "GPUMEM_FORMAT|did you mean GPUMEM_REPORT_FORMAT?" \
            "GPUMEM_SIG|did you mean GPUMEM_SIGNAL?" "GPUMEM_FOO|the settings are GPUMEM_LIMIT, GPUMEM_ON_LIMIT" \
            "gpumem_limit|did you mean GPUMEM_LIMIT?" "Gpumem_Report|did you mean GPUMEM_REPORT?"; do
    name=${spec%%|*}; want=${spec#*|}
    guarded "$name=1" "$T/nulls"; rc=$?
    [ $rc = 2 ] && has "$name is not a setting of the guard; $want" "$WORK/err" && has "never ignored" "$WORK/err" \
        && ! has "nulls:" "$WORK/out" || miss="$miss [$name: rc $rc]"
done
guarded GPUMEM_VERBOSE=1 "$T/replay" tests/data/cudart-13.0-getprocaddress.txt; rc=$?   # no CUDA in it
[ $rc = 2 ] && has "GPUMEM_VERBOSE is not a setting" "$WORK/err" && [ ! -s "$WORK/out" ] || miss="$miss [not a CUDA program: rc $rc]"
for n in $(sed -n '/known\[\] = {/,/};/p' src/base/config.c | grep -o 'GPUMEM_[A-Z_]*'); do
    grep -q "^| \`$n\` |" README.md || miss="$miss [README: no row for $n]"
    grep -q "^\.B $n\$" docs/gpumemguard.1 || miss="$miss [man page: $n not under ENVIRONMENT]"
done
grep -qF "GPUMEM_VERBOSE is not a setting of the guard" README.md || miss="$miss [README: the rule]"
grep -qF "GPUMEM_VERBOSE is not a setting of the guard" docs/gpumemguard.1 || miss="$miss [man page: the rule]"
[ -z "$miss" ] && ok "any GPUMEM_* name that is no setting (gpumem_limit too) stops every process (status 2), naming the setting it most likely meant (GPUMEM_VERBOSE: GPUMEM_LOG) or listing them; README and man page list every setting and say so" \
    || bad "unknown GPUMEM_* names:$miss" "$WORK/err"
guarded GPUMEM_EXITCODE=abc "$T/nulls"; rc=$?
[ $rc = 2 ] && has "GPUMEM_EXITCODE='abc' is not valid" "$WORK/err" && ok "GPUMEM_EXITCODE=abc is refused" || bad "GPUMEM_EXITCODE=abc (rc $rc)" "$WORK/err"

# GPUMEM_METRICS: a Prometheus text file, rewritten every interval and at exit
rm -f "$WORK/m.prom"
# (the program holds its leak until its input ends: the file is seen while it runs, however slow the machine)
rm -f "$WORK/hold.fifo"; mkfifo "$WORK/hold.fifo"
env LD_PRELOAD="$PRELOAD" GPUMEM_METRICS="$WORK/m.prom" GPUMEM_METRICS_INTERVAL=1 "$T/dumps" hold <"$WORK/hold.fifo" >"$WORK/out" 2>"$WORK/err" &
mpid=$!
exec 7>"$WORK/hold.fifo"
mid=0
for _ in $(seq 200); do
    if grep -q '^gpumem_used_bytes{device="0",pid="[0-9]*",exe="dumps",host="[^"]*",pidns="[0-9]*"} 197520$' "$WORK/m.prom" 2>/dev/null; then
        kill -0 $mpid 2>/dev/null && mid=1
        break
    fi
    sleep 0.1
done
exec 7>&-
wait $mpid
promok=1
if command -v promtool >/dev/null 2>&1; then promtool check metrics <"$WORK/m.prom" >"$WORK/prom" 2>&1 || promok=0; fi
if [ "$mid" = 1 ] && [ $promok = 1 ] && [ "$(stat -c %a "$WORK/m.prom")" = 644 ] && [ -z "$(ls "$WORK" | grep 'm.prom.tmp')" ] \
   && grep -q '^# TYPE gpumem_allocations_total counter$' "$WORK/m.prom" \
   && grep -q '^gpumem_allocations_total{device="0",pid="[0-9]*",exe="dumps",host="[^"]*",pidns="[0-9]*"} 1$' "$WORK/m.prom" \
   && grep -q '^gpumem_live_allocations{device="0",pid="[0-9]*",exe="dumps",host="[^"]*",pidns="[0-9]*"} 1$' "$WORK/m.prom" \
   && grep -q '^gpumem_untracked_allocations_total{pid="[0-9]*",exe="dumps",host="[^"]*",pidns="[0-9]*"} 0$' "$WORK/m.prom" \
   && grep -q '^gpumem_site_bytes{device="0",pid="[0-9]*",exe="dumps",host="[^"]*",pidns="[0-9]*",rank="1",site="leak_before_exit[^"]*"} 197520$' "$WORK/m.prom"; then
    ok "GPUMEM_METRICS: written while running and at exit, values as in the report, top site labelled$(command -v promtool >/dev/null && echo ', promtool accepts it')"
else bad "metrics file (mid-run $mid, promtool $promok)" "$WORK/m.prom"; fi
# a directory that exists (start-up takes it) where no file can be made:
# each write fails, said once, the program unharmed (a directory that does
# not exist is a bad value, stopped at start-up: run.sh's config errors)
guarded GPUMEM_METRICS=/proc/gmg-m.prom "$T/dumps" dumps 0; rc=$?
[ $rc = 0 ] && [ "$(grep -c "cannot write GPUMEM_METRICS" "$WORK/err")" = 1 ] \
    && ok "a metrics file that cannot be written: said once, the program unharmed" || bad "metrics path unwritable (rc $rc)" "$WORK/err"
rm -f "$WORK/m2.prom"
tguarded 60 GPUMEM_METRICS="$WORK/m2.prom" GPUMEM_REPORT=none "$T/fork_report"; rc=$?
child=$(sed -n 's/^child \([0-9]*\)$/\1/p' "$WORK/out")
if [ $rc = 0 ] && [ -n "$child" ] && grep -q 'gpumem_used_bytes{device="0",pid="[0-9]*",exe="fork_report",host="[^"]*",pidns="[0-9]*"} 1048576$' "$WORK/m2.prom" \
   && ! grep -q "pid=\"$child\"" "$WORK/m2.prom"; then
    ok "a forked child does not overwrite its parent's metrics file"
else bad "metrics and fork (exit $rc)" "$WORK/m2.prom"; fi
