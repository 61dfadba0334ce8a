# pictures.sh - the HTML report and `gpumemguard view`: every page a test
# makes is loaded in a real browser (headless Chromium), which must run its
# script with no error and show the numbers of the JSON report of the same
# run; names that are markup run nothing; screenshots are kept under
# $B/pictures. Sourced by run.sh (uses its helpers and $B, $T, $ROOT, $WORK,
# $CC, $SAN_FLAGS, $CUDA_INC, $PRELOAD).

PICS=$B/pictures
mkdir -p "$PICS"
GMG=$B/gpumemguard
CHROME=$(command -v chromium || command -v chromium-browser || true)
build hostile_names tests/integration/hostile_names.c -L"$B/sim" -l:libcuda.so.1
build stacks tests/bench/stacks.c -L"$B/sim" -l:libcuda.so.1
build edges tests/settings/edges.c -L"$B/sim" -l:libcuda.so.1 # the trace's timeline cases (also run alone)
build nvtxpool tests/pools/nvtxpool.c -L"$B/sim" -l:libcuda.so.1

# browse PAGE NAME: PAGE in headless Chromium (a profile of its own); its
# DOM after the page's script in $WORK/NAME.dom, the browser's log in
# $WORK/NAME.log. 0 when the page says it is drawn (data-gmg-ready) and
# the console got nothing (no error, no uncaught exception, no message).
browse() {
    local page=$1 name=$2
    rm -rf "$WORK/chrome-$name"
    HOME=$WORK timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --no-first-run --disable-extensions \
        --user-data-dir="$WORK/chrome-$name" --enable-logging=stderr --v=0 --dump-dom \
        "file://$(cd "$(dirname "$page")" && pwd)/$(basename "$page")" >"$WORK/$name.dom" 2>"$WORK/$name.log"
    { grep ':CONSOLE' "$WORK/$name.log"; grep -o 'id="gmg-error">[^<]*' "$WORK/$name.dom"; } >"$WORK/$name.why"
    grep -q 'data-gmg-ready="1"' "$WORK/$name.dom" && ! grep -q ':CONSOLE' "$WORK/$name.log"
}
# shot PAGE PNG: a screenshot, 1280 pixels wide
shot() {
    rm -rf "$WORK/chrome-shot"
    HOME=$WORK timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --no-first-run --disable-extensions \
        --user-data-dir="$WORK/chrome-shot" --hide-scrollbars --window-size=1280,${3:-2300} --screenshot="$2" \
        "file://$(cd "$(dirname "$1")" && pwd)/$(basename "$1")" >/dev/null 2>&1 && [ -s "$2" ]
}
# embedded PAGE: the JSON the page carries, as jq reads it
embedded() { sed -z 's/.*<script type="application\/json" id="gmg-data">//; s/<\/script>.*//' "$1"; }
# dom_has NAME TEXT...: every TEXT is in the DOM of page NAME; the missing ones in $miss
dom_has() { local n=$1 t; shift; for t in "$@"; do grep -qF -- "$t" "$WORK/$n.dom" || miss="$miss [$t]"; done; }
# scripted PAGE NAME: PAGE in Chromium with the script on standard input run
# once the page is loaded (before </body>); its DOM in $WORK/NAME.dom
scripted() {
    python3 -c 'import sys; h = open(sys.argv[1]).read(); i = h.rfind("</body>"); open(sys.argv[2], "w").write(h[:i] + "<script>" + sys.stdin.read() + "</script>" + h[i:])' \
        "$1" "$WORK/$2-scripted.html"
    rm -rf "$WORK/chrome-$2"
    HOME=$WORK timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --no-first-run --disable-extensions \
        --user-data-dir="$WORK/chrome-$2" --virtual-time-budget=3000 --dump-dom "file://$WORK/$2-scripted.html" \
        >"$WORK/$2.dom" 2>/dev/null
}
# roots PAGE NAME: PAGE in Chromium with each flame graph's top-left frame
# (its root) hovered; the tooltips, one line per graph, in $WORK/NAME.roots
roots() {
    scripted "$1" "$2" <<'JSEOF'
window.addEventListener('load', function () { setTimeout(function () {
  var out = [];
  document.querySelectorAll('canvas').forEach(function (c, i) {
    var r = c.getBoundingClientRect();
    c.dispatchEvent(new MouseEvent('mousemove', {clientX: r.left + 5, clientY: r.top + 9, bubbles: true}));
    var t = document.querySelector('.tip');
    out.push('canvas ' + i + ': ' + (t ? t.textContent.replace(/\n/g, ' / ') : 'no tip'));
  });
  var p = document.createElement('pre'); p.id = 'roots-out'; p.textContent = out.join('\n'); document.body.appendChild(p);
}, 300); });
JSEOF
    grep -o 'canvas [0-9]*: [^<]*' "$WORK/$2.dom" >"$WORK/$2.roots"
}

if [ -n "${GMG_SANITIZER:-}" ]; then
    # the pages are made and checked here; their script is the same in every
    # build, and the plain suite loads each of them in Chromium
    CHROME=""
    skip "HTML pages in a browser" "$GMG_SANITIZER build: the plain suite loads the pages in Chromium"
elif [ -z "$CHROME" ]; then
    skip "HTML pages in a browser" "no chromium on this machine (scripts/ensure-deps.sh installs it)"
fi

# ------------------------------------------ a real run: JSON and HTML at once
guarded GPUMEM_REPORT="$WORK/fam" GPUMEM_REPORT_FORMAT=json,html "$T/apitest" direct families
FJ=$WORK/fam.json FH=$WORK/fam.html
if [ -s "$FJ" ] && [ -s "$FH" ] && embedded "$FH" | jq -S . >"$WORK/emb.json" 2>/dev/null && jq -S . "$FJ" >"$WORK/fj.json" \
   && cmp -s "$WORK/emb.json" "$WORK/fj.json" && ! grep -q -i -E '<(script|link|img|iframe)[^>]* (src|href)=' "$FH" \
   && [ "$(grep -o -i '</script' "$FH" | wc -l)" = 2 ] \
   && [ "$(grep -o -E '[a-z]+://[^"'"'"' ]*' "$FH" | sort -u)" = "http://www.w3.org/2000/svg" ]; then
    ok "html: one self-contained page (no src or href, no URL but the SVG namespace, the page's own two scripts) carrying exactly the JSON report of the same run"
else bad "html page and JSON report" "$WORK/err"; fi

# the map of the span: one block per allocation, its gaps those of the figures
if jq -e '.fragmentation[0] | (.map | length) == .live_allocations and .map_merged == false
          and ([.map[][2]] | add) == .live_allocations and ([.map[][3]] | add) == .granted_bytes
          and (([range(1; .map | length) as $i | .map[$i][0] - (.map[$i - 1][0] + .map[$i - 1][1]) | select(. > 0)]
                | [length, (add // 0), (max // 0)]) == [.gaps, .gap_bytes, .largest_gap])
          and (.map[-1][0] + .map[-1][1]) == .span_bytes' "$FJ" >/dev/null; then
    ok "json: fragmentation[].map draws the span: one block per allocation, and its gaps are the section's (count, bytes, largest)"
else bad "fragmentation map" "$FJ"; fi

if [ -n "$CHROME" ]; then
    if browse "$FH" fam; then
        miss=""
        dom_has fam "$(jq -r '.totals | "(\(.live_bytes) bytes) in \(.live_allocations) allocations"' "$FJ")" \
            "$(jq -r '.devices[0] | "in use \(.in_use) bytes"' "$FJ" | sed 's/in use \([0-9]*\) bytes/(\1 bytes), peak/')" \
            "$(jq -r '.devices[0] | "(\(.peak) bytes), refused \(.refused)"' "$FJ")" \
            "$(jq -r '.fragmentation[0] | "(\(.span_bytes) bytes)"' "$FJ")" \
            "$(jq -r '.fragmentation[0] | "largest \(.largest_gap / 1024 | floor).0 KiB (\(.largest_gap) bytes)"' "$FJ")" \
            "$(jq -r '.version' "$FJ")" "$(jq -r '.exe' "$FJ")"
        for b in $(jq -r '.live[].bytes' "$FJ"); do dom_has fam ">$b</td>"; done
        for f in $(jq -r '.live[].frames[0].function' "$FJ" | sort -u); do dom_has fam ">$f "; done
        nb=$(grep -o 'class="block"' "$WORK/fam.dom" | wc -l)
        [ "$nb" = "$(jq '.fragmentation[0].map | length' "$FJ")" ] || miss="$miss [map blocks: $nb]"
        # what the report lacks is said, not left blank
        dom_has fam "No timeline: this report carries no samples" "does not say what was live at the peak" \
            "This report names no owners"
        [ -z "$miss" ] && ok "html in Chromium: no script error; it shows the JSON report's totals, each device's in use and peak, every group's bytes and function, the span and its blocks, and says what it lacks" \
            || bad "html in Chromium: missing$miss" "$WORK/fam.why"
    else bad "html in Chromium: script error or not drawn" "$WORK/fam.why"; fi
    shot "$FH" "$PICS/report.png" && ok "html: screenshot in $PICS/report.png" || bad "html screenshot"
    # the group table sorted by a column in which rows tie: the tied rows biggest first, in either direction
    scripted "$FH" sort <<'JSEOF'
window.addEventListener('load', function () { setTimeout(function () {
  var out = [], th = [].filter.call(document.querySelectorAll('#gmg-groups th'), function (t) { return t.textContent === 'allocations'; })[0];
  function rows() { return [].map.call(document.querySelectorAll('#gmg-groups tbody tr'), function (r) { return r.children[2].textContent + ':' + r.children[1].textContent; }).join(' '); }
  th.click(); out.push('desc ' + rows()); th.click(); out.push('asc ' + rows());
  var p = document.createElement('pre'); p.id = 'sort-out'; p.textContent = out.join('\n'); document.body.appendChild(p);
}, 200); });
JSEOF
    if python3 - "$WORK/sort.dom" <<'PYEOF'
import re, sys
dom = open(sys.argv[1]).read()
m = re.search(r'<pre id="sort-out">(.*?)</pre>', dom, re.S)
assert m, "no output"
for line in m.group(1).splitlines():
    how, cells = line.split(" ", 1)
    rows = [(int(c), int(b)) for c, b in re.findall(r"(\d+):(\d+)", cells)]  # allocations:bytes
    counts = [r[0] for r in rows]
    assert counts == sorted(counts, reverse=(how == "desc")), line
    ties = [(a, b) for a, b in zip(rows, rows[1:]) if a[0] == b[0]]
    assert ties, "no tie to check: " + line
    assert all(a[1] >= b[1] for a, b in ties), line
PYEOF
    then ok "html: the group table sorted by allocations, either way: rows of equal counts biggest first"
    else bad "html: tied rows in a sorted table" "$WORK/sort.dom"; fi
fi

# ------------------------------------------------- memviz: torch's snapshot
# read as memory_viz reads it (its opcodes, its memo, its block layout) and
# by Python's pickle, field by field against the JSON report of the run
memviz_check() { # NAME: $WORK/NAME.pickle against $WORK/NAME.json
    python3 tests/python/memviz_read.py "$WORK/$1.pickle" "$WORK/$1.json" >"$WORK/mv.out" 2>&1
}
if ! command -v python3 >/dev/null 2>&1; then
    skip "memviz snapshots" "no python3 to read them"
else
    guarded GPUMEM_REPORT="$WORK/mv" GPUMEM_REPORT_FORMAT=json,memviz "$T/apitest" direct families
    if memviz_check mv && has "memviz ok: 6 segments" "$WORK/mv.out" && [ "$(head -c 2 "$WORK/mv.pickle" | od -An -tx1 | tr -d ' ')" = 8002 ]; then
        ok "memviz: a protocol-2 pickle of torch's snapshot shape (segments of blocks, device_traces, no 'category'), read with memory_viz's opcodes and Python's pickle alike, every segment an allocation of the JSON report"
    else bad "memviz of a run" "$WORK/mv.out"; fi
    guarded GPUMEM_REPORT="$WORK/mvmany" GPUMEM_REPORT_FORMAT=json,memviz "$T/stacks" 2400 1200
    if memviz_check mvmany && has "memviz ok: 2400 segments" "$WORK/mv.out"; then
        ok "memviz over 2400 allocations in 1200 stacks: each stack's frames written once, fetched from the memo after"
    else bad "memviz over many stacks" "$WORK/mv.out"; fi
fi

# ------------------------------------------------ trace: Chrome trace events
guarded GPUMEM_REPORT="$WORK/tr" GPUMEM_REPORT_FORMAT=json,trace "$T/apitest" direct families
if jq -e --slurpfile r "$WORK/tr.json" '.traceEvents as $e | $r[0] as $r
        | ($e | map(select(.ph == "M" and .name == "process_name")) | .[0].args.name) == $r.exe
        and ([$e[] | select(.ph == "C" and (.name | startswith("in use, device ")))] | length) >= ($r.devices | length)
        and all($r.devices[]; . as $d | [$e[] | select(.ph == "C" and .name == "in use, device \($d.device)")] | last.args.bytes == $d.in_use)
        and all($e[]; (.ts // 0) >= 0 and (.pid == $r.pid))
        and ([$e[] | select(.ph == "i" and .s == "p")] | last | .name == "report (exit, dump 1)"
             and .args.live_bytes == $r.totals.live_bytes and .args.refused == $r.totals.refused)' "$WORK/tr.trace.json" >/dev/null; then
    ok "trace: Chrome trace events (traceEvents): the process named, a counter per device ending at the JSON report's in-use bytes, the report as an instant event"
else bad "trace of a run" "$WORK/tr.trace.json"; fi

# the trace's counters are the timeline's samples and its instants the
# timeline's marks: a quota refusal, then the driver's own out of memory
for tcase in "GPUMEM_LIMIT=256 refusal" "GPUSIM_MEM=1M driver_oom"; do
    set -- $tcase
    guarded "$1" GPUMEM_REPORT="$WORK/tl" GPUMEM_REPORT_FORMAT=json,trace "$T/edges" alloc 4194304
    if jq -e --slurpfile r "$WORK/tl.json" --arg kind "$2" '.traceEvents as $e | $r[0].timeline as $t
            | ($t.events | map(.kind) | index($kind)) != null
            and all($t.devices[]; . as $d
                | ([$e[] | select(.ph == "C" and .name == "in use, device \($d.device)") | .args.bytes] | .[0:-1])
                  == [$d.samples[][1]])
            and ([$e[] | select(.ph == "i" and (.name | startswith("report (") | not)) | [.name, .args.bytes]]
                 == [$t.events[] | [(.kind + (if .device >= 0 then ", device \(.device)" else "" end)), .bytes]])' \
            "$WORK/tl.trace.json" >/dev/null; then
        ok "trace: every counter point is a sample of the JSON report's timeline and every instant one of its marks ($2)"
    else bad "trace against the timeline ($2)" "$WORK/tl.trace.json"; fi
done

# ------------------------------------------------------------ gpumemguard view
if "$GMG" view "$FJ" -o "$WORK/v.html" >"$WORK/out" 2>"$WORK/err" && cmp -s "$WORK/v.html" "$FH" \
   && [ "$(cat "$WORK/out")" = "$WORK/v.html" ] && cp "$FJ" "$WORK/saved.json" && "$GMG" view "$WORK/saved.json" >"$WORK/out" 2>&1 \
   && cmp -s "$WORK/saved.html" "$FH" && "$GMG" view - -o - <"$FJ" | cmp -s - "$FH"; then
    ok "view REPORT.json [-o OUT.html]: the very page the run wrote (default OUT: REPORT.html; '-' for stdin and stdout)"
else bad "view of a saved report" "$WORK/err"; fi

# refused: what is no report, or a newer one; clear message, status 1, nothing written
printf 'hello\n' >"$WORK/text.json"
printf '{"tool":"other","schema":1}' >"$WORK/other.json"
head -c 300 "$FJ" >"$WORK/cut.json"
jq -c '.schema = 99' "$FJ" >"$WORK/newer.json"
printf '[1,2]' >"$WORK/array.json"
printf '{"tool":"gpumemguard" "schema":1}' >"$WORK/nocomma.json"
jq -c '.schema = "1"' "$FJ" >"$WORK/strschema.json"
# JSON with the report's tool and schema but not its shape: the page would
# draw a clean run of nothing, or its script would throw
printf '{"tool":"gpumemguard","schema":1}' >"$WORK/bare.json"
jq -c '.devices = 5' "$FJ" >"$WORK/devnum.json"
jq -c '.live[0].frames = [null]' "$FJ" >"$WORK/nullframe.json"
jq -c '.timeline = {"devices": [{"device": 0}]}' "$FJ" >"$WORK/nosamples.json"
jq -c '.live[1].bytes = "12"' "$FJ" >"$WORK/strbytes.json"
jq -c '. + {"liv\u0065": 7}' "$FJ" | sed 's/"live":7/"liv\\u0065":7/' >"$WORK/escaped.json"
miss=""
for c in "text:is not a gpumemguard JSON report: not JSON" "other:is JSON but not a gpumemguard report" \
         "cut:is not a gpumemguard JSON report: not JSON (" "array:is not a gpumemguard JSON report" \
         "newer:is a report of schema 99, which this gpumemguard" "missing:cannot read $WORK/missing.json" \
         "nocomma:not JSON (',' or '}' expected at byte 22)" \
         "strschema:is JSON but not a gpumemguard report (it has no \"schema\" that is a number)" \
         "bare:is not a whole gpumemguard report: .trigger is missing (a string is expected)" \
         "devnum:is not a whole gpumemguard report: .devices is a whole number of 0 or more, where a list is expected" \
         "nullframe:is not a whole gpumemguard report: .live[0].frames[0] is null, where an object is expected" \
         "nosamples:is not a whole gpumemguard report: .timeline.devices[0].samples is missing (a list is expected)" \
         "strbytes:is not a whole gpumemguard report: .live[1].bytes is a string, where a whole number of 0 or more is expected" \
         "escaped:is not a whole gpumemguard report: .live is a whole number of 0 or more, where a list is expected"; do
    f=${c%%:*}; msg=${c#*:}
    rm -f "$WORK/$f.html"
    "$GMG" view "$WORK/$f.json" >"$WORK/out" 2>"$WORK/err"; rc=$?
    { [ $rc = 1 ] && has "$msg" "$WORK/err" && [ ! -e "$WORK/$f.html" ]; } || miss="$miss $f(rc $rc: $(head -c 200 "$WORK/err"))"
done
"$GMG" view >"$WORK/out" 2>"$WORK/err"; rc=$?
{ [ $rc = 2 ] && has "missing REPORT.json" "$WORK/err"; } || miss="$miss no-argument(rc $rc)"
"$GMG" --limit 1G view "$FJ" >"$WORK/out" 2>"$WORK/err"; rc=$?
{ [ $rc = 2 ] && has "view takes no option" "$WORK/err"; } || miss="$miss option(rc $rc)"
# the page over its own report (as -o, or through another name of it): refused, the report kept
cp "$FJ" "$WORK/own.json"; ln -sf own.json "$WORK/own-link.json"
for o in "$WORK/own.json" "$WORK/own-link.json"; do
    "$GMG" view "$WORK/own.json" -o "$o" >"$WORK/out" 2>"$WORK/err"; rc=$?
    { [ $rc = 1 ] && has "is the report itself; the page would overwrite it" "$WORK/err" && cmp -s "$WORK/own.json" "$FJ"; } \
        || miss="$miss own:${o##*/}(rc $rc)"
done
"$GMG" view - -o "$WORK/own.json" <"$WORK/own.json" >"$WORK/out" 2>"$WORK/err"; rc=$? # on standard input
{ [ $rc = 1 ] && has "is the report itself" "$WORK/err" && cmp -s "$WORK/own.json" "$FJ"; } || miss="$miss own:stdin(rc $rc)"
# an endless input that is no report: refused at its first byte, not read to the end of memory
( [ -n "${GMG_SANITIZER:-}" ] || ulimit -v 1048576; timeout 20 "$GMG" view /dev/zero -o "$WORK/zero.html" ) >"$WORK/out" 2>"$WORK/err"; rc=$?
{ [ $rc = 1 ] && has "not JSON (a JSON object expected at byte 0)" "$WORK/err" && [ ! -e "$WORK/zero.html" ]; } || miss="$miss zero(rc $rc)"
[ -z "$miss" ] && ok "view refuses plain text, other JSON, a cut report, an array, members without a comma between them, a report without its parts or with one of another type (a list as a number, a null frame, a series without samples, bytes as a string, a key written with an escape), a newer schema, a missing file, /dev/zero and a page over the report itself: status 1, a message saying which, no page" \
    || bad "view refusals:$miss"
# a report of an earlier version: native frames without "lang" (before
# Python frames), which the page reads as native
sed 's/"lang":"native",//g' "$FJ" >"$WORK/oldlang.json"
if ! grep -q '"lang":"native"' "$WORK/oldlang.json" && "$GMG" view "$WORK/oldlang.json" -o "$WORK/oldlang.html" >"$WORK/out" 2>"$WORK/err"; then
    ok "view draws a report of an earlier version, whose native frames have no \"lang\""
else bad "view of a report without frames' lang" "$WORK/err"; fi
# the page a view writes is mode 0600, as the run's (whatever the umask); a
# page written over keeps its file's mode
rm -f "$WORK/mode.html"; printf 'old\n' >"$WORK/mode644.html"; chmod 0644 "$WORK/mode644.html"
if (umask 022; "$GMG" view "$FJ" -o "$WORK/mode.html" >/dev/null 2>&1 && "$GMG" view "$FJ" -o "$WORK/mode644.html" >/dev/null 2>&1) \
   && [ "$(stat -c %a "$WORK/mode.html")" = 600 ] && [ "$(stat -c %a "$WORK/mode644.html")" = 644 ] && cmp -s "$WORK/mode644.html" "$FH"; then
    ok "view writes its page mode 0600 under umask 022, as the run writes it; a file written over keeps its mode"
else bad "view's page mode: $(stat -c %a "$WORK/mode.html" "$WORK/mode644.html" 2>&1 | tr '\n' ' ')"; fi
# a page that cannot be written: status 1 and why; a device is never removed
if [ -c /dev/full ] && [ -w /dev/full ]; then
    "$GMG" view "$FJ" -o /dev/full >"$WORK/out" 2>"$WORK/err"; rc=$?
    [ $rc = 1 ] && has "cannot write /dev/full: No space left on device" "$WORK/err" && [ -c /dev/full ] \
        && ok "view -o /dev/full: status 1, 'No space left on device', the device left in place" \
        || bad "view -o /dev/full (rc $rc)" "$WORK/err"
fi
"$GMG" --help >"$WORK/out" 2>&1
has "view REPORT.json [-o OUT.html]" "$WORK/out" && has "html, memviz, trace" "$WORK/out" \
    && ok "gpumemguard --help lists view and the html, memviz and trace formats" || bad "--help: view" "$WORK/out"

# -------- the timeline, the peak, pools and owners (a report that has them)
jq '.devices[0].limit = 33554432 | .devices[0].driver_oom = 2 | .cmdline = "python train.py --lr 3e-4"
    | .timeline = {"start_unix_ms": 1764072000000, "interval_ms": 100,
        "devices": [{"device": 0, "samples": [[0,0],[100,4194304],[200,16777216],[300,23450880],[400,20971520],[500,21353728]]}],
        "group": null,
        "events": [{"t_ms": 150, "kind": "refusal", "device": 0, "bytes": 8388608},
                   {"t_ms": 250, "kind": "driver_oom", "device": 0, "bytes": 1048576},
                   {"t_ms": 300, "kind": "peak", "device": 0, "bytes": 23450880},
                   {"t_ms": 450, "kind": "dump", "device": 0, "bytes": 20971520}]}
    | .at_peak = [{"device": 0, "bytes": 23450880, "groups": .live[0:3]}]
    | .live[1].owner = "libtorch_cuda.so" | .live[1].pool = "PyTorch" | .live[2].owner = "libnccl.so.2"
    | .owners = [{"owner": "libtorch_cuda.so", "bytes": .live[1].bytes, "allocations": 1},
                 {"owner": "libnccl.so.2", "bytes": .live[2].bytes, "allocations": 1}]' "$FJ" >"$WORK/tl.json"
if "$GMG" view "$WORK/tl.json" -o "$WORK/tl.html" >/dev/null 2>"$WORK/err" && [ -n "$CHROME" ]; then
    if browse "$WORK/tl.html" tl; then
        miss=""
        dom_has tl 'class="timeline"' "limit 32.0 MiB" "refusal at 150 ms: 8.0 MiB (8388608 bytes)" \
            "driver out of memory at 250 ms: 1.0 MiB (1048576 bytes)" "peak at 300 ms: 22.4 MiB (23450880 bytes)" \
            "dump at 450 ms: 20.0 MiB (20971520 bytes)" "6 samples, every 100 ms" "driver out of memory 2" \
            "Device 0: 22.4 MiB (23450880 bytes) at the peak" "retained by pool PyTorch" \
            "<td>libnccl.so.2</td>" 'id="gmg-owners"' "Retained by pools: " '<p class="sub" id="gmg-program">python train.py --lr 3e-4</p>'
        [ "$(grep -o '<canvas' "$WORK/tl.dom" | wc -l)" = 2 ] || miss="$miss [two flame graphs]"
        [ -z "$miss" ] && ok "view in Chromium: the timeline with its limit, refusal, driver OOM, peak and dump; the peak's flame graph; pools apart from leaks; owners; the program with its arguments" \
            || bad "view in Chromium: missing$miss" "$WORK/tl.why"
    else bad "view in Chromium: script error or not drawn" "$WORK/tl.why"; fi
    shot "$WORK/tl.html" "$PICS/view.png" 2600 && shot "$WORK/tl.html" "$PICS/readme.png" 1500 \
        && ok "view: screenshots in $PICS/view.png and readme.png (the README's picture)" || bad "view screenshot"
elif [ -n "$CHROME" ]; then bad "view of a report with a timeline" "$WORK/err"; fi

# sizes on the page are the text report's, to the character: the page's
# formatter against gmg_fmt_size (tests/unit/fmt_size.c) for every unit, the
# edge of each (1023.95), ties of a tenth (2.25 MiB is 2.2, 2.75 is 2.8)
build fmt_size tests/unit/fmt_size.c src/base/buf.c -Isrc
SIZES="0 1 2 1023 1024 1025 1075 1177 1536 1048524 1048525 1048575 1048576 1310720 2359296 2883584 1073689395
       1073689396 1610612736 1099511627776 1125899906842624 9007199254740991 1152921504606846976 9223372036854775808
       18446744073709551515 18446744073709551615"
jq --arg s "$SIZES" '.live[0] as $g | .live = [$s | split(" ") | map(select(length > 0))[] | tonumber as $b
    | $g | .bytes = $b | .count = 1]' "$FJ" >"$WORK/sizes.json"
# (jq's numbers are doubles: set the two past 2^53 by hand, as the run writes them)
sed -i 's/1152921504606847000/1152921504606846976/; s/9223372036854776000/9223372036854775808/; 0,/18446744073709552000/s//18446744073709551515/; s/18446744073709552000/18446744073709551615/' "$WORK/sizes.json"
if [ -n "$CHROME" ] && "$GMG" view "$WORK/sizes.json" -o "$WORK/sizes.html" >/dev/null 2>"$WORK/err"; then
    miss=""
    browse "$WORK/sizes.html" sizes || miss="$miss [not drawn]"
    "$T/fmt_size" $SIZES >"$WORK/sizes.want"
    while read -r want; do grep -qF "title=\"$want\"" "$WORK/sizes.dom" || miss="$miss [$want]"; done <"$WORK/sizes.want"
    [ "$(wc -l <"$WORK/sizes.want")" = 26 ] || miss="$miss [$(wc -l <"$WORK/sizes.want") sizes]"
    [ -z "$miss" ] && ok "html: 26 sizes from 0 bytes to 16.0 EiB written exactly as the text report writes them (1048575 bytes is 1.0 MiB, 2.25 MiB is 2.2; 18446744073709551515 and 18446744073709551615, one double apart from none, each to its last digit)" \
        || bad "html sizes unlike the text report's:$miss" "$WORK/sizes.why"
elif [ -n "$CHROME" ]; then bad "view of a report of many sizes" "$WORK/err"; fi

# a refusal of 1 TiB beside 48 MiB in use under a 64 MiB limit: the scale is
# the in-use's and the limit's, the refusal marked at the top; a device with
# one sample shows it as a point
jq '.devices = [(.devices[0] | .device = 0 | .limit = 67108864 | .peak = 50331648),
                (.devices[0] | .device = 1 | .limit = 0 | .peak = 3145728)]
    | .timeline = {"start_unix_ms": 1764072000000, "interval_ms": 100,
        "devices": [{"device": 0, "samples": [[0,0],[100,33554432],[200,50331648],[300,50331648]]},
                    {"device": 1, "samples": [[40,3145728]]}],
        "group": null,
        "events": [{"t_ms": 250, "kind": "refusal", "device": 0, "bytes": 1099511627776},
                   {"t_ms": 260, "kind": "driver_oom", "device": 0, "bytes": 1099511627776}]}' "$FJ" >"$WORK/big.json"
if "$GMG" view "$WORK/big.json" -o "$WORK/big.html" >/dev/null 2>"$WORK/err" && [ -n "$CHROME" ]; then
    if browse "$WORK/big.html" big; then
        miss=""
        dom_has big ">64.0 MiB</text>" "limit 64.0 MiB" "refusal at 250 ms: 1.0 TiB (1099511627776 bytes)" '>300 ms</text>' \
            '<circle cx="' 'fill="var(--use)"></circle>'
        grep -q 'TiB</text>' "$WORK/big.dom" && miss="$miss [an axis in TiB]"
        [ -z "$miss" ] && ok "html timeline: a refused 1 TiB is marked at the top, the scale stays the in-use's and the limit's; one sample is drawn as a point; a short run's times in ms" \
            || bad "html timeline scale and one sample: missing$miss" "$WORK/big.why"
    else bad "html timeline scale: script error or not drawn" "$WORK/big.why"; fi
elif [ -n "$CHROME" ]; then bad "view of a report with a huge refusal" "$WORK/err"; fi

# what the text report says and the page must too: pinned host memory's
# out of memory, suppressed allocations; the groups not listed summed in
# the kinds line; parts a report lacks said to be missing, not empty
jq '.totals.host_driver_oom = 2 | .suppressions = [{"template": "do_alloc", "count": 1, "bytes": 4096}]
    | .live_folded = {"groups": 300, "bytes": 786432, "count": 300} | del(.fragmentation) | del(.group)' "$FJ" >"$WORK/facts.json"
if [ -n "$CHROME" ] && "$GMG" view "$WORK/facts.json" -o "$WORK/facts.html" >/dev/null 2>"$WORK/err" && browse "$WORK/facts.html" facts; then
    miss=""
    dom_has facts "the driver refused 2 allocations: out of memory" \
        "4.0 KiB (4096 bytes) in 1 live allocation, not listed (GPUMEM_SUPPRESSIONS: do_alloc)" \
        "Not listed (smaller groups): </b>768.0 KiB (786432 bytes) in 300 allocations, 300 groups" \
        '<p class="empty">This report carries no fragmentation section.</p>' "<dd>not in this report</dd>"
    grep -q '<p class="empty">No device: nothing to map.</p>' "$WORK/facts.dom" && miss="$miss [an empty map claimed]"
    [ -z "$miss" ] && ok "html: pinned host memory's out of memory and the suppressed allocations in the summary, the groups not listed in the kinds line, a report without fragmentation or group said to lack them" \
        || bad "html facts:$miss" "$WORK/facts.why"
elif [ -n "$CHROME" ]; then bad "view of a report with host out of memory and suppressions" "$WORK/err"; fi

# a report without an owners list (an older one): the page sums owners from
# the groups, an owner named like an object's own property among them
jq 'del(.owners) | .live[0].owner = "toString"' "$FJ" >"$WORK/proto.json"
if [ -n "$CHROME" ] && "$GMG" view "$WORK/proto.json" -o "$WORK/proto.html" >/dev/null 2>"$WORK/err" && browse "$WORK/proto.html" proto; then
    miss=""
    dom_has proto '<td>toString</td>'
    [ -z "$miss" ] && ok "html: owners summed from the groups when the report has no list, one named toString among them" \
        || bad "html owners from groups:$miss" "$WORK/proto.why"
elif [ -n "$CHROME" ]; then bad "view of a report without owners" "$WORK/err"; fi

# a device that held nothing: an axis of five distinct sizes from 0 bytes
jq '.devices = [(.devices[0] | .device = 0 | .limit = 0 | .in_use = 0 | .peak = 0)]
    | .timeline = {"start_unix_ms": 1764072000000, "interval_ms": 10, "group": null, "events": [],
                   "devices": [{"device": 0, "samples": [[0,0],[10,0],[20,0]]}]}' "$FJ" >"$WORK/zero.json"
if [ -n "$CHROME" ] && "$GMG" view "$WORK/zero.json" -o "$WORK/zero.html" >/dev/null 2>"$WORK/err" && browse "$WORK/zero.html" zeroaxis; then
    axis=$(grep -o '<text x="64"[^>]*>[^<]*</text>' "$WORK/zeroaxis.dom" | sed 's/<[^>]*>//g' | tr '\n' '|')
    [ "$axis" = "0 bytes|256 bytes|512 bytes|768 bytes|1.0 KiB|" ] \
        && ok "html timeline of a device that held nothing: an axis of 0 bytes to 1.0 KiB" \
        || bad "html timeline of a device that held nothing: axis $axis" "$WORK/zeroaxis.why"
elif [ -n "$CHROME" ]; then bad "view of a device that held nothing" "$WORK/err"; fi

# ------------------------------------- a clean run: every section says so
guarded GPUMEM_REPORT="$WORK/clean.html" GPUMEM_REPORT_FORMAT=html "$T/apitest" direct nulls
if [ -n "$CHROME" ] && [ -s "$WORK/clean.html" ]; then
    if browse "$WORK/clean.html" clean; then
        miss=""
        dom_has clean "Nothing is live." "Nothing live at exit: no leak." "0 bytes in 0 allocations" \
            "This report does not say what was live at the peak."
        grep -q -E "No live device allocation: the address span is empty.|No device: nothing to map." "$WORK/clean.dom" \
            || miss="$miss [fragmentation's empty state]"
        [ -z "$miss" ] && ok "html of a clean run: no script error; every section says it is empty" \
            || bad "clean html: missing$miss" "$WORK/clean.dom"
    else bad "clean html: script error or not drawn" "$WORK/clean.why"; fi
elif [ -n "$CHROME" ]; then bad "clean html not written" "$WORK/err"; fi

# ------------------------------------ a dump: what grew since the previous
guarded GPUMEM_REPORT="$WORK/dump.%n" GPUMEM_REPORT_FORMAT=json,html "$T/stacks" 20 10
if [ -n "$CHROME" ] && [ -s "$WORK/dump.1.html" ] && jq -e '.trigger == "request" and (.growth | length) == 10' "$WORK/dump.1.json" >/dev/null; then
    miss=""
    browse "$WORK/dump.1.html" dump && dom_has dump "$(jq -r '"request, dump 1, pid \(.pid)"' "$WORK/dump.1.json")" \
        "$(jq -r '"(\([.growth[].bytes] | add) bytes) in \([.growth[].count] | add) allocations, 10 groups"' "$WORK/dump.1.json")" \
        && browse "$WORK/dump.2.html" dump2 && dom_has dump2 "$(jq -r '"exit, dump 2, pid \(.pid)"' "$WORK/dump.2.json")" \
        && [ -z "$miss" ] && ok "html of a dump: the trigger and what grew since the previous dump, as its JSON report says (and the exit report after it)" \
        || bad "html of a dump:${miss:-}" "$WORK/dump.why"
elif [ -n "$CHROME" ]; then bad "html of a dump not written" "$WORK/err"; fi

# -------------------------------- many stacks: the page keeps the biggest
guarded GPUMEM_REPORT="$WORK/many" GPUMEM_REPORT_FORMAT=json,html "$T/stacks" 2400 1200
if [ -s "$WORK/many.html" ] && embedded "$WORK/many.html" >"$WORK/many.emb" \
   && jq -e '(.live | length) == 1000 and .live_folded.groups == 200 and .live_folded.count == 400
             and (([.live[].bytes] | add) + .live_folded.bytes) == .totals.live_bytes' "$WORK/many.emb" >/dev/null \
   && jq -e '(.at_peak[0].groups | length) == 1000 and .at_peak[0].groups_folded.groups == 200
             and (([.at_peak[0].groups[].bytes] | add) + .at_peak[0].groups_folded.bytes) == .at_peak[0].bytes' "$WORK/many.emb" >/dev/null \
   && jq -e '(.live | length) == 1200 and (has("live_folded") | not) and (.at_peak[0].groups | length) == 1200' "$WORK/many.json" >/dev/null \
   && jq -e '.fragmentation[0] | (.map | length) <= 2000 and .map_merged and ([.map[][2]] | add) == .live_allocations
             and ([.map[][3]] | add) == .granted_bytes' "$WORK/many.json" >/dev/null; then
    ok "html over 1200 stacks: the 1000 biggest groups, the other 200 summed in live_folded, and the same for what was live at the peak (JSON lists all 1200); the map merges 2400 allocations into at most 2000 blocks"
else bad "html over many stacks" "$WORK/err"; fi
# view of that report cuts as the run's page did: the same page, to the byte,
# with growth cut too (the dump's page) and the page under 10 MB
guarded GPUMEM_REPORT="$WORK/manyd.%n" GPUMEM_REPORT_FORMAT=json,html "$T/stacks" 2400 1200
miss=""
for f in "$WORK/many" "$WORK/manyd.1" "$WORK/manyd.2"; do
    "$GMG" view "$f.json" -o "$f.view.html" >"$WORK/out" 2>"$WORK/err" && cmp -s "$f.view.html" "$f.html" \
        || miss="$miss ${f##*/}($(cmp "$f.view.html" "$f.html" 2>&1 | head -c 120))"
done
embedded "$WORK/manyd.1.view.html" | jq -e '(.growth | length) == 1000 and .growth_folded.groups == 200' >/dev/null \
    || miss="$miss [growth not cut]"
[ -z "$miss" ] && ok "view of a report over 1200 stacks: the very page the run wrote, its lists (live, growth, at the peak) cut to the 1000 biggest and the rest summed" \
    || bad "view of a report over many stacks:$miss" "$WORK/err"
if [ -n "$CHROME" ]; then
    miss=""; browse "$WORK/many.html" many && dom_has many "200 smaller groups (200.0 KiB (204800 bytes)) are folded into" \
        "Showing the first 300 of 1000 groups" "(the allocations lie side by side: no gap)" && [ -z "$miss" ] \
        && ok "html over many stacks in Chromium: says what it folded and what it does not list" \
        || bad "html over many stacks in Chromium:${miss:-} " "$WORK/many.why"
fi

# past 1000 groups that grew, and 1200 groups reclaimed by a context reset:
# the page's growth line counts them all, and it says what it left out of
# each list (tests/bench/stacks.c reset)
guarded GPUMEM_REPORT="$WORK/manyr.%n" GPUMEM_REPORT_FORMAT=json,html "$T/stacks" 2400 1200 reset
if [ -n "$CHROME" ]; then
    miss=""
    jq -e '(.reclaimed | length) == 1200' "$WORK/manyr.2.json" >/dev/null || miss="$miss [not 1200 reclaimed groups]"
    browse "$WORK/manyr.1.html" manyr1 || miss="$miss [dump page not drawn]"
    dom_has manyr1 "$(jq -r '"(\([.growth[].bytes] | add) bytes) in \([.growth[].count] | add) allocations, 1200 groups (200 smaller groups not listed in this page)"' "$WORK/manyr.1.json")"
    browse "$WORK/manyr.2.html" manyr2 || miss="$miss [exit page not drawn]"
    dom_has manyr2 "$(jq -r '([.reclaimed[1000:][].bytes] | add) as $b | ([.reclaimed[1000:][].count] | add) as $c
                             | "200 smaller reclaimed groups (\($b / 1024 | floor).0 KiB (\($b) bytes) in \($c) allocations) are not listed in this page."' "$WORK/manyr.2.json")"
    [ -z "$miss" ] && ok "html past 1000 groups grown or reclaimed: the growth line counts every group that grew, and the reclaimed rest is said in words" \
        || bad "html of folded growth and reclaimed lists:$miss" "$WORK/manyr2.why"
fi

# ------------- an NVTX pool: regions inside its segment are counted once
# (tests/pools/nvtxpool.c leak: an 8 MiB segment, two 1 MiB regions left
# registered, each a group of its own): the segment's group says what they
# hold, and every picture of the page sums to the 8 MiB in use
guarded NVTX_INJECTION64_PATH="$ROOT/$B/libgpumemguard.so" GPUMEM_REPORT="$WORK/nv" GPUMEM_REPORT_FORMAT=json,html "$T/nvtxpool" leak
if jq -e '.devices[0].in_use == 8388608 and ([.live[] | select(.pool != null)] | .[0].regions_bytes) == 2097152
          and ([.live[] | .bytes - (.regions_bytes // 0)] | add) == .devices[0].in_use' "$WORK/nv.json" >/dev/null \
   && "$GMG" view "$WORK/nv.json" -o "$WORK/nv.view.html" >/dev/null 2>"$WORK/err" && cmp -s "$WORK/nv.view.html" "$WORK/nv.html"; then
    ok "json: the group of an NVTX heap's segment carries regions_bytes (the regions' 2 MiB), so its groups sum to the 8 MiB in use"
else bad "json: regions_bytes of an NVTX heap's segment" "$WORK/nv.json"; fi
if [ -n "$CHROME" ]; then
    miss=""
    roots "$WORK/nv.html" nvroots
    has "canvas 0: all / 8.0 MiB (8388608 bytes) in 3 allocations (100.0%)" "$WORK/nvroots.roots" || miss="$miss [live root: $(head -1 "$WORK/nvroots.roots")]"
    has "canvas 1: all / 8.0 MiB (8388608 bytes) in 1 allocation (100.0%)" "$WORK/nvroots.roots" || miss="$miss [peak root]"
    browse "$WORK/nv.html" nv || miss="$miss [not drawn]"
    dom_has nv "Leaks: </b>2.0 MiB (2097152 bytes) in 2 allocations, 2 groups" "Retained by pools: </b>6.0 MiB (6291456 bytes) in 1 allocation, 1 group"
    [ -z "$miss" ] && ok "html of an NVTX pool: the live flame graph's root and the sums by kind add to the 8 MiB in use, the regions not counted twice" \
        || bad "html of an NVTX pool:$miss" "$WORK/nvroots.roots"
fi

# ------------------------------- names that are markup: shown, never run
guarded GPUMEM_REPORT="$WORK/hn" GPUMEM_REPORT_FORMAT=json,html "$T/hostile_names"
hostile_ok() { # NAME HTML: the page runs none of the names' scripts and shows them as text
    local n=$1 h=$2
    [ "$(grep -o -i '</script' "$h" | wc -l)" = 2 ] || return 1
    browse "$h" "$n" || return 1
    [ "$(sed -n 's/.*<title>\([^<]*\)<\/title>.*/\1/p' "$WORK/$n.dom" | head -1)" = "gpumemguard report" ] || return 1
    ! grep -q -i '<img' "$WORK/$n.dom" && tr -d '\n' <"$WORK/$n.dom" | grep -q '</script></body></html>$' 
}
# (clang keeps the assembler name's quotes in the symbol: "\"</script>...\"")
if jq -e '[.live[].frames[0].function | ltrimstr("\"") | rtrimstr("\"")] | index("</script><script>document.title='"'"'PWNED-C'"'"';document.body.append('"'"'PWNED-C'"'"')</script>") != null
          and index("operator\"\" _x(char const*)") != null and index("void leak<char>()") != null' "$WORK/hn.json" >/dev/null; then
    miss=""
    if [ -z "$CHROME" ]; then :
    elif hostile_ok hn "$WORK/hn.html" && miss="" && dom_has hn "&lt;/script&gt;&lt;script&gt;document.title='PWNED-C'" \
         "operator\"\" _x(char const*)" "void leak&lt;char&gt;()" && [ -z "$miss" ]; then
        ok "html: native names '</script><script>...', 'operator\"\" _x', 'leak<char>' shown as text in Chromium, no script of theirs run"
    else bad "hostile native names in the page:${miss:-}" "$WORK/hn.dom"; fi
else bad "hostile native names in the report" "$WORK/hn.json"; fi

if [ "${GMG_SANITIZER:-}" = tsan ]; then
    skip "markup in Python names" "TSan: the instrumented library cannot run in an uninstrumented interpreter"
elif ! command -v python3 >/dev/null 2>&1; then
    skip "markup in Python names" "no python3"
else
    guarded GPUMEM_REPORT="$WORK/hp" GPUMEM_REPORT_FORMAT=json,html,memviz python3 tests/python/hostile_names.py
    if memviz_check hp && python3 -c '
import pickle, sys
s = pickle.load(open(sys.argv[1], "rb"))["segments"][0]["frames"]
py = [f for f in s if f["filename"].startswith("</script>")]
assert py and py[0]["name"].startswith("<img") and py[0]["line"] == 3 and s.index(py[0]) > 0, s
' "$WORK/hp.pickle" 2>>"$WORK/mv.out"; then
        ok "memviz of a Python program: its Python frames (any name, U+2028 too) after the native ones, innermost first"
    else bad "memviz of a Python program" "$WORK/mv.out"; fi
    if jq -e '.live[0].frames[0] | .file == "</script><script>document.title='"'"'PWNED-PY'"'"';document.body.append('"'"'PWNED-PY'"'"')</script><!--\u2028\u2029"
              and (.function | startswith("<img src=x onerror="))' "$WORK/hp.json" >/dev/null; then
        miss=""
    if [ -z "$CHROME" ]; then :
        elif hostile_ok hp "$WORK/hp.html" && ! grep -q "$(printf '\342\200\250')" "$WORK/hp.html" && miss="" \
             && dom_has hp "File \"&lt;/script&gt;&lt;script&gt;document.title='PWNED-PY'" "in &lt;img src=x onerror=" && [ -z "$miss" ]; then
            ok "html: a Python file '</script><script>...<!--' and function '<img onerror=...>' (U+2028 too) shown as text in Chromium, no script of theirs run"
        else bad "hostile Python names in the page:${miss:-}" "$WORK/hp.dom"; fi
    else bad "hostile Python names in the report" "$WORK/err"; fi
fi
