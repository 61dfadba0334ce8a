# over_limit.sh - NULL outputs with sizes over the limit, and the NULL
# total of cuMemGetInfo_v2 under a limit: the driver's own return codes (the
# same calls without the guard), no refusal (tests/nulls/over_limit.c,
# apitest). Sourced by tests/run.sh (its helpers, $T, $WORK).
build nulls_big tests/nulls/over_limit.c -L"$B/sim" -l:libcuda.so.1

# cuMemGetInfo_v2(&free, NULL) under a limit: the driver's own return code
# (the same call without the guard), not the guard's success
env "$T/apitest" direct info >"$WORK/out0" 2>/dev/null
want=$(grep "^null total:" "$WORK/out0")
tguarded 60 GPUMEM_LIMIT=8M "$T/apitest" direct info
if [ -n "$want" ] && [ "$want" != "null total: 0" ] && [ "$(grep "^null total:" "$WORK/out")" = "$want" ]; then
    ok "cuMemGetInfo_v2 with a NULL total under a limit returns what the driver returns ($want)"
else bad "null total: guarded '$(grep "^null total:" "$WORK/out")', driver '$want'" "$WORK/out"; fi

# NULL outputs with sizes far over the limit: the driver's own error codes
# (the same calls without the guard), no refusal made or shown
env "$T/nulls_big" >"$WORK/out0" 2>/dev/null
tguarded 60 GPUMEM_LIMIT=1M "$T/nulls_big"; rc=$?
if [ $rc = 0 ] && grep -q "^[0-9 ]*$" "$WORK/out0" && cmp -s "$WORK/out0" "$WORK/out" \
   && [ "$(cat "$WORK/err")" = "SUMMARY: gpumemguard: 0 bytes in 0 allocations still live at exit" ]; then
    ok "NULL outputs of 13 allocating calls over the limit: the driver's error codes, nothing refused"
else bad "NULL outputs over the limit: guarded '$(cat "$WORK/out")', driver '$(cat "$WORK/out0")'" "$WORK/err"; fi
