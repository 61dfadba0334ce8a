# signals.sh - the command passes on what other processes send it, each
# signal checked (HUP, INT, QUIT, USR2, WINCH, PIPE, PWR, IO, URG, ABRT), a
# stop signal stops both and SIGCONT continues both, and never bounces back to the
# program a signal the program sent it (kill -USR2 $PPID: a program without a
# handler would die of it). Sourced by tests/run.sh (its helpers, $B, $WORK).
if [ -n "${GMG_SANITIZER:-}" ]; then
    skip "signals passed on by the command" "$GMG_SANITIZER build: the command preloads the guard alone (see cli.sh)"
else
GMG_CMD=$ROOT/$B/gpumemguard
sig_prog=$WORK/sigprog.sh
cat >"$sig_prog" <<'PROG'
for s in HUP INT QUIT USR2 WINCH PIPE PWR IO URG ABRT; do trap "echo got $s >>\"$1\"" $s; done
echo ready >>"$1"
while :; do sleep 0.05 & wait $!; done
PROG
# INT and QUIT are ignored in a background job of a shell without job
# control, and HUP under nohup: a signal ignored at start stays ignored
# (the kernel drops it; a shell cannot trap it), so the command starts with
# them at their default, as from a terminal
: >"$WORK/sig.log"
env --default-signal=HUP,INT,QUIT "$GMG_CMD" -- bash "$sig_prog" "$WORK/sig.log" >/dev/null 2>"$WORK/sig.err" & sig_cmd=$!
for _ in $(seq 100); do grep -q ready "$WORK/sig.log" && break; sleep 0.05; done
sig_miss=""
for s in HUP INT QUIT USR2 WINCH PIPE PWR IO URG ABRT; do
    kill -$s $sig_cmd
    for _ in $(seq 100); do grep -q "got $s" "$WORK/sig.log" && break; sleep 0.05; done
    grep -q "got $s" "$WORK/sig.log" || sig_miss="$sig_miss $s"
done
kill -TERM $sig_cmd; wait $sig_cmd; sig_rc=$?
if [ -z "$sig_miss" ] && [ $sig_rc = 143 ]; then
    ok "the command passes on SIGHUP, SIGINT, SIGQUIT, SIGUSR2, SIGWINCH, SIGPIPE, SIGPWR, SIGIO, SIGURG and SIGABRT from another process, each reaching the program's handler; SIGTERM ends it (143)"
else
    echo "missing:$sig_miss rc $sig_rc" >>"$WORK/sig.log"; bad "signals passed on by the command" "$WORK/sig.log"
fi
# a stop signal sent to the command stops the program and the command;
# SIGCONT continues both
state() { sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$1/status" 2>/dev/null; }
# (a job of its own: in a process group with no parent in the session, an
# orphaned one as under setsid, the kernel drops stop signals of default action)
set -m
"$GMG_CMD" --report none -- sleep 30 2>"$WORK/err" & stop_cmd=$!
set +m
for _ in $(seq 100); do [ -n "$(cat "/proc/$stop_cmd/task/$stop_cmd/children" 2>/dev/null)" ] && break; sleep 0.05; done
stop_prog=$(cat "/proc/$stop_cmd/task/$stop_cmd/children" 2>/dev/null | tr -d ' ')
stop_seen=""
for s in TSTP CONT; do
    kill -$s $stop_cmd
    want=$([ $s = TSTP ] && echo T || echo S)
    for _ in $(seq 100); do [ "$(state $stop_cmd)$(state $stop_prog)" = "$want$want" ] && break; sleep 0.05; done
    stop_seen="$stop_seen $s:$(state $stop_cmd)$(state $stop_prog)"
done
kill -TERM $stop_cmd; wait $stop_cmd; stop_rc=$?
if [ -n "$stop_prog" ] && [ "$stop_seen" = " TSTP:TT CONT:SS" ] && [ $stop_rc = 143 ]; then
    ok "SIGTSTP sent to the command stops the program and the command; SIGCONT continues both"
else bad "a stop signal to the command (states:$stop_seen, rc $stop_rc)" "$WORK/err"; fi
# the program stops itself and its group (vim's ^Z: kill(0, SIGTSTP)): the
# command stops with it; a program that ignores SIGTSTP sent to the command
# goes on, and so does the command
set -m
"$GMG_CMD" --report none -- sh -c 'kill -TSTP 0; sleep 30' 2>"$WORK/err" & self_cmd=$!
"$GMG_CMD" --report none -- sh -c 'trap "" TSTP; sleep 30' 2>>"$WORK/err" & ign_cmd=$!
set +m
for _ in $(seq 100); do [ -n "$(cat "/proc/$ign_cmd/task/$ign_cmd/children" 2>/dev/null)" ] && break; sleep 0.05; done
sleep 0.2; kill -TSTP $ign_cmd
for _ in $(seq 100); do [ "$(state $self_cmd)" = T ] && break; sleep 0.05; done
sleep 0.3
self_state=$(state $self_cmd); ign_state=$(state $ign_cmd)
kill -KILL $self_cmd $ign_cmd 2>/dev/null; wait $self_cmd $ign_cmd 2>/dev/null
if [ "$self_state" = T ] && [ "$ign_state" = S ]; then
    ok "a program that stops its own group (kill 0 SIGTSTP, as vim's ^Z): the command stops with it; one that ignores SIGTSTP sent to the command: both go on"
else bad "the command mirrors the program's stops (stopping itself: $self_state, ignoring: $ign_state)" "$WORK/err"; fi
# a stop signal sent to the program alone (kill -STOP PID, as an operator
# who sees the program's pid does) stops the program alone: continued, it
# ends, and the command with it
set -m
"$GMG_CMD" --report none -- sh -c 'sleep 1; exit 7' 2>"$WORK/err" & alone_cmd=$!
set +m
for _ in $(seq 100); do [ -n "$(cat "/proc/$alone_cmd/task/$alone_cmd/children" 2>/dev/null)" ] && break; sleep 0.05; done
alone_prog=$(cat "/proc/$alone_cmd/task/$alone_cmd/children" 2>/dev/null | tr -d ' ')
kill -STOP "$alone_prog"
for _ in $(seq 100); do [ "$(state "$alone_prog")" = T ] && break; sleep 0.05; done
sleep 0.3
alone_state="$(state $alone_cmd)$(state "$alone_prog")"
kill -CONT "$alone_prog"
alone_rc=none
for _ in $(seq 100); do [ -d "/proc/$alone_cmd" ] && [ "$(state $alone_cmd)" != Z ] || break; sleep 0.05; done
if [ "$(state $alone_cmd)" = T ]; then kill -KILL $alone_cmd; fi
wait $alone_cmd; alone_rc=$?
if [ -n "$alone_prog" ] && [ "$alone_state" = ST ] && [ $alone_rc = 7 ]; then
    ok "a program stopped by a signal sent to it alone stops alone (the command waits); continued, it ends and the command with its status"
else bad "a program stopped alone (states $alone_state, rc $alone_rc)" "$WORK/err"; fi
# the program signals the command itself: nothing comes back to it
"$GMG_CMD" -- sh -c 'kill -USR2 $PPID; sleep 0.3; kill -HUP $PPID; sleep 0.3; echo alive' >"$WORK/out" 2>"$WORK/err"; sig_rc=$?
if [ $sig_rc = 0 ] && has alive "$WORK/out"; then
    ok "a program that signals the command (kill -USR2 \$PPID, kill -HUP \$PPID) is not sent its own signal back: it lives and exits 0"
else bad "a program signalling the command (rc $sig_rc)" "$WORK/err"; fi
fi
