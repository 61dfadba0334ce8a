# names.sh - the program's name in reports and metrics labels: one that is
# not UTF-8, one longer than 255 bytes (copies of tests/integration/alloc.c).
# Sourced by tests/run.sh (its helpers, $T, $WORK).

# JSON (RFC 8259) and Prometheus label values are UTF-8: a program whose
# name is not (a byte of another encoding) still gets a valid report and a
# metrics file promtool takes
odd="$WORK/$(printf 'odd\xffname')"
cp "$T/alloc" "$odd"
rm -f "$WORK/u.prom"
guarded GPUMEM_REPORT_FORMAT=json GPUMEM_METRICS="$WORK/u.prom" "$odd" 0 4096
jsonok=$(python3 -c 'import json,sys; d=json.loads(open(sys.argv[1],"rb").read().decode("utf-8")); print(d["exe"].endswith("odd\ufffdname"))' "$WORK/err" 2>/dev/null)
promok=1
if command -v promtool >/dev/null 2>&1; then promtool check metrics <"$WORK/u.prom" >/dev/null 2>&1 || promok=0; fi
if [ "$jsonok" = True ] && [ $promok = 1 ] && grep -q "exe=\"odd$(printf '\xef\xbf\xbd')name\"" "$WORK/u.prom"; then
    ok "a program name that is not UTF-8: JSON report and metrics labels stay UTF-8 (U+FFFD)"
else bad "non-UTF-8 program name: JSON valid '$jsonok', promtool $promok" "$WORK/u.prom"; fi
rm -f "$odd"

# a program whose path is longer than 255 bytes (a deep build or conda
# tree) is named whole: the report's exe, and its file name in the metrics
# file's exe label, never a cut-off prefix of it
deep="$WORK/$(printf 'd%.0s' $(seq 1 150))/$(printf 'e%.0s' $(seq 1 100))"
mkdir -p "$deep"; cp "$T/alloc" "$deep/alloc_program_with_a_long_name"
rm -f "$WORK/l.prom"
guarded GPUMEM_REPORT_FORMAT=json GPUMEM_METRICS="$WORK/l.prom" "$deep/alloc_program_with_a_long_name" 0 4096
exe=$(jq -r '.exe' "$WORK/err" 2>/dev/null)
if [ "$exe" = "$deep/alloc_program_with_a_long_name" ] \
   && grep -q '^gpumem_used_bytes{device="0",pid="[0-9]*",exe="alloc_program_with_a_long_name",host="[^"]*",pidns="[0-9]*"} 4096$' "$WORK/l.prom"; then
    ok "a program path of ${#exe} bytes is named whole in the report and in the metrics exe label"
else bad "long program path cut short: report exe '$exe'" "$WORK/l.prom"; fi
rm -rf "$WORK/$(printf 'd%.0s' $(seq 1 150))"
