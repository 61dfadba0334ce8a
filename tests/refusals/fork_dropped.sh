# fork_dropped.sh - refusals the report thread could not queue belong to the
# process that made them: a child forked while its parent's were still being
# counted does not say them (tests/refusals/fork_dropped.c, slowfirst.c).
# Sourced by tests/run.sh (its helpers, $ROOT, $T, $WORK, $PRELOAD).
if [ "${GMG_SANITIZER:-}" = tsan ]; then
    skip "refusals not queued, and a fork" "a write() preloaded beside the guard crashes TSan-built programs, as close() does; plain and ASan builds run it"
else
    build libslowfirst.so -shared -fPIC tests/refusals/slowfirst.c
    build refusal_fork_dropped tests/refusals/fork_dropped.c -L"$B/sim" -l:libcuda.so.1
    timeout 120 env LD_PRELOAD="$PRELOAD $ROOT/$T/libslowfirst.so" GPUMEM_LIMIT=1M GPUMEM_STACK_DEPTH=128 "$T/refusal_fork_dropped" \
        >"$WORK/out" 2>"$WORK/err"; rc=$?
    # the child's lines come before the parent's thread is let go: a line saying
    # refusals were not explained before "child: ... done" is the child's
    said=$(grep -n "more refusal(s) at new call sites were counted, not explained" "$WORK/err" | cut -d: -f1)
    done_at=$(grep -n "^child: refused 2, done$" "$WORK/err" | cut -d: -f1)
    if [ $rc = 0 ] && has "fork_dropped: 96 of 96 refused; child exit 0" "$WORK/out" && [ -n "$done_at" ] \
       && [ "$(grep -c "^gpumemguard: refused cuMemAlloc of 4.0 MiB" "$WORK/err")" = 1 ] \
       && [ "$(wc -w <<<"$said")" = 1 ] && [ "$said" -gt "$done_at" ]; then
        ok "refusals the report thread could not queue are the parent's: said once, by it, not by a child forked meanwhile"
    else bad "refusals not queued, and a fork (rc $rc): $(cat "$WORK/out"); said at line(s) $said, the child done at $done_at" "$WORK/err"; fi
fi
