# names.sh - Python names outside Latin-1 (CJK function names, a file under
# astral-plane names) named exactly, in JSON and text, on every CPython of
# 3.10-3.13 here. Sourced by tests/run.sh after tests/python.sh (find_python).
if [ "${GMG_SANITIZER:-}" = tsan ]; then
    skip "Python names outside Latin-1" "TSan: the instrumented library cannot run in an uninstrumented interpreter"
else
    udir="$WORK/数据_𝔣𝔬𝔬"; mkdir -p "$udir"; upy="$udir/名前_𝔣.py"
    cp tests/python/unicode_names.py "$upy"
    for v in 3.10 3.11 3.12 3.13; do
        PY=$(find_python $v) || { skip "Python $v names outside Latin-1" "no python$v on this machine"; continue; }
        env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT_FORMAT=json,text GPUMEM_REPORT="$WORK/uni.$v" "$PY" "$upy" \
            >"$WORK/out" 2>"$WORK/err"
        want=$(printf '[[2097152,["数据加载","%s","café","%s","<module>","%s"]],[1048576,["数据加载","%s","読み込み","%s","<module>","%s"]]]' \
               "$upy" "$upy" "$upy" "$upy" "$upy" "$upy")
        got=$(jq -c '[.live[] | [.bytes, [.frames[] | select(.lang=="python") | .function, .file]]]' "$WORK/uni.$v.json" 2>&1)
        if [ "$got" = "$want" ] && grep -qxF "    File \"$upy\", line 19, in 数据加载" "$WORK/uni.$v.txt" \
           && grep -qF "in 読み込み" "$WORK/uni.$v.txt"; then
            ok "Python $v: function names in CJK and Latin-1, a file under astral-plane names: exact in JSON and text"
        else
            printf 'want %s\ngot  %s\n' "$want" "$got" >"$WORK/unidiff"; cat "$WORK/err" >>"$WORK/unidiff"
            bad "Python $v names outside Latin-1" "$WORK/unidiff"
        fi
    done
fi

# folded names flame graph tools can read: a file under a directory whose
# name is not UTF-8, a function name longer than a frame keeps: valid UTF-8,
# U+FFFD for the bytes that are not, the long name cut at a character and
# marked
if [ "${GMG_SANITIZER:-}" = tsan ]; then
    skip "folded Python names" "TSan: the instrumented library cannot run in an uninstrumented interpreter"
else
    ldir="$WORK/legacy_caf$(printf '\351')"; mkdir -p "$ldir"; cp tests/python/folded_names.py "$ldir/"
    env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT_FORMAT=folded GPUMEM_REPORT="$WORK/fold.txt" python3 "$ldir/folded_names.py" \
        >"$WORK/out" 2>"$WORK/err"
    if python3 - "$WORK/fold.txt" <<'PYEOF'
import sys
text = open(sys.argv[1], "rb").read().decode("utf-8")  # strict: every byte well formed
frames = [f for line in text.splitlines() for f in line.rsplit(" ", 1)[0].split(";")]
assert any("legacy_caf\ufffd" in f for f in frames), frames[:3]
long = [f for f in frames if f.startswith("xy")]
assert long and long[0].startswith("xy\u00e4\u00e4") and long[0].split(" (")[0].endswith("...") \
    and len(long[0].encode()) < 1400, long
PYEOF
    then ok "folded: a Python file under a directory name that is not UTF-8, and a function name past a frame's length: valid UTF-8 (U+FFFD), the name cut at a character and marked"
    else bad "folded names flame graph tools can read" "$WORK/fold.txt"; fi
    # the text report names that file by its bytes, as the file system has
    # them; JSON (UTF-8) with one U+FFFD for the byte that is not UTF-8
    env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT_FORMAT=text,json GPUMEM_REPORT="$WORK/raw" python3 "$ldir/folded_names.py" \
        >"$WORK/out" 2>"$WORK/err"
    if grep -qaF "File \"$ldir/folded_names.py\"" "$WORK/raw.txt" \
       && python3 -c 'import json, sys; r = json.load(open(sys.argv[1], encoding="utf-8")); fs = {f["file"] for g in r["live"] for f in g["frames"] if f["lang"] == "python"}; assert any(f.endswith("/legacy_caf\ufffd/folded_names.py") for f in fs), fs' "$WORK/raw.json"; then
        ok "text: a Python file under a directory name that is not UTF-8 named by its bytes; JSON: one U+FFFD for the byte"
    else bad "Python file names that are not UTF-8 in text and JSON" "$WORK/raw.txt"; fi
fi

# a file name with a newline and quotes: escaped in the text report, so
# that it cannot print a frame of its own; JSON keeps it as it is
if [ "${GMG_SANITIZER:-}" = tsan ]; then
    skip "a Python file name with a newline" "TSan: the instrumented library cannot run in an uninstrumented interpreter"
else
    env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT_FORMAT=text,json GPUMEM_REPORT="$WORK/nl" python3 tests/python/newline_name.py \
        >"$WORK/out" 2>"$WORK/err"
    if grep -qF '    File "model.py", line 1, in innocent\n    File "trainer.py", line 2, in load' "$WORK/nl.txt" \
       && ! grep -q '^    File "trainer.py"' "$WORK/nl.txt" \
       && python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); fs = [f["file"] for f in r["live"][0]["frames"] if f["lang"] == "python"]; assert fs[0].endswith("\n    File \"trainer.py"), fs' "$WORK/nl.json"; then
        ok "text: a Python file name holding a newline is written with \\n, no frame of its own; JSON keeps the name"
    else bad "a Python file name holding a newline" "$WORK/nl.txt"; fi
fi
