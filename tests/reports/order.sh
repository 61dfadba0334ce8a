# order.sh - a report's groups biggest first, in text and JSON, whatever
# order they were made in; equal groups in a fixed order
# (tests/reports/order.c). Sourced by tests/run.sh (its helpers, $T, $WORK).
# (its program is built by tests/run.sh: other scripts run it too)

# groups biggest first: 6 MiB in 1 allocation, 3 MiB in 3, 1 MiB
# in 2, made in another order and not in order of their counts
tguarded 60 "$T/group_order" order
heads=$(before_peak "$WORK/err" | grep -oE "\(([0-9]+) bytes\) in [0-9]+ allocations? \(cuMemAlloc, device 0\)" | tr -d '(' | cut -d' ' -f1,4 | tr '\n' ' ')
if has "order: guard 10485760 sim 10485760" "$WORK/out" && [ "$heads" = "6291456 1 3145728 3 1048576 2 " ] \
   && grep -A1 -F "(6291456 bytes) in 1 allocation " "$WORK/err" | grep -q " in site_big "; then
    ok "live groups are listed biggest first (6, 3, 1 MiB), not in the order made or by count"
else bad "group order: $heads" "$WORK/err"; fi
tguarded 60 GPUMEM_REPORT_FORMAT=json "$T/group_order" order
jq -e '[.live[] | [.bytes, .count]] == [[6291456, 1], [3145728, 3], [1048576, 2]] and .live[0].frames[0].function == "site_big"' \
    "$WORK/err" >/dev/null 2>&1 && ok "JSON live groups biggest first" || bad "JSON group order" "$WORK/err"

# groups of equal bytes and count (one call site on two devices) keep a
# fixed order, device 0 then 1, whichever was made first
tguarded 60 GPUSIM_DEVICES=2 GPUMEM_REPORT_FORMAT=json "$T/group_order" ties
has "ties: guard 1048576 1048576" "$WORK/out" \
    && jq -e '[.live[] | [.device, .bytes, .count, .frames[0].function]] == [[0, 1048576, 1, "tie_site"], [1, 1048576, 1, "tie_site"]]' \
       "$WORK/err" >/dev/null 2>&1 \
    && ok "equal groups of one call site on two devices: listed device 0 then device 1, not in the order made" \
    || bad "order of equal groups" "$WORK/err"
