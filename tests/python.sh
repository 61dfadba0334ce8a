# python.sh - Python call sites: the allocating
# thread's Python frames above the native ones, in every format, on every
# CPython this machine has of 3.10, 3.11, 3.12 and 3.13; a layout the guard
# does not know (3.9) gives native stacks and one notice. Sourced by run.sh
# (uses its helpers and $B, $T, $ROOT, $WORK, $PRELOAD).
#
# Under TSan nothing here runs: an instrumented library cannot be preloaded
# into an uninstrumented interpreter.

PYF=$ROOT/tests/python/frames.py
# line L: the line of the "# SITE:L" marker in frames.py
line() { grep -n "# SITE:$1\$" "$PYF" | cut -d: -f1; }
# the interpreter of version $1 (3.12): on PATH, or pyenv's
find_python() {
    local c
    for c in "$(pyenv root 2>/dev/null)/versions/$1".*/bin/python"$1" "$HOME/.pyenv/versions/$1".*/bin/python"$1" \
             /usr/bin/python"$1" /usr/local/bin/python"$1"; do
        [ -x "$c" ] && { echo "$c"; return 0; }
    done
    return 1
}
# watched_as_cpython_saw MODE N: frames.py MODE with a JSON report; the
# guard's code watcher came on (3.12+), and the stacks are as_cpython_saw N
watched_as_cpython_saw() {
    pyrun "$PY" "$1" GPUMEM_STACK_DEPTH=64 GPUMEM_REPORT="$WORK/v.json" GPUMEM_REPORT_FORMAT=json \
        GMG_EXPECTED="$WORK/exp.json" GPUMEM_LOG=debug
    grep -q "Python code watcher on" "$WORK/err" && as_cpython_saw "$2"
}
# unread FILE: the walks given again without reading a name (GMG_STACK_STATS)
unread() { sed -n 's/.*stacks: \([0-9]*\) Python walks given again without reading a name.*/\1/p' "$1"; }
# pyrun PY MODE [ENV...]: frames.py MODE under the guard, text report on stderr
pyrun() { local py=$1 mode=$2; shift 2
          env LD_PRELOAD="$PRELOAD" "$@" "$py" "$PYF" "$mode" >"$WORK/out" 2>"$WORK/err"; }
# pyframe FILE FUNC LINE: the text report names the Python frame exactly
pyframe() { grep -qxF "    File \"$PYF\", line $3, in $2" "$1"; }
# as_cpython_saw N: the JSON report's Python stacks ($WORK/v.json) are those
# frames.py noted from CPython's own frames ($WORK/exp.json), N allocations,
# each stack with the same bytes and count
as_cpython_saw() {
    "$PY" - "$WORK/v.json" "$WORK/exp.json" "$1" >"$WORK/out" 2>&1 <<'PYEOF'
import json, sys
r = json.load(open(sys.argv[1]))
got = {}
for g in r["live"]:
    st = tuple(tuple([f["function"], f["file"], f["line"]]) for f in g["frames"] if f["lang"] == "python")
    a = got.setdefault(st, [0, 0]); a[0] += g["bytes"]; a[1] += g["count"]
exp = {tuple(map(tuple, st)): [b, c] for st, b, c in json.load(open(sys.argv[2]))}
assert sum(c for _, c in exp.values()) == int(sys.argv[3]), "expected %s allocations" % sys.argv[3]
wrong = [(st, exp[st], got.get(st)) for st in exp if got.get(st) != exp[st]]
assert not wrong and len(got) == len(exp), (len(wrong), len(got), len(exp), wrong[:2])
print(len(exp))
PYEOF
}
# after HEADER N: the first N frame lines of the group of BYTES, one per line
after() { grep -m1 -A"$2" -F "$1" "$WORK/err" | tail -n "$2"; }

if [ "${GMG_SANITIZER:-}" = tsan ]; then
    skip "Python frames" "TSan: the instrumented library cannot run in an uninstrumented interpreter"
else
L_ALLOC=$(line alloc)
for v in 3.10 3.11 3.12 3.13; do
    PY=$(find_python $v) || { skip "Python $v frames" "no python$v on this machine"; continue; }

    # the line-table decoder against CPython's own co_lines(), every
    # instruction of every code object of a few stdlib modules, those with
    # no line (-1) among them
    if "$PY" tests/python/linetables.py "$WORK/lt.txt" >/dev/null 2>"$WORK/err" && \
       $CC -std=gnu11 -O1 -g -Wall -Wextra -Werror $SAN_FLAGS -Isrc -o "$T/test_pylines" tests/unit/test_pylines.c \
           src/core/pylines.c 2>>"$WORK/err" && "$T/test_pylines" "$WORK/lt.txt" >"$WORK/out" 2>>"$WORK/err"; then
        ok "Python $v line tables: $(cat "$WORK/out")"
    else bad "Python $v line tables" "$WORK/err"; fi

    # two call sites with identical native stacks: two groups, each naming
    # its function and line under alloc(); the freed one is gone
    pyrun "$PY" sites
    exp1=$(printf '    File "%s", line %s, in alloc\n    File "%s", line %s, in model_weights' "$PYF" "$L_ALLOC" "$PYF" "$(line model_weights)")
    exp2=$(printf '    File "%s", line %s, in alloc\n    File "%s", line %s, in optimizer_state' "$PYF" "$L_ALLOC" "$PYF" "$(line optimizer_state)")
    if [ "$(after '6.0 MiB (6291456 bytes) in 1 allocation (cuMemAlloc, device 0) allocated from:' 2)" = "$exp1" ] && \
       [ "$(after '1.0 MiB (1048576 bytes) in 1 allocation (cuMemAlloc, device 0) allocated from:' 2)" = "$exp2" ] && \
       ! before_peak "$WORK/err" | grep -qF "(3145728 bytes) in" && has "7340032 bytes in 2 allocations still live" "$WORK/err" && \
       grep -A3 -F "(6291456 bytes) in 1" "$WORK/err" | grep -q "in sites$" && \
       grep -A20 -F "(6291456 bytes) in 1" "$WORK/err" | grep -q "^    #0 .*(libffi"; then
        ok "Python $v: two call sites, two groups: 'File \"frames.py\", line N, in model_weights' above the native frames"
    else bad "Python $v sites" "$WORK/err"; fi

    # the same in JSON and folded
    pyrun "$PY" sites GPUMEM_REPORT="$WORK/r.%n" GPUMEM_REPORT_FORMAT=json,folded
    if "$PY" - "$WORK/r.1.json" "$PYF" "$L_ALLOC" "$(line model_weights)" "$(line optimizer_state)" <<'PYEOF'
import json, sys
r = json.load(open(sys.argv[1])); f, la, lm, lo = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
g = {x["bytes"]: x["frames"] for x in r["live"]}
def py(fr): return [(x["function"], x["file"], x["line"]) for x in fr if x["lang"] == "python"]
assert py(g[6291456])[:2] == [("alloc", f, la), ("model_weights", f, lm)], g[6291456][:3]
assert py(g[1048576])[:2] == [("alloc", f, la), ("optimizer_state", f, lo)], g[1048576][:3]
langs = [x["lang"] for x in g[6291456]]
n = langs.count("python")
assert n >= 4 and langs[:n] == ["python"] * n and set(langs[n:]) == {"native"}, langs
assert "pc" in g[6291456][n] and "pc" not in g[6291456][0]
PYEOF
    then ok "Python $v JSON: frames \"lang\": \"python\" (function, file, line) first, then \"native\""
    else bad "Python $v JSON" "$WORK/r.1.json"; fi
    if grep -qE "^<module> \($PYF:[0-9]+\);sites \($PYF:[0-9]+\);model_weights \($PYF:$(line model_weights)\);alloc \($PYF:$L_ALLOC\);.*;cuMemAlloc_device0 6291456\$" "$WORK/r.1.folded"; then
        ok "Python $v folded: '<module> (frames.py:N);sites (...);model_weights (...);alloc (...);native... 6291456'"
    else bad "Python $v folded" "$WORK/r.1.folded"; fi

    # two refusals at two Python sites (identical native stacks): two
    # messages, each once however often its site is refused
    pyrun "$PY" refuse GPUMEM_LIMIT=4M
    n=$(grep -c "^gpumemguard: refused cuMemAlloc" "$WORK/err")
    if [ "$n" = 2 ] && grep -A3 -F "refused cuMemAlloc of 8.0 MiB" "$WORK/err" | grep -qxF "    File \"$PYF\", line $(line too_big_a), in too_big_a" && \
       grep -A3 -F "refused cuMemAlloc of 9.0 MiB" "$WORK/err" | grep -qxF "    File \"$PYF\", line $(line too_big_b), in too_big_b" && \
       has "refused 6" "$WORK/err"; then
        ok "Python $v: two refused call sites, two refusal messages naming too_big_a and too_big_b (6 refusals)"
    else bad "Python $v refusals ($n messages)" "$WORK/err"; fi

    # refused, then what was in use freed at once (as a retry after out of
    # memory does): the explanation describes the refusal, so it lists the
    # 1 MiB live then; never a bare "(none)"
    pyrun "$PY" refuse_free GPUMEM_LIMIT=4M
    if has "refused cuMemAlloc of 8.0 MiB (8388608 bytes) on device 0: GPUMEM_LIMIT is 4.0 MiB (4194304 bytes), 1.0 MiB (1048576 bytes) in use" "$WORK/err" && \
       ! grep -qx "  (none)" "$WORK/err" && \
       has "1.0 MiB (1048576 bytes) in 1 allocation (cuMemAlloc, device 0) allocated from:" "$WORK/err"; then
        ok "Python $v: refused, then the 1 MiB in use freed at once: the explanation lists it, live at the refusal"
    else bad "Python $v refusal after free" "$WORK/err"; fi

    # four Python threads at once, each its own function and line
    pyrun "$PY" threads
    miss=""
    for spec in worker_zero:3145728 worker_one:6291456 worker_two:9437184 worker_three:15728640; do
        fn=${spec%%:*}  # (3.11 has a <listcomp> frame between)
        after "(${spec#*:} bytes) in 3 allocations (cuMemAlloc, device 0) allocated from:" 3 | \
            grep -qxF "    File \"$PYF\", line $(line $fn), in $fn" || miss="$miss $fn"
    done
    grep -A4 -F "(15728640 bytes) in 3" "$WORK/err" | grep -q ", in worker$" || miss="$miss worker"
    [ -z "$miss" ] && ok "Python $v: four threads allocating at once, each group names its own thread's function" \
                   || bad "Python $v threads:$miss" "$WORK/err"

    # recursion 100 deep: the Python frames are capped at the stack depth,
    # the innermost 8 and the outermost 7 kept, with a mark for the 89
    # left out between them (<module>, deep, 101 recurse, alloc: 104)
    pyrun "$PY" deep GPUMEM_STACK_DEPTH=16
    n=$(before_peak "$WORK/err" | grep -A40 -F "7.0 MiB (7340032 bytes) in 1 allocation (cuMemAlloc" | grep -c '^    File "')
    if [ "$n" = 15 ] && after "7.0 MiB (7340032 bytes) in 1 allocation (cuMemAlloc" 3 | sed -n 2,3p | grep -c "in recurse$" | grep -qx 2 \
       && after "7.0 MiB (7340032 bytes) in 1 allocation (cuMemAlloc" 9 | tail -1 | grep -qxF "    ... [89 Python frames left out] ..." \
       && after "7.0 MiB (7340032 bytes) in 1 allocation (cuMemAlloc" 16 | tail -1 | grep -q "in <module>$"; then
        ok "Python $v: recursion 100 deep with GPUMEM_STACK_DEPTH=16: the 8 innermost Python frames, '... [89 Python frames left out] ...', the 7 outermost down to <module>"
    else bad "Python $v deep ($n Python frames)" "$WORK/err"; fi
    # code run in a sub-interpreter: its own frames (3.10 and 3.11 keep the
    # thread's gilstate on its main interpreter's state meanwhile)
    case $v in 3.10|3.11)
        env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT_FORMAT=json GPUMEM_REPORT="$WORK/si.json" "$PY" tests/python/subinterp.py \
            >"$WORK/out" 2>"$WORK/err"
        got=$(jq -c '[.live[0].frames[] | select(.lang=="python") | [.function, .file, .line]]' "$WORK/si.json" 2>&1)
        if [ "$got" = '[["allocate_in_subinterpreter","<string>",8],["<module>","<string>",9]]' ]; then
            ok "Python $v: an allocation in a sub-interpreter has the sub-interpreter's frames"
        else bad "Python $v sub-interpreter frames: $got" "$WORK/err"; fi
        # made on the main thread, run on another: each thread's allocation
        # has the frames of the state it ran
        env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT_FORMAT=json GPUMEM_REPORT="$WORK/si.json" timeout 60 "$PY" tests/python/subinterp.py thread \
            >"$WORK/out" 2>"$WORK/err"
        got=$(jq -c '[.live[] | [.bytes, [.frames[] | select(.lang=="python") | .function]]]' "$WORK/si.json" 2>&1)
        if [ "$got" = '[[5242880,["allocate_in_subinterpreter","<module>"]],[3145728,["allocate_on_main_thread","run_on_a_thread","<module>"]]]' ]; then
            ok "Python $v: a sub-interpreter made on the main thread and run on another: its allocation has its frames, the main thread's meanwhile the main thread's"
        else bad "Python $v sub-interpreter run on another thread: $got" "$WORK/err"; fi;;
    esac
    # a second thread state of the main interpreter swapped in by C code,
    # the allocation made with the GIL held: that state's frames
    env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT_FORMAT=json GPUMEM_REPORT="$WORK/ss.json" "$PY" tests/python/secondstate.py \
        >"$WORK/out" 2>"$WORK/err"
    got=$(jq -c '[.live[] | [.bytes, [.frames[] | select(.lang=="python") | .function]]]' "$WORK/ss.json" 2>&1)
    if [ "$got" = '[[3145728,["in_second_state"]]]' ]; then
        ok "Python $v: a second thread state swapped in on the thread, GIL held: the allocation has that state's frames"
    else bad "Python $v second thread state: $got" "$WORK/err"; fi
    # at a depth of 2, the innermost frame and the mark: never a cut unsaid
    pyrun "$PY" deep GPUMEM_STACK_DEPTH=2
    if [ "$(after "7.0 MiB (7340032 bytes) in 1 allocation (cuMemAlloc" 2 | sed -n 2p)" = "    ... [103 Python frames left out] ..." ] \
       && after "7.0 MiB (7340032 bytes) in 1 allocation (cuMemAlloc" 1 | grep -q "in alloc$"; then
        ok "Python $v: GPUMEM_STACK_DEPTH=2: the innermost Python frame and '... [103 Python frames left out] ...'"
    else bad "Python $v deep at depth 2" "$WORK/err"; fi

    # the walk against CPython's own: 4 threads x 150 allocations from random
    # depths (to 34 frames) through functions and generators, a busy fifth
    # thread, a trace function: every group's Python frames are the stack
    # CPython saw at that call, with the same bytes and count
    pyrun "$PY" verify GPUMEM_STACK_DEPTH=64 GPUMEM_REPORT="$WORK/v.json" GPUMEM_REPORT_FORMAT=json GMG_EXPECTED="$WORK/exp.json"
    if as_cpython_saw 600; then ok "Python $v: 600 allocations from 4 threads (random depths, generators, a trace function, a busy thread): $(cat "$WORK/out") stacks, each exactly as CPython saw it"
    else bad "Python $v walk vs CPython" "$WORK/out"; fi

    # code objects made and dropped one after another at one frame's place,
    # with names, files and line tables at the addresses of the last ones:
    # the thread's last walk, and the frame cache, must see each as new
    pyrun "$PY" codes GPUMEM_STACK_DEPTH=64 GPUMEM_REPORT="$WORK/v.json" GPUMEM_REPORT_FORMAT=json GMG_EXPECTED="$WORK/exp.json"
    if as_cpython_saw 200; then ok "Python $v: 200 functions made by exec and dropped in turn (names and files repeating, first lines and bodies moving): $(cat "$WORK/out") stacks, each as CPython saw it"
    else bad "Python $v exec'd functions vs CPython" "$WORK/out"; fi

    # line tables of one size and another content made where the last ones were
    pyrun "$PY" tables GPUMEM_STACK_DEPTH=64 GPUMEM_REPORT="$WORK/v.json" GPUMEM_REPORT_FORMAT=json GMG_EXPECTED="$WORK/exp.json"
    if as_cpython_saw 400; then ok "Python $v: a function made 400 times with a line table of one size and another content in turn (the call on line 2, then 3): $(cat "$WORK/out") stacks, each as CPython saw it"
    else bad "Python $v line tables made again where the last ones were" "$WORK/out"; fi

    # (3.12, 3.13) with the guard's code watcher on, the frames' code objects
    # are trusted while none is freed: not a code object's file name changed
    # in place, nor after the program cleared every code watcher (then line
    # tables made again where the last ones were, as above)
    # (each run checks that the watcher came on: else it proves nothing)
    case $v in 3.12|3.13)
        pyrun "$PY" renamed GPUMEM_STACK_DEPTH=64 GPUMEM_REPORT="$WORK/v.json" GPUMEM_REPORT_FORMAT=json GMG_EXPECTED="$WORK/exp.json" \
            GMG_STACK_STATS=1
        unread=$(unread "$WORK/err"); reused=$(sed -n "s/^a file name made at a dropped one's address: //p" "$WORK/err")
        if [ "${unread:-0}" -gt 0 ] && as_cpython_saw 9; then ok "Python $v: a live code object's file name changed in place (_imp._fix_co_filename), one made at a dropped one's address ($reused): $(cat "$WORK/out") stacks, each as CPython saw it; $unread walks given again unread"
        else bad "Python $v code object renamed in place ($unread walks given again unread)" "$WORK/out"; fi
        pyrun "$PY" gil_held GPUMEM_LOG=debug
        if ! grep -q "Python code watcher on" "$WORK/err" && has "204800 bytes in 50 allocations still live" "$WORK/err" \
           && pyframe "$WORK/err" gil_held "$(line gil_held)"; then
            ok "Python $v: allocations made with the GIL held never ask for the code watcher; their frames as before"
        else bad "Python $v allocations with the GIL held" "$WORK/err"; fi
        if watched_as_cpython_saw cleared_watchers 400; then ok "Python $v: every code watcher cleared by the program, then a function made 400 times with line tables of one size and another content: $(cat "$WORK/out") stacks, each as CPython saw it"
        else bad "Python $v line tables made again after the code watchers were cleared" "$WORK/out"; fi;;
    esac

    # the same in a sub-interpreter (3.12, 3.13: a legacy one, where ctypes
    # loads), after the main interpreter let the guard's code watcher in:
    # it counts only the main interpreter's code objects freed
    case $v in 3.12|3.13)
        if watched_as_cpython_saw tables_in_subinterpreter 400; then ok "Python $v: the same in a sub-interpreter, the main one's code watcher on: $(cat "$WORK/out") stacks, each as CPython saw it"
        else bad "Python $v line tables made again in a sub-interpreter" "$WORK/out"; fi;;
    esac

    # a program embedding the interpreter, finalizing it and initializing it
    # again (3.12, 3.13): the code watcher the guard added to the first is
    # gone with it, so no walk of a later one is given again unread
    case $v in 3.12|3.13)
        if cfg=$(command -v "$PY-config") && cc -o "$WORK/reinit" tests/python/reinit.c $("$cfg" --cflags) \
               $("$cfg" --embed --ldflags) >"$WORK/cc" 2>&1; then
            for r in 1 3; do
                env LD_PRELOAD="$PRELOAD" GMG_STACK_STATS=1 GPUMEM_REPORT_FORMAT=json GPUMEM_REPORT="$WORK/re$r.json" \
                    "$WORK/reinit" $r >"$WORK/out" 2>"$WORK/err$r"
            done
            unread1=$(unread "$WORK/err1"); unread3=$(unread "$WORK/err3")
            got=$(jq -c '[.live[] | [.count, .bytes, [.frames[] | select(.lang=="python") | [.function, .line]]]]' "$WORK/re3.json" 2>&1)
            want='[[50,614400,[["in_round_3",6],["<module>",7]]],[50,409600,[["in_round_2",6],["<module>",7]]],[50,204800,[["in_round_1",6],["<module>",7]]]]'
            if [ "${unread1:-0}" -gt 0 ] && [ "$unread3" = "$unread1" ] && [ "$got" = "$want" ]; then
                ok "Python $v embedded, finalized and initialized again twice: each round's stacks its own; walks given again unread in the first round only ($unread1)"
            else bad "Python $v initialized again: unread $unread1 then $unread3; $got" "$WORK/err3"; fi
        else skip "Python $v initialized again" "no $PY-config to build an embedding program with"; fi;;
    esac

    # runs of allocations from one stack after another (the thread's last
    # capture given again within a run), stacks differing in depth or only
    # in an outer frame's line from one run to the next
    # (3.10's frames have no memo: it never takes that path); from 3.12,
    # with no code object freed meanwhile, given again without reading the
    # code objects' names
    pyrun "$PY" runs GPUMEM_STACK_DEPTH=64 GPUMEM_REPORT="$WORK/v.json" GPUMEM_REPORT_FORMAT=json GMG_EXPECTED="$WORK/exp.json" \
        GMG_STACK_STATS=1
    unread=$(unread "$WORK/err")
    if { [ "$v" = 3.10 ] || grep -q "stacks: [0-9]* captures, [1-9][0-9]* given the thread's last capture" "$WORK/err"; } \
       && case $v in 3.10|3.11) [ "$unread" = 0 ];; *) [ "${unread:-0}" -gt 0 ];; esac \
       && as_cpython_saw 65; then ok "Python $v: 65 allocations in runs from one stack after another (depths and an outer frame's line changing between runs): $(cat "$WORK/out") stacks, each as CPython saw it; $unread walks given again unread"
    else bad "Python $v runs of call sites vs CPython ($unread walks given again unread)" "$WORK/out"; fi

    # a generator and a coroutine (asyncio) on the stack
    pyrun "$PY" gen_coro
    if pyframe "$WORK/err" gen_alloc "$(line gen_alloc)" && pyframe "$WORK/err" coro_alloc "$(line coro_alloc)" && \
       grep -A3 -F "(11534336 bytes) in 1" "$WORK/err" | grep -q "in gen_coro$"; then
        ok "Python $v: frames of a generator and of an asyncio coroutine"
    else bad "Python $v generator/coroutine" "$WORK/err"; fi

    # a non-ASCII function name, as UTF-8
    pyrun "$PY" unicode
    pyframe "$WORK/err" "größe" "$(line größe)" && ok "Python $v: a non-ASCII function name ('größe') in UTF-8" \
        || bad "Python $v unicode" "$WORK/err"

    # GPUMEM_PYTHON=off: native stacks only, as before (the sites merge)
    pyrun "$PY" sites GPUMEM_PYTHON=off
    # (3.11 and 3.12 take the same native path for both calls: one group)
    if ! grep -q '^    File "' "$WORK/err" && has "7340032 bytes in 2 allocations still live" "$WORK/err" && \
       grep -q "^    #0 .*(libffi" "$WORK/err" && grep -q "in Py_RunMain\|in main " "$WORK/err" && \
       { [ $v = 3.13 ] || has "7.0 MiB (7340032 bytes) in 2 allocations (cuMemAlloc, device 0)" "$WORK/err"; }; then
        ok "Python $v, GPUMEM_PYTHON=off: whole native stacks only, as before"
    else bad "Python $v GPUMEM_PYTHON=off" "$WORK/err"; fi
done

# an interpreter whose layout the guard does not know: one notice, native
# stacks, the program unharmed
if PY=$(find_python 3.9); then
    pyrun "$PY" threads
    n=$(grep -c "Python 3.9: its frame layout is not one this guard knows" "$WORK/err")
    if [ "$n" = 1 ] && ! grep -q '^    File "' "$WORK/err" && has "34603008 bytes in 12 allocations still live" "$WORK/err"; then
        ok "Python 3.9 (layout not known): one notice, native stacks, every allocation still tracked"
    else bad "Python 3.9 ($n notices)" "$WORK/err"; fi
else skip "Python 3.9 notice" "no python3.9 on this machine"; fi
fi

# no Python in the process: the report is the same with GPUMEM_PYTHON on or
# off (addresses and pids aside), and has no Python frame
norm() { sed -E 's/==[0-9]+==/==P==/; s/0x[0-9a-f]+/0x?/g' "$1"; }
guarded "$T/apitest" direct families; norm "$WORK/err" >"$WORK/auto.txt"
GPUMEM_PYTHON=off guarded "$T/apitest" direct families; norm "$WORK/err" >"$WORK/off.txt"
if cmp -s "$WORK/auto.txt" "$WORK/off.txt" && ! grep -q 'File "' "$WORK/auto.txt" && [ -s "$WORK/auto.txt" ]; then
    ok "no Python in the process: the report is the same with GPUMEM_PYTHON=auto and off"
else { echo "auto: $(wc -l <"$WORK/auto.txt") lines, off: $(wc -l <"$WORK/off.txt") lines"; diff "$WORK/off.txt" "$WORK/auto.txt"; } >"$WORK/pydiff"; bad "no-Python report differs" "$WORK/pydiff"; fi
