# fork.sh - forks while threads install the dump signal's handler: every
# child installs and takes its own (tests/signals/fork.c). Sourced by
# tests/run.sh (its helpers, $T, $WORK, $PRELOAD).
build forksig tests/signals/fork.c -L"$B/sim" -l:libcuda.so.1

if [ "${GMG_SANITIZER:-}" = tsan ]; then
    skip "fork during handler installation" "TSan installs the program's handlers itself and defers them in a forked child"
else
    timeout 120 env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT=/dev/null "$T/forksig" 200 >"$WORK/out" 2>"$WORK/err"; rc=$?
    [ $rc = 0 ] && has "forksig: 200 forks, 200 children took their signal" "$WORK/out" \
        && ok "200 forks while 3 threads install SIGUSR1 handlers: every child installs and takes its own" \
        || bad "fork during handler installation (rc $rc)" "$WORK/out"
fi
