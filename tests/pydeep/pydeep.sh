# pydeep.sh - sourced by tests/run.sh: a long Python stack keeps its
# outermost frames (<module>, the user's entry function) and its innermost
# ones, with a mark saying how many frames were left out between them, in
# the text, JSON and folded reports; and Python frames do not use up the
# native frames' depth. Frames are innermost first (text, JSON).
PYD=$ROOT/tests/pydeep/deep.py
if [ "${GMG_SANITIZER:-}" = tsan ]; then
    skip "long Python stacks" "TSan: the library cannot be preloaded into an uninstrumented interpreter"
elif ! PYX=$(command -v python3); then
    skip "long Python stacks" "no python3"
else
    # 40 deep: <module>, main, 41 recurse (n = 40 .. 0), leaf = 44 frames; 32 kept:
    # 16 innermost (leaf, 15 recurse), the mark (13 left out), 15 outermost (13 recurse, main, <module>)
    env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT=stderr GPUMEM_REPORT_FORMAT=text "$PYX" "$PYD" 40 >"$WORK/out" 2>"$WORK/err"
    grp=$(grep -m1 -A40 -F "(3145728 bytes) in 1 allocation (cuMemAlloc, device 0) allocated from:" "$WORK/err")
    first=$(echo "$grp" | sed -n 2p); last_py=$(echo "$grp" | grep '^    File ' | tail -1)
    if echo "$first" | grep -qF "in leaf" && echo "$last_py" | grep -qF "in <module>" \
       && echo "$grp" | grep -B1 -F "in <module>" | head -1 | grep -qF "in main" \
       && echo "$grp" | grep -qxF "    ... [13 Python frames left out] ..." \
       && [ "$(echo "$grp" | grep -c '^    File ')" = 31 ] && echo "$grp" | grep -q '^    #0 .* in cuMemAlloc_v2\|^    #0 '; then
        ok "a 40-deep Python recursion keeps leaf (innermost), then '... [13 Python frames left out] ...', then main and <module> (outermost), 31 Python frames and the native ones below them"
    else bad "a long Python stack keeps its outermost frames" "$WORK/err"; fi
    env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT="$WORK/deep.json" GPUMEM_REPORT_FORMAT=json "$PYX" "$PYD" 40 >"$WORK/out" 2>"$WORK/err"
    if "$PYX" - "$WORK/deep.json" <<'PYEOF'
import json, sys
r = json.load(open(sys.argv[1]))
g = [g for g in r["live"] if g["bytes"] == 3 << 20][0]
py = [f for f in g["frames"] if f["lang"] == "python"]
marks = [f for f in py if "left_out" in f]
assert len(marks) == 1 and marks[0]["left_out"] == 13 and marks[0]["function"] == "[13 Python frames left out]", marks
assert py[0]["function"] == "leaf" and py[-1]["function"] == "<module>" and py[-2]["function"] == "main", py
assert py.index(marks[0]) == 16, py.index(marks[0])
assert any(f["lang"] == "native" for f in g["frames"])
PYEOF
    then ok "JSON: the same stack, innermost first, with one {\"function\": \"[13 Python frames left out]\", \"left_out\": 13} frame after the 16 innermost"
    else bad "JSON: a long Python stack's mark" "$WORK/deep.json"; fi
    env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT="$WORK/deep.folded" GPUMEM_REPORT_FORMAT=folded "$PYX" "$PYD" 40 >"$WORK/out" 2>"$WORK/err"
    if grep -q "^<module> (.*deep.py:[0-9]*);main (.*);recurse .*;\[13 Python frames left out\];recurse .*;leaf (.*deep.py:[0-9]*);" "$WORK/deep.folded"; then
        ok "folded (outermost first, as flame graphs read): '<module>;main;recurse...;[13 Python frames left out];recurse...;leaf;...'"
    else bad "folded: a long Python stack's mark" "$WORK/deep.folded"; fi
    # deeper than 65,536 frames (CPython 3.11+ recurses in Python without
    # the C stack): 70,004 frames, the outermost still main and <module>
    env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT=stderr GPUMEM_REPORT_FORMAT=text "$PYX" "$PYD" 70000 >"$WORK/out" 2>"$WORK/err"
    grp=$(grep -m1 -A40 -F "(3145728 bytes) in 1 allocation (cuMemAlloc, device 0) allocated from:" "$WORK/err")
    if echo "$grp" | grep -qxF "    ... [69973 Python frames left out] ..." \
       && echo "$grp" | grep '^    File ' | tail -2 | head -1 | grep -qF "in main" \
       && echo "$grp" | grep '^    File ' | tail -1 | grep -qF "in <module>"; then
        ok "a 70,000-deep Python recursion keeps main and <module> outermost and says 69973 frames were left out"
    else bad "a Python stack deeper than 65,536 frames" "$WORK/err"; fi
    # a shallow stack has no mark, and all its frames
    env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT=stderr "$PYX" "$PYD" 5 >"$WORK/out" 2>"$WORK/err"
    if ! grep -q "left out" "$WORK/err" && [ "$(before_peak "$WORK/err" | grep -m1 -A40 -F "(3145728 bytes) in 1 allocation (cuMemAlloc, device 0) allocated from:" | grep -c '^    File ')" = 9 ]; then
        ok "a 5-deep recursion keeps all its 9 Python frames, no mark"
    else bad "a short Python stack is kept whole" "$WORK/err"; fi
fi
