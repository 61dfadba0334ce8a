# fork_dropped.sh - refusals (and the driver's out of memory) the report
# thread could not queue belong to the process that made them, and are said
# as what they are: a child forked while its parent's were still being
# counted does not say them (tests/refusals/fork_dropped.c, slowfirst.c).
# Sourced by tests/run.sh (its helpers, $ROOT, $T, $WORK, $PRELOAD).
if [ "${GMG_SANITIZER:-}" = tsan ]; then
    skip "refusals not queued, and a fork" "a write() preloaded beside the guard crashes TSan-built programs, as close() does; plain and ASan builds run it"
else
    build libslowfirst.so -shared -fPIC tests/refusals/slowfirst.c
    build refusal_fork_dropped tests/refusals/fork_dropped.c -L"$B/sim" -l:libcuda.so.1
    # the quota's refusals, then the driver's out of memory (no limit, a 1 MiB device)
    for kind in quota driver; do
        if [ $kind = quota ]; then set -- GPUMEM_LIMIT=1M; line="more refusal(s) at new call sites were counted, not explained"
            first="refused cuMemAlloc of 4.0 MiB"; what=refusals
        else set -- GPUSIM_MEM=1M; line="more of the driver's out-of-memory answers at new call sites were counted, not explained"
            first="the driver refused cuMemAlloc of 4.0 MiB"; what="the driver's out of memory"; fi
        timeout 120 env LD_PRELOAD="$PRELOAD $ROOT/$T/libslowfirst.so" "$@" GPUMEM_STACK_DEPTH=128 "$T/refusal_fork_dropped" \
            >"$WORK/out" 2>"$WORK/err"; rc=$?
        # the child's lines come before the parent's thread is let go: a line saying
        # refusals were not explained before "child: ... done" is the child's
        said=$(grep -n "$line" "$WORK/err" | cut -d: -f1)
        done_at=$(grep -n "^child: refused 2, done$" "$WORK/err" | cut -d: -f1)
        if [ $rc = 0 ] && has "fork_dropped: 96 of 96 refused; child exit 0" "$WORK/out" && [ -n "$done_at" ] \
           && [ "$(grep -c "^gpumemguard: $first" "$WORK/err")" = 1 ] \
           && [ "$(wc -w <<<"$said")" = 1 ] && [ "$said" -gt "$done_at" ] \
           && [ "$(grep -c "at new call sites were counted, not explained" "$WORK/err")" = 1 ]; then
            ok "$what the report thread could not queue are the parent's: said once, by it, as what they are, not by a child forked meanwhile"
        else bad "$what not queued, and a fork (rc $rc): $(cat "$WORK/out"); said at line(s) $said, the child done at $done_at" "$WORK/err"; fi
    done
fi
