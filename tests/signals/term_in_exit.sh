# term_in_exit.sh - SIGTERM that comes while the exit report is written (a
# job's time limit as the program ends): the report is finished and the
# process ends by the signal, status 143, not 0 (tests/refusals/slowfirst.c
# holds the exit report's write). Sourced by tests/run.sh (its helpers, $B,
# $T, $WORK, $PRELOAD).
if [ "${GMG_SANITIZER:-}" = tsan ]; then
    skip "SIGTERM during the exit report" "a write() preloaded beside the guard crashes TSan-built programs, as close() does; plain and ASan builds run it"
else
    build libslowfirst.so -shared -fPIC tests/refusals/slowfirst.c
    timeout -s KILL 60 env LD_PRELOAD="$PRELOAD $ROOT/$T/libslowfirst.so" SLOWFIRST_TEXT="still live at exit" SLOWFIRST_SECONDS=2 \
        "$T/dumps" dumps 0 >"$WORK/out" 2>"$WORK/err" & te_bg=$!
    for _ in $(seq 200); do grep -q "still live at exit" "$WORK/err" && break; sleep 0.05; done
    te_pid=$(pgrep -f -n "$T/dumps dumps 0")
    [ -n "$te_pid" ] && kill -TERM "$te_pid"
    wait $te_bg; rc=$?
    if [ $rc = 143 ] && has "still live at exit" "$WORK/err"; then
        ok "SIGTERM during the exit report: the report written, then the process ends by the signal (143)"
    else bad "SIGTERM during the exit report (rc $rc, 0: swallowed)" "$WORK/err"; fi
fi
