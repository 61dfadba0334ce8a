# newer_hooks.sh - NULL outputs and invalid handles of pools, VMM
# references, mipmaps, captures and graph nodes: the driver's codes,
# nothing recorded (tests/nulls/newer_hooks.c). Sourced by tests/run.sh (its
# helpers, $T, $WORK).
build nulls_hooks tests/nulls/newer_hooks.c -L"$B/sim" -l:libcuda.so.1

# NULL outputs and invalid handles: the driver's codes, nothing recorded
env "$T/nulls_hooks" >"$WORK/out0" 2>/dev/null
tguarded 120 GPUMEM_LIMIT=1M "$T/nulls_hooks"; rc=$?
if [ $rc = 0 ] && grep -q "^[0-9 ]*$" "$WORK/out0" && cmp -s "$WORK/out0" "$WORK/out" \
   && has "SUMMARY: gpumemguard: 0 bytes in 0 allocations still live at exit" "$WORK/err"; then
    ok "NULL outputs and invalid handles of pools, VMM references, mipmaps, captures and graph nodes, failed lookups of entry points: the driver's codes, the pointers left as they were, nothing kept"
else bad "NULL outputs of the newer hooks: guarded '$(cat "$WORK/out")', driver '$(cat "$WORK/out0")'" "$WORK/err"; fi
