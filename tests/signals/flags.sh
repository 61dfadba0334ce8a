# flags.sh - the program's sa_flags (no SA_RESTART: EINTR), sa_mask and
# SA_RESETHAND stand under the guard (tests/signals/flags.c). Sourced by
# tests/run.sh (its helpers, $T, $WORK, $PRELOAD).
build signal_flags tests/signals/flags.c -L"$B/sim" -l:libcuda.so.1

# the program's sa_flags (no SA_RESTART: EINTR), sa_mask and SA_RESETHAND stand
timeout 60 env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT=/dev/null "$T/signal_flags" >"$WORK/out" 2>"$WORK/err"; rc=$?
if [ $rc = 0 ] && has "read interrupted: yes" "$WORK/out" && has "sa_mask kept: yes" "$WORK/out" \
   && has "resethand: calls 1, now SIG_DFL" "$WORK/out" && has "flags read back: same" "$WORK/out"; then
    ok "the program's SIGUSR1 sa_flags (EINTR without SA_RESTART), sa_mask and SA_RESETHAND behave as without the guard"
else bad "signal semantics (rc $rc)" "$WORK/out"; fi
