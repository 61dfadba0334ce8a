# driver_oom.sh - gpumemguard top counts the driver's own out-of-memory
# answers per device (OOMS, driver_oom): a process that asks the driver for
# 64 GiB of its 8 GiB device, with no limit. Sourced by tests/run.sh after
# tests/top.sh (its helpers tbg, tready, tsettle, tq, tkill).
if command -v jq >/dev/null 2>&1; then
    tbg O "$TT" hold "$WORK/O.ready" "$WORK/O.done" $((2 * MiB)) 0 $((64 * 1024 * MiB)) 0; PO=$!
    if tready "$WORK/O.ready" $PO && tsettle $PO $((2 * MiB)); then
        o=$("$TOPCMD" top --json --pid $PO | jq -c '.processes[0] | [.driver_oom, .refused, .devices[0].driver_oom, .devices[0].used]')
        "$TOPCMD" top --once --pid $PO >"$WORK/O.txt"
        if [ "$o" = "[1,0,1,2097152]" ] && has "refused" "$WORK/O.out" \
           && grep -qE "^ +$PO +0 +2\.0 MiB +none +2\.0 MiB +0 +1 " "$WORK/O.txt"; then
            ok "top: the driver's own out of memory counted per device (OOMS 1, refused 0) for a process with no limit"
        else bad "top: driver out of memory ($o)" "$WORK/O.txt"; fi
    else bad "top: the driver out-of-memory process did not start" "$WORK/O.err"; fi
    touch "$WORK/O.done"; tkill $PO
fi
