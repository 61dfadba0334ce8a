# host_memory.sh - pinned host memory and registrations go with the
# context that made them (tests/teardown/host_memory.c). Sourced by
# tests/run.sh (its helpers, $T, $WORK).
build host_teardown tests/teardown/host_memory.c -L"$B/sim" -l:libcuda.so.1

# pinned host memory and registrations go with the context that made them
# (an H100's driver refuses cuMemFreeHost and cuMemHostUnregister of them
# afterwards: docs/gpu-validation.md): after cuCtxDestroy and
# cuDevicePrimaryCtxReset they are reclaimed, not live at exit
tguarded 60 "$T/host_teardown"
if has "host_teardown: frees after destroy 1 1, unregister 713, free after reset 709" "$WORK/out" \
   && has "SUMMARY: gpumemguard: 0 bytes in 0 allocations still live at exit, 3735552 bytes in 4 allocations reclaimed by context teardown" "$WORK/err" \
   && [ "$(grep -A1 -F "bytes) in 1 allocation (cuMemHostAlloc, device 0) allocated from:" "$WORK/err" | grep -c " in host_in_ctx ")" = 2 ] \
   && grep -A1 -F "512.0 KiB (524288 bytes) in 1 allocation (cuMemHostAlloc, device 0) allocated from:" "$WORK/err" | grep -q " in host_in_primary " \
   && grep -A1 -F "64.0 KiB (65536 bytes) in 1 allocation (cuMemHostRegister, device 0) allocated from:" "$WORK/err" | grep -q " in host_register "; then
    ok "pinned host memory and registrations are reclaimed with their context (cuCtxDestroy, cuDevicePrimaryCtxReset), not left live"
else bad "pinned host memory reclaimed with its context" "$WORK/err"; fi
