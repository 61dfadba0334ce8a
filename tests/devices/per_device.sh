# per_device.sh - two devices: equal legacy pointers are two records, each
# device reaches its own limit, a context handle reused for another device
# charges that device (tests/devices/per_device.c). Sourced by tests/run.sh
# (its helpers, $T, $WORK).
# (its program is built by tests/run.sh: other scripts run it too)

guarded GPUSIM_DEVICES=2 "$T/per_device" legacy2dev
if has "legacy pointers equal; dev0 1048576 dev1 2097152" "$WORK/out" \
   && has "after freeing dev1's: dev0 1048576 dev1 0" "$WORK/out" && has "after freeing dev0's: dev0 0 dev1 0" "$WORK/out"; then
    ok "equal legacy 32-bit pointers on two devices are two records, each freed on its own device"
else bad "legacy pointers on two devices" "$WORK/out"; fi
guarded GPUSIM_DEVICES=2 GPUMEM_LIMIT=0:4M,1:8M GPUMEM_REPORT="$WORK/pd.%n" GPUMEM_REPORT_FORMAT=json,text "$T/per_device" perdev
has "perdev: dev0 4MiB 0 +1 2; dev1 8MiB 0 +1 2; dev0 4194304 dev1 8388608" "$WORK/out" \
    && ok "two devices with their own limits (0:4M,1:8M): each reaches its own exactly" || bad "per-device limits on two devices" "$WORK/out"
# what was live at each device's peak, in every format: one entry per device
if [ "$(jq -c '[.at_peak[] | [.device, .bytes, (.groups | length)]]' "$WORK/pd.1.json" 2>&1)" = '[[0,4194304,1],[1,8388608,1]]' ] \
   && [ "$(grep -c -e '^Live at the peak of device 0 (4194304 bytes)' -e '^Live at the peak of device 1 (8388608 bytes)' "$WORK/pd.1.txt")" = 2 ]; then
    ok "what was live at the peak of each of two devices: both in JSON at_peak and in the text report"
else bad "at the peak of two devices: $(jq -c '.at_peak' "$WORK/pd.1.json" 2>&1 | head -c 300)" "$WORK/pd.1.txt"; fi
guarded GPUSIM_DEVICES=2 GPUSIM_REUSE_CTX=1 "$T/per_device" ctxreuse
has "ctxreuse: handle reused; dev0 2097152 dev1 0; sim dev0 2097152 dev1 0" "$WORK/out" \
    && ok "a destroyed context's handle handed out again for another device: allocations go to the right device" \
    || bad "reused context handle" "$WORK/out"
