# address_ranges.sh - the text report's "Address ranges" section: reserved
# ranges and mappings (not counted), listed apart from the allocations, and
# no such section when there are none. Sourced by tests/run.sh.
ranges_section() { sed -n '/^Address ranges (reserved or mapped, not counted):$/,/^Live at the peak of device /p' "$1"; }
guarded "$T/apitest" direct families
ranges_section "$WORK/err" >"$WORK/ranges"
apis=$(grep -o 'allocation (cu[A-Za-z]*, device 0) allocated from:' "$WORK/ranges" | sort | tr '\n' ' ')
guarded "$T/alloc" 0 4096
if [ "$apis" = "allocation (cuMemAddressReserve, device 0) allocated from: allocation (cuMemMap, device 0) allocated from: " ] \
   && has "8.0 MiB (8388608 bytes) in 1 allocation (cuMemAddressReserve, device 0) allocated from:" "$WORK/ranges" \
   && has "alloc: 0" "$WORK/out" && has "SUMMARY: gpumemguard: 4096 bytes in 1 allocation still live at exit" "$WORK/err" \
   && ! grep -q "^Address ranges" "$WORK/err"; then
    ok "text report: reserved ranges and mappings in their own section (cuMemAddressReserve, cuMemMap), no section for a program with none"
else bad "the Address ranges section: '$apis'" "$WORK/ranges"; fi
