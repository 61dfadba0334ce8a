# early.sh - the dump signal before the first allocation does not kill a
# CUDA program (tests/signals/early.c); a program that never touches CUDA
# keeps its signals. Sourced by tests/run.sh (its helpers, $T, $WORK,
# $PRELOAD).
build early_signal tests/signals/early.c -L"$B/sim" -l:libcuda.so.1

# the dump signal before the first allocation does not kill a CUDA program;
# a program that never touches CUDA keeps its signals
guarded "$T/early_signal"; rc=$?
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
