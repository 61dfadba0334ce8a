# stack_depth.sh - GPUMEM_STACK_DEPTH out of range says so
# (tests/nulls/info.c). Sourced by tests/run.sh (its helpers, $T, $WORK).

guarded GPUMEM_STACK_DEPTH=99999 "$T/nulls"; rc=$?
[ $rc = 2 ] && has "out of range" "$WORK/err" && ok "GPUMEM_STACK_DEPTH=99999 is refused as out of range" \
    || bad "stack depth range message" "$WORK/err"
guarded GPUMEM_STACK_DEPTH=-3 "$T/nulls"; rc=$?
[ $rc = 2 ] && has "GPUMEM_STACK_DEPTH='-3' is not valid: negative (0 turns stacks off)" "$WORK/err" \
    && ok "GPUMEM_STACK_DEPTH=-3 is refused as negative, saying 0 turns stacks off (not 'not a whole number')" \
    || bad "negative stack depth message" "$WORK/err"
