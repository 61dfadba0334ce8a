# percent.sh - a percent limit is a share of each device's memory: a device
# the program has not allocated on yet shows that share too, never a
# placeholder of 1 byte (tests/integration/alloc.c). Sourced by tests/run.sh
# (its helpers, $T, $WORK).

rm -f "$WORK/p.prom"
guarded GPUSIM_DEVICES=2 GPUSIM_MEM=2G,8G GPUMEM_LIMIT=50% GPUMEM_REPORT_FORMAT=json GPUMEM_METRICS="$WORK/p.prom" "$T/alloc" 1 4096
lim=$(jq -c '[.devices[].limit]' "$WORK/err" 2>/dev/null)
if [ "$lim" = "[1073741824,4294967296]" ] && grep -q '^gpumem_limit_bytes{device="0",[^}]*} 1073741824$' "$WORK/p.prom"; then
    ok "GPUMEM_LIMIT=50%: a device not allocated on shows its share (1 GiB of 2 GiB) in the report and the metrics"
else bad "percent limit of an unused device: $lim" "$WORK/p.prom"; fi
