# fragmentation.sh - the fragmentation section's every number, in text and
# JSON: gaps, span, rounding waste the driver made, the device's free
# memory, also from NVML once the driver has shut down
# (tests/reports/fragmentation.c, tests/reports/order.c). Sourced by
# tests/run.sh (its helpers, $T, $WORK).
build fragmentation tests/reports/fragmentation.c -L"$B/sim" -l:libcuda.so.1

# fragmentation: six allocations end to end, the 2nd and 5th freed. Two gaps
# (256 KiB and 64 KiB); the 3rd and 4th touch, which is no gap. A 64 MiB
# device: its free memory at report time is 64 MiB less the live 3801088
tguarded 60 GPUSIM_MEM=64M "$T/fragmentation" frag
lo=$(sed -n 's/.*span \(0x[0-9a-f]*\)-.*/\1/p' "$WORK/out"); hi=$(sed -n 's/.*span 0x[0-9a-f]*-\(0x[0-9a-f]*\)$/\1/p' "$WORK/out")
if has "frag: end to end yes" "$WORK/out" && has "  live allocations: 4 (3.6 MiB (3801088 bytes) requested, 3.6 MiB (3801088 bytes) granted)" "$WORK/err" \
   && has "  size classes: 64KiB-1MiB: 2 1MiB-16MiB: 2" "$WORK/err" \
   && has "  address span: 3.9 MiB (4128768 bytes) [$lo, $hi)" "$WORK/err" \
   && has "  gaps: 2, 320.0 KiB (327680 bytes) in all, largest 256.0 KiB (262144 bytes)" "$WORK/err" && has "  span utilisation: 92.1%" "$WORK/err" \
   && has "  rounding waste: 0 bytes" "$WORK/err" && has "  device free at report time: 60.4 MiB (63307776 bytes) of 64.0 MiB (67108864 bytes)" "$WORK/err" \
   && ! has "device free at report time: unknown" "$WORK/err"; then
    ok "fragmentation (text): two gaps of 256 and 64 KiB counted exactly, touching neighbours no gap, span, utilisation, device free"
else bad "fragmentation, exact (text)" "$WORK/err"; fi
tguarded 60 GPUSIM_MEM=64M GPUMEM_REPORT_FORMAT=json "$T/fragmentation" frag
jq -e --arg lo "$lo" --arg hi "$hi" '.fragmentation[0] | .live_allocations == 4 and .requested_bytes == 3801088
        and .granted_bytes == 3801088 and .span_start == $lo and .span_end == $hi and .span_bytes == 4128768
        and .gaps == 2 and .gap_bytes == 327680 and .largest_gap == 262144 and .rounding_waste == 0
        and .device_free == 63307776 and .device_total == 67108864' "$WORK/err" >/dev/null 2>&1 \
    && ok "fragmentation (JSON): gaps 2, gap_bytes 327680, largest_gap 262144, span_start/span_end the driver's addresses" \
    || bad "fragmentation, exact (JSON)" "$WORK/err"

guarded GPUSIM_ROUND_LARGE=1 GPUMEM_REPORT_FORMAT=json "$T/fragmentation" rounding
jq -e '.fragmentation[0] | .requested_bytes == 3146729 and .granted_bytes == 4195328 and .rounding_waste == 1048599' \
    "$WORK/err" >/dev/null 2>&1 && ok "a driver that rounds large requests to 2 MiB: granted bytes and rounding waste are the driver's" \
    || bad "2 MiB rounding" "$WORK/err"

# a real driver has shut down before the report at exit (docs/gpu-validation.md):
# the device's free memory still comes from NVML, found by the UUID the guard
# kept while the driver answered
tguarded 60 GPUSIM_SHUTDOWN_AT_EXIT=1 "$T/group_order" order
has "device free at report time: 8.0 GiB (8579448832 bytes) of 8.0 GiB (8589934592 bytes) (NVML)" "$WORK/err" \
    && ok "the report at exit, after the driver shut down, has the device's free memory from NVML" \
    || bad "device free memory at exit after the driver's shutdown" "$WORK/err"
