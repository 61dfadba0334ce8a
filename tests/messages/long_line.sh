# long_line.sh - a message of the guard's longer than its line (1,024
# bytes with the newline) is cut to the line: 1,022 characters and a
# newline, nothing written past it. Sourced by tests/run.sh (its helpers,
# $T/nulls).
# the message: a missing metrics directory named in 1,250 bytes
deep="$WORK/$(printf 'd%.0s' $(seq 1 240))/$(printf 'e%.0s' $(seq 1 240))/$(printf 'f%.0s' $(seq 1 240))"
deep="$deep/$(printf 'g%.0s' $(seq 1 240))/$(printf 'h%.0s' $(seq 1 240))/m.prom"
guarded GPUMEM_METRICS="$deep" "$T/nulls"; rc=$?
line=$(grep -a "^gpumemguard: error: GPUMEM_METRICS=" "$WORK/err")
if [ $rc = 0 ] && [ "$(printf '%s' "$line" | wc -c)" = 1022 ] && [ "$(grep -ac "^gpumemguard: error: GPUMEM_METRICS=" "$WORK/err")" = 1 ] \
   && [ "$line" = "$(printf "gpumemguard: error: GPUMEM_METRICS='%s" "$deep" | head -c 1022)" ] \
   && ! tr -d '\n -~' <"$WORK/err" | grep -q . && has "nulls:" "$WORK/out"; then
    ok "a message longer than the guard's 1,024-byte line: cut to 1,022 characters and its newline, nothing else written"
else bad "a long message: $(printf '%s' "$line" | wc -c) characters (rc $rc)" "$WORK/err"; fi
