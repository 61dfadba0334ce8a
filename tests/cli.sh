# cli.sh - the gpumemguard command (SPEC §8), `make install`/`uninstall`, the
# man page, and running libgpumemguard.so itself. Sourced by run.sh (uses its
# helpers and $B, $T, $ROOT, $WORK, $CC, $SAN_FLAGS, $CUDA_INC).
#
# Under a sanitizer only the tests that exec nothing run (--help, --version,
# refused options): the command preloads libgpumemguard.so alone, which a
# sanitized library cannot be (ASan wants its runtime first; TSan's library
# fails in the uninstrumented sh).

GMG=$B/gpumemguard
GMG_VERSION=$(sed -n 's/^#define GPUMEMGUARD_VERSION "\(.*\)"/\1/p' include/gpumemguard.h)

# cli ARGS...: run the command; stdout in $WORK/out, stderr in $WORK/err
cli() { "$GMG" "$@" >"$WORK/out" 2>"$WORK/err"; }

# ------------------------------------------------------------ pure text
cli --version; rc=$?
[ $rc = 0 ] && [ "$(cat "$WORK/out")" = "gpumemguard $GMG_VERSION" ] \
    && ok "gpumemguard --version prints 'gpumemguard $GMG_VERSION'" || bad "--version (rc $rc)" "$WORK/out"

cli --help; rc=$?
miss=""
for o in limit:GPUMEM_LIMIT on-limit:GPUMEM_ON_LIMIT report:GPUMEM_REPORT format:GPUMEM_REPORT_FORMAT \
         stack-depth:GPUMEM_STACK_DEPTH signal:GPUMEM_SIGNAL suppressions:GPUMEM_SUPPRESSIONS \
         error-exitcode:GPUMEM_EXITCODE metrics:GPUMEM_METRICS group:GPUMEM_GROUP log:GPUMEM_LOG; do
    grep -E -q -- "--${o%%:*} [A-Z]+ +${o#*:} " "$WORK/out" || miss="$miss --${o%%:*}"
done
has "dump PID" "$WORK/out" || miss="$miss [dump PID]"
has "gpumemguard --limit 4G --error-exitcode 23 -- ./app" "$WORK/out" || miss="$miss [example]"
has "--version" "$WORK/out" || miss="$miss --version"
if [ $rc = 0 ] && [ -z "$miss" ]; then
    ok "gpumemguard --help lists every option with its variable, dump PID, and examples"
else bad "--help (rc $rc):$miss" "$WORK/out"; fi

# text that cannot be written is never a success: status 1 and a message
if [ -w /dev/full ]; then
    "$GMG" --help >/dev/full 2>"$WORK/err"; r1=$?
    "$GMG" --version >/dev/full 2>>"$WORK/err"; r2=$?
    [ $r1 = 1 ] && [ $r2 = 1 ] && [ "$(grep -c "cannot write to standard output" "$WORK/err")" = 2 ] \
        && ok "gpumemguard --help and --version to a full disk: status 1 and a message, never 0 with the text lost" \
        || bad "--help/--version write errors (rc $r1, $r2)" "$WORK/err"
else skip "--help to a full disk" "no /dev/full"; fi

# refused SPEC ("MESSAGE|ARGS"): gpumemguard ARGS exits 2 saying MESSAGE
refused() {
    local want=${1%%|*} args=${1#*|} rc
    cli $args; rc=$?
    if [ $rc = 2 ] && has "$want" "$WORK/err"; then
        ok "gpumemguard ${args:-(no arguments)}: status 2, '$want'"
    else bad "gpumemguard ${args:-(no arguments)}: rc $rc" "$WORK/err"; fi
}
# refused before anything runs: status 2 and a message naming the problem
for spec in "unknown option '--limt'|--limt 4G true" "missing PROGRAM|--limit 4G" "missing PROGRAM|" \
            "'--limit' needs a value|--limit" "unknown option '-x'|-x true" \
            "--error-exitcode '256' (GPUMEM_EXITCODE) is not a whole number from 0 to 255|--error-exitcode 256 true" \
            "'x1' (GPUMEM_EXITCODE) is not a whole number|--error-exitcode=x1 true" "dump: missing PID|dump" \
            "'abc' is not a process id|dump abc" "has no meaning there|--limit 1G dump 1" \
            "'--report' needs a value|--report -- true" "'--report' needs a value|--report --limit 4G -- true" \
            "'--limit' needs a value|--limit -- true" "'--group' needs a value|--group -- true" \
            "'--signal' needs a value|dump --signal -- 1" "'--tensors' takes no value|--tensors=1 true" \
            "--metrics-interval without --metrics|--metrics-interval 5 true"; do
    refused "$spec"
done
# refused by the library in the program, as the option was typed
if [ "${GMG_SANITIZER:-}" = tsan ]; then
    skip "a bad % escape in --report or --metrics, named as typed" "TSan: the instrumented library cannot run in an uninstrumented program"
else
for spec in "--report 'run.%x' (GPUMEM_REPORT) is not valid: unknown % escape '%x'|--report run.%x true" \
            "--report 'run%' (GPUMEM_REPORT) is not valid: a % at the end|--report run% true" \
            "--metrics 'm.%q' (GPUMEM_METRICS) is not valid: unknown % escape '%q'|--metrics m.%q true"; do
    refused "$spec"
done
fi

if [ -n "${GMG_SANITIZER:-}" ]; then
    skip "gpumemguard running programs, dump, install, running the library itself" \
         "$GMG_SANITIZER build: the command preloads the guard alone"
else
# --------------------------------------------------- the library itself
"$B/libgpumemguard.so" >"$WORK/out" 2>"$WORK/err"; rc=$?
if [ $rc = 0 ] && has "libgpumemguard.so $GMG_VERSION - GPU memory guard for CUDA programs" "$WORK/out" \
   && has "usage: LD_PRELOAD=/path/to/libgpumemguard.so PROGRAM, or: gpumemguard [OPTIONS] -- PROGRAM" "$WORK/out"; then
    ok "running libgpumemguard.so itself prints its version and usage, status 0"
else bad "running the library (rc $rc)" "$WORK/out"; fi

# ------------------------------------------------- options reach the library
cli --limit 4M "$T/apitest" direct limit 4194304; rc=$?
if [ $rc = 0 ] && has "LIMIT OK" "$WORK/out" \
   && grep -q "refused cuMemAlloc of 1 byte.* on device 0: GPUMEM_LIMIT is .*4194304 bytes" "$WORK/err"; then
    ok "gpumemguard --limit 4M: the library holds the program to 4194304 bytes"
else bad "--limit 4M (rc $rc)" "$WORK/out"; fi
cli --limit=8M --log=quiet -- "$T/apitest" direct info
has "free 8388608 total 8388608 devtotal 8388608" "$WORK/out" \
    && ok "gpumemguard --limit=8M -- PROGRAM: the --opt=VALUE form and '--' work" || bad "--opt=VALUE" "$WORK/out"
cli --report "$WORK/r.json" --format json --stack-depth 4 "$T/apitest" direct families; rc=$?
if [ $rc = 0 ] && [ -s "$WORK/r.json" ] && ! has "SUMMARY" "$WORK/err" \
   && { ! command -v jq >/dev/null 2>&1 || jq -e '.trigger == "exit" and .version == "'"$GMG_VERSION"'"' "$WORK/r.json" >/dev/null; }; then
    ok "gpumemguard --report FILE --format json: the exit report is JSON in FILE, nothing on stderr"
else bad "--report/--format (rc $rc)" "$WORK/err"; fi
cli --on-limit explode "$T/apitest" direct info; rc=$?
[ $rc = 2 ] && has "--on-limit 'explode' (GPUMEM_ON_LIMIT) is not valid" "$WORK/err" \
    && ok "a bad value is the library's to refuse: --on-limit explode stops the program, status 2" \
    || bad "--on-limit explode (rc $rc)" "$WORK/err"
# an option whose variable's name begins another's (GPUMEM_REPORT_FORMAT, GPUMEM_REPORT) is named as typed
cli --format json --report "$WORK/r%" "$T/apitest" direct info; rc=$?
[ $rc = 2 ] && has "--report '$WORK/r%' (GPUMEM_REPORT) is not valid" "$WORK/err" \
    && ok "a bad --report after --format is named as the option typed, not as GPUMEM_REPORT" \
    || bad "--format then a bad --report (rc $rc)" "$WORK/err"

# ------------------------------------------------------------ exit status
cli sh -c 'exit 7'; rc=$?
[ $rc = 7 ] && ok "the program's exit status is the command's (7)" || bad "exit status: $rc, not 7" "$WORK/err"
# started with SIGCHLD ignored (a launcher's, kept across exec): the command
# still waits for the program, and the program is given SIGCHLD ignored
ignchld() { timeout -k 1 20 python3 -c 'import os, signal, sys; signal.signal(signal.SIGCHLD, signal.SIG_IGN); os.execv(sys.argv[1], sys.argv[1:])' "$@"; }
ignchld "$GMG" --report none -- grep "^SigIgn:" /proc/self/status >"$WORK/out" 2>"$WORK/err"
ign=$(sed -n 's/^SigIgn:[[:space:]]*//p' "$WORK/out")
ignchld "$GMG" --report none -- sh -c 'exit 3' >"$WORK/out" 2>"$WORK/err"; rc=$?
if [ $rc = 3 ] && [ -n "$ign" ] && [ $(( 0x$ign & 0x10000 )) != 0 ]; then
    ok "the command started with SIGCHLD ignored: the program's exit status (3) at once, and SIGCHLD still ignored in the program"
else bad "the command with SIGCHLD ignored: rc $rc (124/137: it waited for ever), SigIgn $ign" "$WORK/err"; fi
# a shell shows 128+N for a death by signal N too: ask a caller that tells them apart
rc=$(python3 -c 'import subprocess, sys; print(subprocess.run(sys.argv[1:]).returncode)' "$GMG" sh -c 'kill -TERM $$' 2>/dev/null)
[ "$rc" = 143 ] && ok "a program killed by SIGTERM: the command exits 143 (128+15); it is not killed itself" \
    || bad "signal death: $rc, not 143" "$WORK/err"
# a signal sent to the command goes on to the program
"$GMG" sleep 30 2>"$WORK/err" & w=$!
for _ in $(seq 100); do [ -n "$(cat "/proc/$w/task/$w/children" 2>/dev/null)" ] && break; sleep 0.05; done
prog=$(cat "/proc/$w/task/$w/children" 2>/dev/null | tr -d ' ')
kill -TERM "$w"; wait "$w"; rc=$?
if [ $rc = 143 ] && [ -n "$prog" ] && ! kill -0 "$prog" 2>/dev/null; then
    ok "SIGTERM sent to the command reaches the program: both gone, status 143"
else bad "SIGTERM to the command (rc $rc, program ${prog:-none})" "$WORK/err"; kill "$prog" 2>/dev/null; fi
cli "$WORK/no-such-program"; rc=$?
[ $rc = 127 ] && has "cannot run '$WORK/no-such-program': No such file or directory" "$WORK/err" \
    && ok "a program that does not exist: status 127 and why" || bad "missing program (rc $rc)" "$WORK/err"
printf '#!/no/such/interpreter -x\necho hi\n' >"$WORK/badinterp"; chmod 0755 "$WORK/badinterp"
cli "$WORK/badinterp"; rc=$?
[ $rc = 126 ] && has "cannot run '$WORK/badinterp': its interpreter '/no/such/interpreter' (#!): bad interpreter" "$WORK/err" \
    && ok "a script whose #! interpreter is missing: status 126, the interpreter named (not 'No such file' for a file that is there)" \
    || bad "a script with a missing interpreter (rc $rc)" "$WORK/err"
printf 'not a program\n' >"$WORK/notexec"; chmod 0644 "$WORK/notexec"
cli "$WORK/notexec"; rc=$?
[ $rc = 126 ] && has "Permission denied" "$WORK/err" \
    && ok "a program that cannot be executed: status 126 and why" || bad "unexecutable program (rc $rc)" "$WORK/err"
mkdir -p "$WORK/adir"
cli "$WORK/adir"; rc=$?
[ $rc = 126 ] && has "cannot run '$WORK/adir': it is a directory" "$WORK/err" \
    && ok "a directory named as the program: status 126, 'it is a directory' (not 'Permission denied')" \
    || bad "a directory as the program (rc $rc)" "$WORK/err"

# ------------------------------------------------------- LD_PRELOAD kept
echo 'void gmg_cli_noop(void) {}' >"$WORK/noop.c"
if $CC -shared -fPIC -o "$WORK/noop.so" "$WORK/noop.c"; then
    LD_PRELOAD="$WORK/noop.so" "$GMG" sh -c 'echo "$LD_PRELOAD"; cat /proc/$$/maps' >"$WORK/out" 2>"$WORK/err"
    lib=$(realpath "$B/libgpumemguard.so")
    if [ "$(head -1 "$WORK/out")" = "$lib:$WORK/noop.so" ] && has "/noop.so" "$WORK/out" \
       && has "$lib" "$WORK/out" && ! has "cannot be preloaded" "$WORK/err"; then
        ok "the user's LD_PRELOAD is kept: the guard first, then the user's library, both loaded"
    else bad "LD_PRELOAD kept" "$WORK/out"; fi
else bad "building a do-nothing library for LD_PRELOAD"; fi

# ------------------------------------------------------------------ dump
build idle tests/integration/idle.c -L"$B/sim" -l:libcuda.so.1
# idle_run NAME OPTIONS...: a guarded idle program in the background ($IDLE)
idle_run() {
    local n=$1; shift
    rm -f "$WORK/$n.ready" "$WORK/$n.done"
    "$GMG" "$@" -- "$T/idle" "$WORK/$n.ready" "$WORK/$n.done" 20 >"$WORK/$n.out" 2>"$WORK/$n.err" &
    IDLE=$!
    for _ in $(seq 200); do [ -e "$WORK/$n.ready" ] && return 0; kill -0 $IDLE 2>/dev/null || return 1; sleep 0.05; done
    return 1
}
idle_stop() { touch "$WORK/$1.done"; wait "$IDLE"; }
# wait_file PATH TEXT: up to 10 s for PATH to contain TEXT
wait_file() { for _ in $(seq 200); do [ -f "$1" ] && has "$2" "$1" && return 0; sleep 0.05; done; return 1; }

mkdir -p "$WORK/dumps"
if idle_run idle1 --report "$WORK/dumps/d.%n"; then
    cli dump "$IDLE"; rc=$?
    prog=$(cat "/proc/$IDLE/task/$IDLE/children" 2>/dev/null | tr -d ' ')
    if [ $rc = 0 ] && has "process $IDLE is gpumemguard running process $prog: asking that one" "$WORK/out" \
       && has "sent SIGUSR1 to process $prog; its report is written: $WORK/dumps/d.1" "$WORK/out" \
       && has "gpumemguard report (signal, dump 1)" "$WORK/dumps/d.1" && has "idle_site" "$WORK/dumps/d.1" \
       && has "1048576" "$WORK/dumps/d.1"; then
        ok "gpumemguard dump PID (the command's or the program's): the guarded program writes a report (its live 1 MiB from idle_site) and runs on"
    else bad "dump PID (rc $rc)" "$WORK/out"; fi
    kill -USR1 "$IDLE"
    if wait_file "$WORK/dumps/d.2" "gpumemguard report (signal, dump 2)"; then
        ok "kill -USR1 of the command: passed on to the program, which dumps"
    else bad "SIGUSR1 to the command: no second dump" "$WORK/idle1.err"; fi
    idle_stop idle1; rc=$?
    [ $rc = 0 ] || bad "the dumped program exited $rc (3: it never saw its done file)" "$WORK/idle1.err"
else bad "dump: the idle program did not start" "$WORK/idle1.err"; idle_stop idle1; fi

# a program that keeps the dump signal blocked, and ends 2 s later: the
# command says it ended, at once, and fails
rm -f "$WORK/blk.ready"
env LD_PRELOAD="$PRELOAD" IDLE_BLOCK_DUMP=1 GPUMEM_REPORT=none "$T/idle" "$WORK/blk.ready" "$WORK/blk.never" 2 >/dev/null 2>&1 &
blk=$!
for _ in $(seq 200); do [ -e "$WORK/blk.ready" ] && break; sleep 0.05; done
t0=$(date +%s%N); cli dump "$blk"; rc=$?; t=$(( ($(date +%s%N) - t0) / 1000000 ))
wait "$blk" 2>/dev/null
if [ $rc = 1 ] && has "it ended before writing the report" "$WORK/out" && [ "$t" -lt 8000 ]; then
    ok "gpumemguard dump of a program that blocks the dump signal and ends: says it ended ($t ms), status 1"
else bad "dump of a program that ends first (rc $rc, $t ms)" "$WORK/out"; fi

# the path the command names is the one the program writes: %p and %n
# expanded, with the name going on after them
if idle_run idle4 --report "$WORK/dumps/p.%p-%n.txt"; then
    cli dump "$IDLE"; rc=$?
    prog=$(cat "/proc/$IDLE/task/$IDLE/children" 2>/dev/null | tr -d ' ')
    if [ $rc = 0 ] && has "its report is written: $WORK/dumps/p.$prog-1.txt" "$WORK/out" \
       && has "gpumemguard report (signal, dump 1)" "$WORK/dumps/p.$prog-1.txt"; then
        ok "gpumemguard dump names the file the program writes (%p as its pid, %n as the dump's number, the rest of the name kept)"
    else bad "dump: the path named (rc $rc)" "$WORK/out"; fi
    idle_stop idle4 || bad "the program dumped into p.%p-%n.txt did not exit 0" "$WORK/idle4.err"
else bad "dump %p: the idle program did not start" "$WORK/idle4.err"; idle_stop idle4; fi

# dumped_with SIG REPORT: `gpumemguard dump` of the command $IDLE sends SIG to
# its program, which writes REPORT.1
dumped_with() {
    cli dump "$IDLE"; rc=$?
    prog=$(cat "/proc/$IDLE/task/$IDLE/children" 2>/dev/null | tr -d ' ')
    [ $rc = 0 ] && has "sent SIG$1 to process $prog" "$WORK/out" && wait_file "$2.1" "gpumemguard report (signal, dump 1)"
}

if idle_run idle2 --signal USR2 --report "$WORK/dumps/u.%n"; then
    dumped_with USR2 "$WORK/dumps/u" \
        && ok "gpumemguard dump PID sends the process's own GPUMEM_SIGNAL (USR2, from /proc/PID/environ)" \
        || bad "dump with GPUMEM_SIGNAL=USR2 (rc $rc)" "$WORK/err"
    # --signal naming another signal than the one it dumps on: said so, nothing sent
    cli dump --signal USR1 "$IDLE"; rc=$?
    cp "$WORK/err" "$WORK/err1"
    # SIGTERM, which the guard catches to report a death by it: never sent as a dump
    cli dump --signal TERM "$IDLE"; rc2=$?
    [ $rc = 1 ] && has "dumps on SIGUSR2 (its GPUMEM_SIGNAL), not on SIGUSR1 (--signal); nothing sent" "$WORK/err1" \
        && [ $rc2 = 1 ] && has "dumps on SIGUSR2 (its GPUMEM_SIGNAL), not on SIGTERM (--signal); nothing sent" "$WORK/err" \
        && kill -0 "$IDLE" 2>/dev/null \
        && ok "gpumemguard dump --signal USR1 or TERM of a process that dumps on SIGUSR2: says which it dumps on, nothing sent (it lives)" \
        || bad "dump --signal of another signal than the process's (rc $rc)" "$WORK/err"
    idle_stop idle2 || bad "the program dumped with SIGUSR2 did not exit 0" "$WORK/idle2.err"
else bad "dump USR2: the idle program did not start" "$WORK/idle2.err"; idle_stop idle2; fi

if idle_run idle3 --signal none; then
    cli dump "$IDLE"; rc=$?
    if [ $rc != 0 ] && has "dumps off (GPUMEM_SIGNAL=none)" "$WORK/err" && kill -0 "$IDLE" 2>/dev/null; then
        ok "gpumemguard dump of a process with GPUMEM_SIGNAL=none: refused, nothing sent"
    else bad "dump with dumps off (rc $rc)" "$WORK/err"; fi
    idle_stop idle3 || bad "the program with dumps off did not exit 0" "$WORK/idle3.err"
else bad "dump none: the idle program did not start" "$WORK/idle3.err"; idle_stop idle3; fi

# the command takes the signals the library takes (base/signame.c): a name
# the library once refused though it took its number, and a number it once
# took though it could never arm it
if idle_run idle4 --signal PROF --report "$WORK/dumps/p.%n"; then
    dumped_with PROF "$WORK/dumps/p" \
        && ok "gpumemguard --signal PROF: the library arms SIGPROF (as it does 27), and dump PID sends it" \
        || bad "dump with GPUMEM_SIGNAL=PROF (rc $rc)" "$WORK/err"
    miss=""
    for s in 32 33 SYS 31 TTIN; do
        cli dump --signal "$s" "$IDLE"; rc=$?
        [ $rc = 2 ] && has "--signal '$s' is not a dump signal" "$WORK/err" && kill -0 "$IDLE" 2>/dev/null \
            || miss="$miss [$s: rc $rc]"
    done
    [ -z "$miss" ] && ok "gpumemguard dump --signal 32, 33, SYS, 31, TTIN: refused (status 2) as the library refuses them, nothing sent" \
        || bad "gpumemguard dump --signal refused by the library but not by the command:$miss" "$WORK/err"
    idle_stop idle4 || bad "the program dumped with SIGPROF did not exit 0" "$WORK/idle4.err"
else bad "gpumemguard --signal PROF: the library did not start" "$WORK/idle4.err"; idle_stop idle4; fi
cli --signal RTMIN+40 -- "$T/apitest" direct info; rc=$?
[ $rc = 2 ] && has "--signal 'RTMIN+40' (GPUMEM_SIGNAL) is not valid" "$WORK/err" \
    && ok "gpumemguard --signal RTMIN+40: the library stops it at start-up (status 2)" \
    || bad "gpumemguard --signal RTMIN+40 (rc $rc)" "$WORK/err"

sleep 20 & victim=$!
cli dump "$victim"; rc=$?
if [ $rc != 0 ] && has "does not run under the guard" "$WORK/err" && kill -0 "$victim" 2>/dev/null; then
    ok "gpumemguard dump of a process without the guard: refused (status $rc), the process untouched"
else bad "dump of an unguarded process (rc $rc)" "$WORK/err"; fi
kill "$victim" 2>/dev/null; wait "$victim" 2>/dev/null

# guarded, but no CUDA call yet: the dump signal is not armed, SIGUSR1 would kill
"$GMG" sleep 20 2>"$WORK/werr" & victim=$!
prog=""
for _ in $(seq 100); do
    prog=$(cat "/proc/$victim/task/$victim/children" 2>/dev/null | tr -d ' ')
    [ -n "$prog" ] && grep -q libgpumemguard "/proc/$prog/maps" 2>/dev/null && break; sleep 0.05
done
cli dump "$victim"; rc=$?
if [ $rc != 0 ] && has "does not catch SIGUSR1" "$WORK/err" && kill -0 "$prog" 2>/dev/null; then
    ok "gpumemguard dump of a guarded process that has not armed its signal: refused, the process untouched"
else bad "dump before the signal is armed (rc $rc)" "$WORK/err"; fi
kill -USR1 "$victim"; sleep 0.3
if kill -0 "$prog" 2>/dev/null && has "SIGUSR1 not passed on: process $prog does not catch it yet" "$WORK/werr"; then
    ok "SIGUSR1 sent to the command before the program armed it: not passed on (it would kill), and said so"
else bad "SIGUSR1 to the command before it is armed" "$WORK/werr"; fi
kill "$victim" 2>/dev/null; wait "$victim" 2>/dev/null

# the library where LD_PRELOAD cannot name it: said, not run unguarded
mkdir -p "$WORK/my tools" && cp "$GMG" "$B/libgpumemguard.so" "$WORK/my tools/"
"$WORK/my tools/gpumemguard" --limit 1M true >"$WORK/out" 2>"$WORK/err"; rc=$?
[ $rc = 1 ] && has "LD_PRELOAD takes no path with a space or a colon" "$WORK/err" \
    && ok "the library under a path with a space: status 1 and why, the program not run unguarded" \
    || bad "library path with a space (rc $rc)" "$WORK/err"

# --------------------------------------------------------------- install
INST=$WORK/inst
# -o: the library as built for this run (make LTO= test ...), not rebuilt with the default flags
if env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$ROOT" -o "$B/.lib-flags" install B="$B" DESTDIR="$INST" PREFIX=/usr \
       >"$WORK/out" 2>&1; then
    miss=""
    for f in bin/gpumemguard lib/libgpumemguard.so include/gpumemguard.h share/man/man1/gpumemguard.1 \
             lib/pkgconfig/gpumemguard.pc; do
        [ -f "$INST/usr/$f" ] || miss="$miss $f"
    done
    has "Version: $GMG_VERSION" "$INST/usr/lib/pkgconfig/gpumemguard.pc" || miss="$miss [.pc Version]"
    has "libdir=/usr/lib" "$INST/usr/lib/pkgconfig/gpumemguard.pc" || miss="$miss [.pc libdir]"
    if [ -z "$miss" ]; then ok "make install DESTDIR PREFIX=/usr: command, library, header, man page, gpumemguard.pc"
    else bad "make install: missing$miss" "$WORK/out"; fi

    ilib=$(realpath "$INST/usr/lib/libgpumemguard.so")
    "$INST/usr/bin/gpumemguard" sh -c 'echo "$LD_PRELOAD"' >"$WORK/out" 2>"$WORK/err"
    "$INST/usr/bin/gpumemguard" --limit 8M "$T/apitest" direct info >>"$WORK/out" 2>>"$WORK/err"; rc=$?
    if [ $rc = 0 ] && [ "$(head -1 "$WORK/out")" = "$ilib" ] && has "free 8388608 total 8388608" "$WORK/out"; then
        ok "the installed command preloads the installed library (../lib beside it) and the program runs under it"
    else bad "installed command (rc $rc)" "$WORK/out"; fi

    # the installed command alone, with no library anywhere it looks: a clear failure
    mkdir -p "$WORK/lonely/bin" && cp "$INST/usr/bin/gpumemguard" "$WORK/lonely/bin/"
    if [ -e /usr/lib/libgpumemguard.so ]; then
        skip "the command without a library" "/usr/lib/libgpumemguard.so exists on this machine"
    else
        "$WORK/lonely/bin/gpumemguard" true >"$WORK/out" 2>"$WORK/err"; rc=$?
        [ $rc = 1 ] && has "cannot find libgpumemguard.so (looked for $WORK/lonely/bin/libgpumemguard.so" "$WORK/err" \
            && has "/usr/lib/libgpumemguard.so)" "$WORK/err" \
            && ok "the command with no library beside it, in ../lib or LIBDIR: status 1, naming where it looked" \
            || bad "command without a library (rc $rc)" "$WORK/err"
    fi

    if env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$ROOT" uninstall B="$B" DESTDIR="$INST" PREFIX=/usr \
           >"$WORK/out" 2>&1 && [ -z "$(find "$INST" -type f)" ]; then
        ok "make uninstall removes every installed file"
    else find "$INST" -type f >>"$WORK/out"; bad "make uninstall" "$WORK/out"; fi
    # the build tree's command was rebuilt for PREFIX=/usr; rebuild it for the default
    env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$ROOT" B="$B" "$GMG" >/dev/null 2>&1
else
    bad "make install DESTDIR=$INST PREFIX=/usr" "$WORK/out"
fi
fi # not under a sanitizer

# -------------------------------------------------------------- man page
if command -v groff >/dev/null 2>&1; then
    if groff -man -ww -z docs/gpumemguard.1 >"$WORK/out" 2>&1 && [ ! -s "$WORK/out" ]; then
        ok "docs/gpumemguard.1 renders with groff -man -ww without a warning"
    else bad "man page warnings" "$WORK/out"; fi
else
    skip "man page rendering" "no groff (apt-get install groff-base)"
fi
