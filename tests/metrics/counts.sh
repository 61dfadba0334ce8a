# counts.sh - the metrics file end to end (no part stubbed): one call site on
# two devices is two series; the allocation and free counters and the live
# allocations per device equal what the program did. Sourced by tests/run.sh.
# (The site is matched by its function alone: TSan builds have no file:line.)
build counts tests/metrics/counts.c -L"$B/sim" -l:libcuda.so.1
guarded GPUSIM_DEVICES=2 GPUMEM_METRICS="$WORK/counts.prom" "$T/counts"
mc() { grep -E "^$1\{device=\"$2\"," "$WORK/counts.prom" | awk '{print $NF}'; }
if has "counts: done" "$WORK/out" && [ "$(mc gpumem_allocations_total 0)" = 5 ] && [ "$(mc gpumem_allocations_total 1)" = 3 ] \
   && [ "$(mc gpumem_frees_total 0)" = 2 ] && [ "$(mc gpumem_frees_total 1)" = 1 ] \
   && [ "$(mc gpumem_live_allocations 0)" = 3 ] && [ "$(mc gpumem_live_allocations 1)" = 2 ] \
   && grep -qE '^gpumem_site_bytes\{device="1",.*rank="1",site="site[^"]*"\} 6291456$' "$WORK/counts.prom" \
   && grep -qE '^gpumem_site_bytes\{device="0",.*rank="2",site="site[^"]*"\} 3145728$' "$WORK/counts.prom"; then
    ok "metrics end to end: allocations (5, 3), frees (2, 1) and live allocations (3, 2) per device as made; one call site on two devices is two series, ranked by bytes"
else bad "metrics counters and one site on two devices" "$WORK/counts.prom"; fi
