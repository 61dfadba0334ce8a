# pyclients.sh - real Python CUDA clients under the guard: NVIDIA's
# cuda-bindings, numba-cuda and cuda.core start on the simulated driver with
# nothing but LD_LIBRARY_PATH, allocate, copy and free, and leave one buffer of
# a size of their own on purpose; the guard's JSON report at exit must show it
# (and nothing else), with the counts the driver has. Sourced by run.sh (uses
# its helpers and $B, $WORK, $PRELOAD).
#
# The clients live in $B/venv, put there by scripts/pyclients.sh (make test
# runs it). Where they could not be installed (offline), or under a sanitizer
# (whose runtime an uninstrumented Python cannot host), each test is skipped,
# saying why.

PYC=$B/venv/bin/python
# client LEAK_BYTES API WHERE ALLOCS: WHERE is the report list the leak is in
# at exit: "live", or "reclaimed" where the client tears its context down
# (numba resets the primary context at exit); ALLOCS is how many device
# allocations the client makes in all
PY_CLIENTS="bindings:3538944:cuMemAlloc:live:4 numba:2883584:cuMemAlloc:reclaimed:3
            core:3211264:cuMemAllocAsync:live:3"

py_skip=""
if [ -n "${GMG_SANITIZER:-}" ]; then
    py_skip="not under $GMG_SANITIZER"
elif [ ! -x "$PYC" ] || [ ! -f "$B/venv/.gmg-pyclients" ]; then
    py_skip="clients not installed: $(cat "$B/pyclients.skip" 2>/dev/null || echo "run make B=$B pyclients")"
fi

for py_spec in $PY_CLIENTS; do
    IFS=: read -r py_c py_leak py_api py_where py_allocs <<<"$py_spec"
    py_script=tests/python/client_$py_c.py
    if [ -n "$py_skip" ]; then
        skip "Python client $py_c" "$py_skip"
        continue
    fi
    # alone: the simulated driver is enough for the client to start and run
    if ! "$PYC" "$py_script" >"$WORK/out" 2>"$WORK/err" || ! has "client_$py_c ok" "$WORK/out"; then
        bad "Python client $py_c does not run on the simulated driver" "$WORK/err"
        continue
    fi
    rm -f "$WORK/py.json"
    guarded GPUMEM_REPORT="$WORK/py.json" GPUMEM_REPORT_FORMAT=json "$PYC" "$py_script"; rc=$?
    py_other=$([ "$py_where" = live ] && echo reclaimed || echo live)
    # the leak alone, in its list, by exact size and API; every other
    # allocation freed; as many allocations as the client made
    if [ $rc = 0 ] && has "client_$py_c ok" "$WORK/out" && jq -e --argjson n "$py_leak" --arg api "$py_api" \
           --arg w "$py_where" --arg o "$py_other" --argjson made "$py_allocs" '
           (.[$w] | length) == 1 and .[$w][0].bytes == $n and .[$w][0].count == 1 and .[$w][0].api == $api
           and .[$w][0].device == 0 and (.[$o] | length) == 0 and .totals.allocations_made == $made
           and .totals.refused == 0 and .totals.unknown_frees == 0' "$WORK/py.json" >/dev/null 2>&1 \
       && has "dev0.allocs $py_allocs" "$WORK/stats" \
       && has "dev0.live $([ "$py_where" = live ] && echo "$py_leak" || echo 0)" "$WORK/stats"; then
        ok "Python client $py_c under the guard: its $py_leak-byte leak ($py_api) is the one allocation $py_where at exit, $py_allocs made, as the driver counts"
    else
        bad "Python client $py_c under the guard (rc $rc): report $(jq -c "{live: [.live[] | [.bytes, .api]], reclaimed: [.reclaimed[] | [.bytes, .api]], made: .totals.allocations_made}" "$WORK/py.json" 2>&1 | head -c 300); driver: $(tr '\n' ' ' <"$WORK/stats" 2>/dev/null)" "$WORK/err"
        continue
    fi
    # the leak's stack starts at the client's own Python code
    if jq -e --arg w "$py_where" --arg f "$py_script" '[.[$w][0].frames[] | select(.lang == "python")] as $py
           | ($py | length) > 0 and any($py[]; .function == "main" and (.file | endswith($f)) and .line > 0)' \
           "$WORK/py.json" >/dev/null 2>&1; then
        ok "Python client $py_c: the leak's stack has Python frames down to main() in $py_script"
    else
        bad "Python client $py_c: no Python frame for main() in $py_script" "$WORK/py.json"
    fi
done

# cuda-bindings from two Python call sites with the same native stack: two
# groups, each naming its function and line; two refused sites, two messages
BS=$ROOT/tests/python/bindings_sites.py
bline() { grep -n "# SITE:$1\$" "$BS" | cut -d: -f1; }
if [ -n "$py_skip" ]; then
    skip "cuda-bindings call sites" "$py_skip"
else
    guarded "$PYC" "$BS"
    e1=$(printf '    File "%s", line %s, in alloc\n    File "%s", line %s, in weights' "$BS" "$(bline alloc)" "$BS" "$(bline weights)")
    e2=$(printf '    File "%s", line %s, in alloc\n    File "%s", line %s, in optimizer' "$BS" "$(bline alloc)" "$BS" "$(bline optimizer)")
    if has "bindings_sites ok" "$WORK/out" && \
       [ "$(grep -m1 -A2 -F "6.0 MiB (6291456 bytes) in 1 allocation (cuMemAlloc, device 0)" "$WORK/err" | tail -2)" = "$e1" ] && \
       [ "$(grep -m1 -A2 -F "1.0 MiB (1048576 bytes) in 1 allocation (cuMemAlloc, device 0)" "$WORK/err" | tail -2)" = "$e2" ]; then
        ok "cuda-bindings: two Python call sites, two groups naming weights() and optimizer() with their lines"
    else bad "cuda-bindings call sites" "$WORK/err"; fi
    guarded env GPUMEM_LIMIT=4M "$PYC" "$BS" refuse
    n=$(grep -c "^gpumemguard: refused cuMemAlloc" "$WORK/err")
    if has "bindings_sites ok" "$WORK/out" && [ "$n" = 2 ] && \
       grep -A3 -F "refused cuMemAlloc of 8.0 MiB" "$WORK/err" | grep -qxF "    File \"$BS\", line $(bline too_big_a), in too_big_a" && \
       grep -A3 -F "refused cuMemAlloc of 9.0 MiB" "$WORK/err" | grep -qxF "    File \"$BS\", line $(bline too_big_b), in too_big_b"; then
        ok "cuda-bindings: two refused Python call sites, two refusal messages (of 6 refusals), each naming its site"
    else bad "cuda-bindings refusals ($n messages)" "$WORK/err"; fi
fi
