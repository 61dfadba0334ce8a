# errors.sh - the driver's refusals of capture calls leave the capture
# count alone (tests/capture/errors.c). Sourced by tests/run.sh (its
# helpers, $T, $WORK).
build capture_errors tests/capture/errors.c -L"$B/sim" -l:libcuda.so.1

# the driver's refusals of capture calls leave the capture count alone
env "$T/capture_errors" >"$WORK/out0" 2>/dev/null
tguarded 120 GPUMEM_LIMIT=4M "$T/capture_errors"
if has "capture errors: again 401 legacy 900 null graph 1 never 401 never legacy 401; captured 8 MiB 0, after 8 MiB 2; guard 0 sim 0" "$WORK/out" \
   && [ "$(sed 's/; captured.*//' "$WORK/out0")" = "$(sed 's/; captured.*//' "$WORK/out")" ]; then
    ok "refused capture calls (a second begin, a NULL graph, no capture, the legacy stream): the driver's codes; the capture still counted as one"
else bad "capture error paths" "$WORK/out"; fi
