# fatal/fatal.sh - a report before SIGTERM, SIGINT or SIGHUP ends a program
# that left them at their default action (a batch system's time limit),
# then the same end as without the guard; invisible to the program's own
# sigaction and signal, and a handler it installs takes over. Sourced by
# run.sh (its helpers, $B, $T, $WORK, $PRELOAD).
build fatalprog tests/fatal/fatalprog.c -L"$B/sim" -l:libcuda.so.1

# fatal_start OUT ERR CMD...: start CMD in the background, wait for "ready"
fatal_start() {
    local out=$1 err=$2; shift 2
    "$@" >"$out" 2>"$err" &
    FATAL_PID=$!
    for _ in $(seq 200); do grep -q ready "$out" 2>/dev/null && return 0; sleep 0.05; done
    return 1
}

# the command with --error-exitcode, SIGTERM to it (Slurm's way): a report, and 143
if [ -z "${GMG_SANITIZER:-}" ]; then
    fatal_start "$WORK/fout" "$WORK/ferr" "$B/gpumemguard" --error-exitcode 23 -- "$T/fatalprog" wait
    kill -TERM "$FATAL_PID"; wait "$FATAL_PID" 2>/dev/null; rc=$?
    if [ $rc = 143 ] && grep -q "gpumemguard report (fatal_signal, dump 1)" "$WORK/ferr" \
       && grep -q "in leak_before_term " "$WORK/ferr" \
       && has "SUMMARY: gpumemguard: 1048576 bytes in 1 allocation still live at exit" "$WORK/ferr"; then
        ok "fatal signal: gpumemguard --error-exitcode 23 -- prog killed with SIGTERM writes the report, exits 143"
    else
        bad "fatal signal: SIGTERM through the command (rc $rc)" "$WORK/ferr"
    fi
else
    skip "fatal signal through the command" "the command preloads the library alone"
fi

# preloaded directly: each of the three ends the process by itself, after a
# JSON report. (A program built with TSan sets SIGINT and SIGHUP to their
# default, and asks for SIGTERM's action, by system call, past the guard:
# only SIGTERM, which it leaves alone, is its to test there.)
fatal_sigs="TERM INT HUP"
[ "${GMG_SANITIZER:-}" = tsan ] && fatal_sigs=TERM
for s in $fatal_sigs; do
    fatal_start "$WORK/fout" "$WORK/ferr" env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT="$WORK/fatal.$s.json" \
        GPUMEM_REPORT_FORMAT=json "$T/fatalprog" wait
    kill -"$s" "$FATAL_PID"; wait "$FATAL_PID" 2>/dev/null; rc=$?
    want=$((128 + $(kill -l "$s")))
    if [ $rc = $want ] && [ -s "$WORK/fatal.$s.json" ] \
       && jq -e '.trigger == "fatal_signal" and .totals.live_bytes == 1048576' "$WORK/fatal.$s.json" >/dev/null 2>&1; then
        ok "fatal signal: SIG$s at its default action: a JSON report with trigger fatal_signal, then status $want"
    else
        cat "$WORK/fatal.$s.json" >>"$WORK/ferr" 2>/dev/null
        bad "fatal signal: SIG$s (rc $rc, want $want)" "$WORK/ferr"
    fi
done

# the signal ends the program where it came: a sleep it cut short, or the
# raise() that sent it, never returns to the program (which would exit 0)
fatal_start "$WORK/fout" "$WORK/ferr" env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT="$WORK/fsleep.json" \
    GPUMEM_REPORT_FORMAT=json "$T/fatalprog" sleep
kill -TERM "$FATAL_PID"; wait "$FATAL_PID" 2>/dev/null; rc=$?
env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT="$WORK/fraise.json" GPUMEM_REPORT_FORMAT=json "$T/fatalprog" raise \
    >"$WORK/fout2" 2>"$WORK/ferr2" &
wait $! 2>/dev/null; rc2=$?
if [ $rc = 143 ] && ! has "ran on" "$WORK/fout" && jq -e '.trigger == "fatal_signal"' "$WORK/fsleep.json" >/dev/null 2>&1 \
   && [ $rc2 = 143 ] && ! has "ran on" "$WORK/fout2" && jq -e '.trigger == "fatal_signal"' "$WORK/fraise.json" >/dev/null 2>&1; then
    ok "fatal signal: a SIGTERM that cuts a sleep short, or the program's own raise(SIGTERM), ends it there after the report (143, nothing run on)"
else
    bad "fatal signal: the program ran on after SIGTERM (sleep rc $rc, raise rc $rc2)" "$WORK/fout"
fi

# the interrupted thread holds what the report needs (the loader's lock in a
# library's constructor; the allocator's locks in the middle of a fork): the
# report is still written, soon, and the signal ends the process
$CC -std=gnu11 -O1 -g -Wall -Wextra -Werror $SAN_FLAGS -shared -fPIC -o "$T/libslowctor.so" tests/fatal/slowctor.c || exit 1
held=""
for m in ctor fork; do
    start=$(date +%s%N)
    fatal_start "$WORK/fout" "$WORK/ferr" env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT="$WORK/fheld.$m.json" \
        GPUMEM_REPORT_FORMAT=json "$T/fatalprog" $m "$T/libslowctor.so"
    sleep 0.3
    # a process that never ends fails the test instead of hanging the run
    ( sleep 30; kill -KILL "$FATAL_PID" 2>/dev/null ) & watchdog=$!
    kill -TERM "$FATAL_PID"; wait "$FATAL_PID" 2>/dev/null; rc=$?
    kill "$watchdog" 2>/dev/null; wait "$watchdog" 2>/dev/null
    ms=$(( ($(date +%s%N) - start) / 1000000 ))
    { [ $rc = 143 ] && [ $ms -lt 8000 ] && jq -e '.trigger == "fatal_signal"' "$WORK/fheld.$m.json" >/dev/null 2>&1; } \
        || held="$held [$m: rc $rc, $ms ms]"
done
[ -z "$held" ] && ok "fatal signal: while the thread holds what the report needs (a constructor under dlopen, a fork under way), the report is written and the signal ends the process (143)" \
    || bad "fatal signal while the thread holds a lock the report needs:$held" "$WORK/ferr"

# the same signal twice at once to a program of two threads (a process
# group's SIGTERM and the command's forwarding of it): one report, then 143
fatal_start "$WORK/fout" "$WORK/ferr" env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT="$WORK/ftwice.json" \
    GPUMEM_REPORT_FORMAT=json "$T/fatalprog" threads
kill -TERM "$FATAL_PID"; kill -TERM "$FATAL_PID"; wait "$FATAL_PID" 2>/dev/null; rc=$?
if [ $rc = 143 ] && jq -e '.trigger == "fatal_signal"' "$WORK/ftwice.json" >/dev/null 2>&1; then
    ok "fatal signal: SIGTERM sent twice at once to a program of two threads: the report, then 143"
else
    { cat "$WORK/ferr"; for f in "$WORK"/ftwice*; do echo "$f: $(jq -r .trigger "$f" 2>&1 | head -1)"; done; } >"$WORK/ftwice.why" 2>&1
    bad "fatal signal sent twice (rc $rc)" "$WORK/ftwice.why"
fi

# two different stop signals at once (systemd's SIGTERM, then SIGHUP): one
# stop, the report, then the first signal's status. The same where the
# second reaches the thread in the moment after the kernel took the first
# for it, so that the second's handler runs first (a tracer makes that
# moment every time); where a higher number follows a lower one (those
# may have been pending together) and where both were pending at an
# unblock, the order they came in is lost: SIGTERM's status
if [ "${GMG_SANITIZER:-}" = tsan ]; then
    skip "fatal signal: SIGTERM and SIGHUP at once" "a TSan-built program sets SIGHUP to its default past the guard"
else
$CC -std=gnu11 -O1 -g -Wall -Wextra -Werror -o "$T/nested" tests/fatal/nested.c || exit 1
twoways=""
fatal_start "$WORK/fout" "$WORK/ferr" env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT="$WORK/ftwo.json" \
    GPUMEM_REPORT_FORMAT=json "$T/fatalprog" wait
kill -TERM "$FATAL_PID"; kill -HUP "$FATAL_PID"; wait "$FATAL_PID" 2>/dev/null; rc=$?
{ [ $rc = 143 ] && jq -e '.trigger == "fatal_signal"' "$WORK/ftwo.json" >/dev/null 2>&1; } || twoways="$twoways [TERM, HUP: rc $rc]"
for pair in "TERM HUP 143" "INT HUP 130" "TERM INT 143" "HUP TERM 143"; do
    set -- $pair
    rm -f "$WORK/ftwo.json" "$WORK/fpid"
    fatal_start "$WORK/fout" "$WORK/ferr" "$T/nested" "$WORK/fpid" "$(kill -l "$1")" "$(kill -l "$2")" \
        env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT="$WORK/ftwo.json" GPUMEM_REPORT_FORMAT=json "$T/fatalprog" wait
    kill -"$1" "$(cat "$WORK/fpid" 2>/dev/null)"; wait "$FATAL_PID" 2>/dev/null; rc=$?
    { [ $rc = "$3" ] && jq -e '.trigger == "fatal_signal"' "$WORK/ftwo.json" >/dev/null 2>&1; } \
        || twoways="$twoways [$1, then $2 on its frame: rc $rc]"
done
rm -f "$WORK/ftwo.json"
env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT="$WORK/ftwo.json" GPUMEM_REPORT_FORMAT=json "$T/fatalprog" pending \
    >"$WORK/fout" 2>"$WORK/ferr"; rc=$?
{ [ $rc = 143 ] && ! has "ran on" "$WORK/fout" && jq -e '.trigger == "fatal_signal"' "$WORK/ftwo.json" >/dev/null 2>&1; } \
    || twoways="$twoways [both pending: rc $rc]"
[ -z "$twoways" ] && ok "fatal signal: two stop signals at once (SIGTERM then SIGHUP; the second taken a moment after the first, its handler run first: TERM/HUP, INT/HUP, TERM/INT): the report, then the first's status; HUP/TERM, and both pending at an unblock: SIGTERM's" \
    || bad "fatal signal: two different stop signals at once:$twoways" "$WORK/ferr"
fi

# a SIGTERM handler of the program's that the kernel resets at its first
# delivery (SA_RESETHAND; sysv_signal, which is signal() in a program built
# for strict ISO C; set before the first CUDA use; a vfork child that got a
# SIGTERM first, which does not use the parent's one): the program's handler
# once, reading as itself before and SIG_DFL after, as without the guard;
# the next SIGTERM finds the default: the report, then 143
if [ "${GMG_SANITIZER:-}" = tsan ]; then
    skip "fatal signal: a handler reset at its first delivery" "a TSan-built program installs its handlers past the guard"
else
for m in once sysv early vforkonce; do
    rm -f "$WORK/fonce.json"
    fatal_start "$WORK/fout" "$WORK/ferr" env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT="$WORK/fonce.json" \
        GPUMEM_REPORT_FORMAT=json "$T/fatalprog" $m
    kill -TERM "$FATAL_PID"
    for _ in $(seq 100); do grep -q "handled once" "$WORK/fout" && break; sleep 0.05; done
    sleep 0.2 # no report under way: nothing left of the first
    kill -TERM "$FATAL_PID"; wait "$FATAL_PID" 2>/dev/null; rc=$?
    if [ $rc = 143 ] && has "before: mine, reset at delivery" "$WORK/fout" && has "handled once; after: SIG_DFL" "$WORK/fout" \
       && jq -e '.trigger == "fatal_signal" and .totals.live_bytes == 1048576' "$WORK/fonce.json" >/dev/null 2>&1; then
        ok "fatal signal: a SIGTERM handler reset at its first delivery ($m): it runs once, then SIGTERM writes the report and ends with 143"
    else
        cat "$WORK/fout" >>"$WORK/ferr"
        bad "fatal signal: a handler reset at its first delivery ($m, rc $rc)" "$WORK/ferr"
    fi
done
fi

# a vfork child's signal() before it exits or execs sets its own actions,
# not its parent's, and so does its death by SIGTERM: the parent still
# writes the report at SIGTERM
if [ "${GMG_SANITIZER:-}" = tsan ]; then
    skip "fatal signal: after a vfork child's own signal()" "a TSan-built program installs its handlers past the guard"
else
fatal_start "$WORK/fout" "$WORK/ferr" env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT="$WORK/fvfork.json" \
    GPUMEM_REPORT_FORMAT=json "$T/fatalprog" vfork
kill -TERM "$FATAL_PID"; wait "$FATAL_PID" 2>/dev/null; rc=$?
if [ $rc = 143 ] && has "parent: SIGTERM SIG_DFL; child killed by SIGTERM" "$WORK/fout" \
   && jq -e '.trigger == "fatal_signal"' "$WORK/fvfork.json" >/dev/null 2>&1; then
    ok "fatal signal: a vfork child's signal(), or its death by SIGTERM, leaves its parent's SIGTERM to the guard: the report, then 143"
else
    cat "$WORK/fout" >>"$WORK/ferr"
    bad "fatal signal: after a vfork child's signal() (rc $rc)" "$WORK/ferr"
fi
fi

# fullpipe NAME STREAM DUMP: fatalprog under the guard, its STREAM (stdout
# under GPUMEM_REPORT=stdout, or stderr) a FIFO whose room is all taken and
# that nobody reads; a signal dump asked first when DUMP is 1; then SIGTERM.
# Sets rc, and ms from the SIGTERM to the end. (A FIFO of its own each time:
# an earlier case's watchdog may still hold one open.)
fullpipe() {
    local fifo="$WORK/fullpipe.$1" fp dog start
    rm -f "$fifo"; mkfifo "$fifo"
    exec 9<>"$fifo"
    head -c 65536 /dev/zero >&9 # the pipe's room, all taken
    if [ "$2" = stdout ]; then
        env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT=stdout "$T/fatalprog" wait >"$fifo" 2>"$WORK/ferr" 9>&- &
        fp=$!
        sleep 1 # ("ready" goes into the full pipe: the program has used the driver by now)
    else
        env LD_PRELOAD="$PRELOAD" "$T/fatalprog" wait >"$WORK/fout" 2>"$fifo" 9>&- &
        fp=$!
        for _ in $(seq 200); do grep -q ready "$WORK/fout" 2>/dev/null && break; sleep 0.05; done
    fi
    if [ "$3" = 1 ]; then kill -USR1 $fp; sleep 0.3; fi
    start=$(date +%s%N)
    ( sleep 30; kill -KILL $fp ) 2>/dev/null 9>&- & dog=$! # (a process never ended fails the case, not the run)
    kill -TERM $fp; wait $fp 2>/dev/null; rc=$?
    ms=$(( ($(date +%s%N) - start) / 1000000 ))
    kill $dog 2>/dev/null; wait $dog 2>/dev/null
    exec 9>&-
}
# the report to a stderr pipe that is full and never read: given up, and the
# signal still ends the process (within seconds, not never)
fullpipe a stderr 0
if [ $rc = 143 ] && [ $ms -lt 15000 ]; then
    ok "fatal signal: a report to a full stderr pipe nobody reads is given up; the signal ends the process (143, $ms ms)"
else bad "fatal signal with stderr a full pipe (rc $rc, $ms ms)"; fi
# the same with a signal dump waiting there first: the dump is given up
# for the fatal signal's report, which is given up in turn
fullpipe b stderr 1
if [ $rc = 143 ] && [ $ms -lt 15000 ]; then
    ok "fatal signal while a signal dump waits on a full stderr pipe nobody reads: the dump is given up, the signal ends the process (143, $ms ms)"
else bad "fatal signal behind a dump waiting on a full stderr pipe (rc $rc, $ms ms)"; fi
# GPUMEM_REPORT=stdout, stdout that full pipe: the same (its report falls
# back to stderr, a file here, once stdout has taken nothing for 5 s)
fullpipe c stdout 1
if [ $rc = 143 ] && [ $ms -lt 20000 ]; then
    ok "GPUMEM_REPORT=stdout, stdout a full pipe nobody reads: a dump waiting there gives way, the fatal report is given up there, the signal ends the process (143, $ms ms)"
else bad "fatal signal with stdout a full pipe (rc $rc, $ms ms)" "$WORK/ferr"; fi

# invisible: the program reads SIG_DFL; its own handler takes over, no report
if [ "${GMG_SANITIZER:-}" = tsan ]; then
    skip "fatal signal: seen by the program" "a TSan-built program asks for its signals' actions past the guard"
else
fatal_start "$WORK/fout" "$WORK/ferr" env LD_PRELOAD="$PRELOAD" "$T/fatalprog" query
kill -TERM "$FATAL_PID"; wait "$FATAL_PID" 2>/dev/null; rc=$?
if [ $rc = 7 ] && has "sigaction: SIG_DFL flags 0" "$WORK/fout" && has "signal: SIG_DFL" "$WORK/fout" \
   && has "sigset hold: SIG_DFL" "$WORK/fout" \
   && has "replaced: SIG_DFL" "$WORK/fout" && has "now: mine" "$WORK/fout" && has "handled" "$WORK/fout" \
   && ! has "fatal_signal" "$WORK/ferr"; then
    ok "fatal signal: sigaction, signal and sigset(SIG_HOLD) answer SIG_DFL; a handler installed later takes over (no report)"
else
    cat "$WORK/fout" >>"$WORK/ferr"; bad "fatal signal: seen by the program (rc $rc)" "$WORK/ferr"
fi
fi

# ignored before the guard armed (a background job's SIGINT): stays ignored;
# a process that never used CUDA: no handler, nothing said (both through sh,
# which a TSan-built guard cannot be preloaded into)
if [ "${GMG_SANITIZER:-}" = tsan ]; then
    skip "fatal signal: ignored SIGINT, a process without CUDA" "a TSan-built guard cannot be preloaded into sh"
else
fatal_start "$WORK/fout" "$WORK/ferr" env LD_PRELOAD="$PRELOAD" sh -c 'trap "" INT; exec "$0" keep' "$T/fatalprog"
kill -INT "$FATAL_PID"; sleep 0.3
if kill -0 "$FATAL_PID" 2>/dev/null && ! has "fatal_signal" "$WORK/ferr"; then
    ok "fatal signal: an ignored SIGINT stays ignored (no report, the program runs on)"
else
    bad "fatal signal: ignored SIGINT" "$WORK/ferr"
fi
kill -KILL "$FATAL_PID" 2>/dev/null; wait "$FATAL_PID" 2>/dev/null

fatal_start "$WORK/fout" "$WORK/ferr" env LD_PRELOAD="$PRELOAD" sh -c 'echo ready; exec sleep 30'
kill -TERM "$FATAL_PID"; wait "$FATAL_PID" 2>/dev/null; rc=$?
if [ $rc = 143 ] && [ ! -s "$WORK/ferr" ]; then
    ok "fatal signal: a process that never used CUDA ends as before, silently"
else
    bad "fatal signal: no CUDA (rc $rc)" "$WORK/ferr"
fi
fi
