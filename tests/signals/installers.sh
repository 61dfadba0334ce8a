# installers.sh - a SIGUSR1 handler installed with each of libc's other
# installers after the guard armed the signal (tests/signals/installers.c).
# Sourced by tests/run.sh (its helpers, $T, $WORK, $PRELOAD).
build installers tests/signals/installers.c -L"$B/sim" -l:libcuda.so.1

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
    timeout 60 env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT="$WORK/installers/d.%n.txt" "$T/installers" "$how" "$WORK/installers" \
        >"$WORK/out" 2>"$WORK/err"; rc=$?
    [ $rc = 0 ] && has "installers $how: $want" "$WORK/out" \
        && ok "a SIGUSR1 handler installed with $how after arming: chained, a dump per signal, $how's own semantics" \
        || bad "$how after arming (rc $rc): $(cat "$WORK/out")" "$WORK/err"
done
