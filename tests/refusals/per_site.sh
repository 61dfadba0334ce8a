# per_site.sh - a refusal's message: once per call site however often the
# site is refused, every refusal counted; the same for GPUMEM_ON_LIMIT=warn's
# line; worded as a refusal, not an error (tests/refusals/per_site.c,
# apitest). Sourced by tests/run.sh (its helpers, $T, $WORK).
build refusal_sites tests/refusals/per_site.c -L"$B/sim" -l:libcuda.so.1

# a refusal message once per call site, however often the site is refused;
# every refusal counted
tguarded 60 GPUMEM_LIMIT=1M "$T/refusal_sites"
if has "refuse: 3 + 2 refused; guard 524288 sim 524288" "$WORK/out" \
   && [ "$(grep -c "^gpumemguard: refused cuMemAlloc" "$WORK/err")" = 2 ] \
   && grep -A2 -F "gpumemguard: refused cuMemAlloc of 2.0 MiB" "$WORK/err" | grep -q " in refused_site_a " \
   && grep -A2 -F "gpumemguard: refused cuMemAlloc of 4.0 MiB" "$WORK/err" | grep -q " in refused_site_b " \
   && has "refused: 5;" "$WORK/err"; then
    ok "two call sites refused 3 and 2 times: one message each, 5 refusals counted"
else bad "refusal messages once per site ($(grep -c "^gpumemguard: refused" "$WORK/err") messages)" "$WORK/err"; fi
tguarded 60 GPUMEM_LIMIT=1M GPUMEM_ON_LIMIT=warn "$T/refusal_sites"
[ "$(grep -c "over the limit" "$WORK/err")" = 2 ] && has "refuse: 0 + 0 refused; guard 15204352 sim 15204352" "$WORK/out" \
    && ok "GPUMEM_ON_LIMIT=warn: one 'over the limit' line per call site, every allocation made and counted" \
    || bad "warn once per site" "$WORK/err"

# a refusal is not labelled an error
guarded GPUMEM_LIMIT=4M "$T/apitest" direct limit 4194304
has "gpumemguard: refused cuMemAlloc of 1 byte" "$WORK/err" && ! grep -q "error: refused" "$WORK/err" \
    && ok "a refusal reads 'gpumemguard: refused ...', not 'error:'" || bad "refusal label" "$WORK/err"

# the messages of 2048 call sites, then one line that says the rest are
# counted, not explained (they stopped without a word): the driver's out of
# memory at 2100 call sites
tguarded 300 GPUSIM_MEM=64M GPUMEM_REPORT=none "$T/refusal_sites" many 2100
msgs=$(grep -c "^gpumemguard: the driver refused cuMemAlloc" "$WORK/err")
told=$(grep -c "^gpumemguard: error: the driver's out-of-memory answers at 2048 call sites were explained: those at further call sites are counted, not explained" "$WORK/err")
if has "many: 2100 of 2100 refused" "$WORK/out" && [ "$msgs" = 2048 ] && [ "$told" = 1 ]; then
    ok "the driver's out of memory at 2100 call sites: 2048 explained, then one line saying the rest are counted, not explained"
else bad "refusals past the explained call sites: $msgs messages, told $told" "$WORK/out"; fi

# 1100 call sites refused on device 0, then on device 1: 2200 marks, of
# which the timeline keeps 1024 and counts the rest as dropped (past 2048
# sites and devices marked, the marks past them went uncounted)
tguarded 300 GPUSIM_DEVICES=2 GPUMEM_LIMIT=1M GPUMEM_REPORT_FORMAT=json GPUMEM_REPORT="$WORK/twodev.json" \
    "$T/refusal_sites" twodev 1100
marked=$(jq -r '.timeline | "\([.events[] | select(.kind != "refusal")] | length) \(.events | length) \(.events_dropped)"' \
         "$WORK/twodev.json" 2>/dev/null)
if has "many: 2200 of 1100 refused" "$WORK/out" && [ "$marked" = "0 1024 1176" ]; then
    ok "1100 call sites refused on two devices: 2200 marks, 1024 kept on the timeline and 1176 counted as dropped"
else bad "marks of 1100 call sites on two devices (other kinds, kept, dropped): '$marked'" "$WORK/out"; fi

# one call site refused by the quota and by the driver: each explained
# once, whichever came first
both_ok=1
for order in 0 1; do
    guarded GPUSIM_MEM=64M GPUMEM_LIMIT=256M "$T/refusal_sites" both $order
    if ! has "both: 2 2" "$WORK/out" || [ "$(grep -c "^gpumemguard: refused cuMemAlloc of 512.0 MiB" "$WORK/err")" != 1 ] \
       || [ "$(grep -c "^gpumemguard: the driver refused cuMemAlloc of 128.0 MiB" "$WORK/err")" != 1 ]; then
        both_ok=0
        cp "$WORK/err" "$WORK/both.err"
    fi
done
[ $both_ok = 1 ] && ok "one call site refused by the quota and then by the driver, or the other way round: each explained once" \
    || bad "a call site refused by the quota and by the driver: one hid the other" "$WORK/both.err"

# more new call sites refused at once than the report thread's queue holds
# (128 threads): those it could not take are said to be counted, not
# explained, and explained when refused again
tguarded 120 GPUSIM_MEM=64M GPUMEM_REPORT=none "$T/refusal_sites" burst 128
msgs=$(grep -c "^gpumemguard: the driver refused cuMemAlloc" "$WORK/err")
if has "burst: 256 of 256 refused" "$WORK/out" && [ "$msgs" = 128 ]; then
    ok "128 call sites refused at once by the driver: every site explained, those the queue could not take at their next refusal"
else bad "a burst of new call sites: $msgs of 128 explained" "$WORK/err"; fi
