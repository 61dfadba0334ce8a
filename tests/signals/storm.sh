# storm.sh - dump signals while three threads re-install the program's
# handler: no crash, every handler called in its own form
# (tests/signals/storm.c). Sourced by tests/run.sh (its helpers, $T, $WORK,
# $PRELOAD).
build signal_storm tests/signals/storm.c -L"$B/sim" -l:libcuda.so.1

# handlers re-installed from 3 threads while signals arrive: no crash, every
# handler called in its own form
timeout 120 env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT=/dev/null "$T/signal_storm" sigstorm 2000 >"$WORK/out" 2>"$WORK/err"; rc=$?
if [ $rc = 0 ] && has "sigstorm: 2000 signals, handlers ran 2000, bad 0" "$WORK/out"; then
    ok "2000 dump signals while 3 threads re-install SIGUSR1 handlers (plain and SA_SIGINFO): each called as installed"
else bad "signal storm with re-installed handlers (rc $rc)" "$WORK/out"; fi
