# dump.sh - gpumemguard dump: a bad --signal is a usage error (status 2),
# whatever the process (even one that does not exist). Sourced by
# tests/run.sh (its helpers, $B, $WORK).

"$B/gpumemguard" dump --signal bogus 2147483647 >"$WORK/out" 2>"$WORK/err"; rc=$?
[ $rc = 2 ] && has "--signal 'bogus' is not a dump signal" "$WORK/err" \
    && ok "gpumemguard dump --signal bogus: a usage error, status 2, before the process is looked at" \
    || bad "dump with a bad --signal (rc $rc)" "$WORK/err"
