# stack_depth.sh - GPUMEM_STACK_DEPTH out of range says so
# (tests/nulls/info.c). Sourced by tests/run.sh (its helpers, $T, $WORK).

guarded GPUMEM_STACK_DEPTH=99999 "$T/nulls"; rc=$?
[ $rc = 2 ] && has "out of range" "$WORK/err" && ok "GPUMEM_STACK_DEPTH=99999 is refused as out of range" \
    || bad "stack depth range message" "$WORK/err"
