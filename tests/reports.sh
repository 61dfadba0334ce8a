# reports.sh - report tests, sourced by run.sh (uses its helpers).

# JSON, checked field by field through jq.
guarded GPUMEM_REPORT_FORMAT=json "$T/apitest" direct reset
J="$WORK/err"
if jq -e '.schema == 1 and .trigger == "exit" and .totals.live_bytes == 131072 and .totals.live_allocations == 1
          and .totals.reclaimed_bytes == 5242880 and (.live | length) == 1 and .live[0].bytes == 131072
          and .live[0].api == "cuMemAlloc" and .live[0].device == 0 and .live[0].frames[0].function == "leak_after_reset"
          and .reclaimed[0].frames[0].function == "leak_before_reset" and .devices[0].peak == 5242880
          and .fragmentation[0].live_allocations == 1 and .fragmentation[0].requested_bytes == 131072
          and .fragmentation[0].granted_bytes == 131072 and .fragmentation[0].gaps == 0 and .growth == null
          and .incomplete == [] and .untracked.allocations == 0 and .unlisted.bytes == 0' "$J" >/dev/null 2>&1; then
    ok "JSON report: schema 1, totals, groups, frames, reclaimed, fragmentation (jq)"
else bad "JSON report" "$J"; fi
# Known defect: for test programs built by clang (the TSan build) libdwfl
# finds the function but no line table, so file:line is a test of its own,
# skipped (and said so) there rather than silently passed.
if [ "${GMG_SANITIZER:-}" = tsan ]; then
    skip "JSON frames with file:line" "no line table for clang-built programs (known symbolizer gap)"
elif jq -e '(.live[0].frames[0].file | endswith("apitest.c")) and .live[0].frames[0].line > 0
            and (.reclaimed[0].frames[0].file | endswith("apitest.c")) and .reclaimed[0].frames[0].line > 0' "$J" >/dev/null 2>&1; then
    ok "JSON frames carry file:line (apitest.c, line > 0)"
else bad "JSON frames without file:line" "$J"; fi

# libdw cannot read the process's modules (tests/integration/nodwfl.c: its
# /proc/PID/maps refused, or no module in it): frames are named from the
# dynamic symbol tables alone, and each report says so once, with libdw's
# reason; a refusal message too. A report with debug information says nothing.
build libgmgnodwfl.so -shared -fPIC tests/integration/nodwfl.c
DYN="WARNING: frames are named from the dynamic symbol tables only (dladdr): the debug information of the process's modules could not be read"
for how in fail none; do
    why=$([ $how = fail ] && echo "Permission denied" || echo "no module found in /proc/")
    env LD_PRELOAD="$PRELOAD $ROOT/$T/libgmgnodwfl.so" GMGTEST_DWFL=$how GPUMEM_REPORT_FORMAT=text,json \
        GPUMEM_REPORT="$WORK/dyn" "$T/apitest" direct reset >"$WORK/out" 2>"$WORK/err"
    if [ "$(grep -cF "$DYN" "$WORK/dyn.txt")" = 1 ] && has "$DYN (libdw: $why" "$WORK/dyn.txt" \
       && grep -qE '^    #0 0x[0-9a-f]+ in \?\? \(apitest\+0x[0-9a-f]+\)$' "$WORK/dyn.txt" \
       && jq -e --arg why "$why" '.dynamic_symbols_only == true and (.debuginfo_error | startswith($why))
                                  and .incomplete == []' "$WORK/dyn.json" >/dev/null; then
        ok "libdw cannot read the modules ($how): frames named from the dynamic symbol tables, and the report says so once, with why (text and JSON)"
    else bad "no debug information read ($how): the report does not say so" "$WORK/dyn.txt"; fi
done
guarded GPUMEM_REPORT_FORMAT=text,json GPUMEM_REPORT="$WORK/dwarf" "$T/apitest" direct reset
if ! grep -q "dynamic symbol tables" "$WORK/dwarf.txt" \
   && jq -e '.dynamic_symbols_only == false and .debuginfo_error == null' "$WORK/dwarf.json" >/dev/null; then
    ok "a report whose frames libdw named says nothing of dynamic symbol tables (JSON: false, null)"
else bad "a report with debug information read" "$WORK/dwarf.txt"; fi
env LD_PRELOAD="$PRELOAD $ROOT/$T/libgmgnodwfl.so" GMGTEST_DWFL=fail GPUMEM_REPORT=none GPUMEM_LIMIT=3M \
    "$T/untracked" nomem_refuse >"$WORK/out" 2>"$WORK/err"
if has "nomem_refuse: the fourth refused" "$WORK/out" && has "gpumemguard: refused cuMemAlloc" "$WORK/err" \
   && [ "$(grep -cF "$DYN (libdw: Permission denied)" "$WORK/err")" = 1 ]; then
    ok "a refusal message whose frames libdw could not name says so once too"
else bad "a refusal message without debug information" "$WORK/err"; fi

# folded stacks
guarded GPUMEM_REPORT_FORMAT=folded "$T/apitest" direct reset
if grep -qE '^_start;__libc_start_main[^ ]*;__libc_start_call_main;main;(reset;)?leak_after_reset;cuMemAlloc_device0 131072$' "$WORK/err" \
   && [ "$(grep -cvE '^[^ ]+ [0-9]+$' "$WORK/err")" = 0 ]; then
    ok "folded stacks: 'frame;frame;frame bytes', outermost first"
else bad "folded" "$WORK/err"; fi

# folded frame names flame graph tools can read (tests/reports/foldednames.c):
# a 1,602-byte UTF-8 name cut at a character and marked, a name that is not
# UTF-8 written with U+FFFD
build foldednames tests/reports/foldednames.c -L"$B/sim" -l:libcuda.so.1 -rdynamic
guarded GPUMEM_REPORT_FORMAT=folded GPUMEM_REPORT="$WORK/fn.folded" "$T/foldednames"
if python3 - "$WORK/fn.folded" <<'PYEOF'
import sys
text = open(sys.argv[1], "rb").read().decode("utf-8")  # strict
frames = [f for line in text.splitlines() for f in line.rsplit(" ", 1)[0].split(";")]
long = [f for f in frames if f.startswith("xy")]
assert long and long[0].endswith("...") and set(long[0][2:-3]) == {"\u00e4"} and len(long[0].encode()) < 1400, long
assert "bad\ufffd\ufffdutf8" in frames, frames
PYEOF
then ok "folded: a native name of 1,602 bytes of UTF-8 cut at a character and marked, one that is not UTF-8 written with U+FFFD"
else bad "folded names flame graph tools can read" "$WORK/fn.folded"; fi

# several formats to files: the path gets each format's extension, mode 0600
guarded GPUMEM_REPORT_FORMAT=text,json,folded GPUMEM_REPORT="$WORK/rep.%p" "$T/apitest" direct reset
f=$(ls "$WORK"/rep.*.json 2>/dev/null | grep -E '/rep\.[0-9]+\.json$' | head -1)   # %p expanded, not literal
if [ -n "$f" ] && [ -f "${f%.json}.txt" ] && [ -f "${f%.json}.folded" ] && [ "$(stat -c %a "$f")" = 600 ] \
   && jq -e .schema "$f" >/dev/null && ! has "SUMMARY" "$WORK/err"; then
    ok "GPUMEM_REPORT path with %p: one file per format, mode 0600, nothing on stderr"
else bad "report files" "$WORK/err"; fi

# a symlink as destination is refused; /dev/full falls back to stderr
ln -sf "$WORK/target" "$WORK/link"
guarded GPUMEM_REPORT="$WORK/link" "$T/apitest" direct reset
if [ ! -e "$WORK/target" ] && has "symbolic link: refused" "$WORK/err" && has "SUMMARY: gpumemguard" "$WORK/err"; then
    ok "report path through a symlink is refused, report goes to stderr"
else bad "symlink destination" "$WORK/err"; fi
if [ -L /dev/stdout ]; then
    guarded GPUMEM_REPORT=/dev/stdout "$T/apitest" direct reset
    has "cannot write report to /dev/stdout (it is a symbolic link: refused; the word stdout names the stream): writing to stderr" "$WORK/err" \
        && ok "GPUMEM_REPORT=/dev/stdout, a symlink, is refused with the word that names the stream" \
        || bad "GPUMEM_REPORT=/dev/stdout" "$WORK/err"
fi
guarded GPUMEM_REPORT=/dev/full "$T/apitest" direct reset; rc=$?
if [ $rc = 0 ] && has "cannot write report to /dev/full" "$WORK/err" && has "SUMMARY: gpumemguard" "$WORK/err"; then
    ok "/dev/full as destination falls back to stderr without harm"
else bad "/dev/full (rc $rc)" "$WORK/err"; fi

# the dump signal while 8 threads allocate, with the program's own handler
for when in before after; do
    if [ "${GMG_SANITIZER:-}" = tsan ]; then
        # TSan's own sigaction interceptor (in the program) installs the
        # program's handler with a raw syscall, which no preloaded library
        # sees; the guard arms in its constructor for a program linked with
        # -lcuda, so the program's handler always comes after ours here
        skip "SIGUSR1 ($when)" "TSan's runtime replaces the guard's handler by syscall"; continue
    fi
    timeout 60 env LD_PRELOAD="$PRELOAD" "$T/sigtest" threads "$when" >"$WORK/out" 2>"$WORK/err"; rc=$?
    dumps=$(grep -c "gpumemguard report (signal" "$WORK/err")
    if [ $rc = 0 ] && has "handler saw 5 of 5" "$WORK/out" && [ "$dumps" -ge 1 ] && has "(exit, dump" "$WORK/err"; then
        ok "SIGUSR1 under 8 allocating threads: $dumps dumps, no deadlock, program's handler ($when) saw every signal"
    else bad "SIGUSR1 $when (rc $rc, $dumps dumps)" "$WORK/out"; fi
done
timeout 60 env LD_PRELOAD="$PRELOAD" GPUMEM_SIGNAL=none "$T/sigtest" threads before >"$WORK/out" 2>"$WORK/err"
has "handler saw 5 of 5" "$WORK/out" && ! has "(signal" "$WORK/err" && ok "GPUMEM_SIGNAL=none leaves the signal to the program" \
    || bad "GPUMEM_SIGNAL=none" "$WORK/err"

# growth between two dumps lists exactly what was made in between
mkdir -p "$WORK/g"
timeout 60 env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT="$WORK/g/dump.%n" GPUMEM_REPORT_FORMAT=json "$T/sigtest" growth "$WORK/g" >"$WORK/out" 2>"$WORK/err"
if jq -e '.trigger == "signal" and (.growth | length) == 1 and .growth[0].bytes == 900000 and .growth[0].count == 3
          and .growth[0].frames[0].function == "grow_site"' "$WORK/g/dump.2" >/dev/null 2>&1 \
   && jq -e '(.growth | length) == 1 and .growth[0].frames[0].function == "old_site"' "$WORK/g/dump.1" >/dev/null 2>&1; then
    ok "growth section of a signal dump lists exactly the allocations made since the previous dump"
else bad "growth" "$WORK/g/dump.2"; fi
# a suppressed stack is left out of growth as out of the live list, and
# counted once under the suppressions (from the live list)
rm -rf "$WORK/g"; mkdir -p "$WORK/g"; echo "leak:grow_site" > "$WORK/g.supp"
timeout 60 env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT="$WORK/g/dump.%n" GPUMEM_REPORT_FORMAT=json GPUMEM_SUPPRESSIONS="$WORK/g.supp" \
    "$T/sigtest" growth "$WORK/g" >"$WORK/out" 2>"$WORK/err"
if jq -e '(.growth | length) == 0 and .suppressions == [{"template":"grow_site","count":3,"bytes":900000}]
          and ([.live[].frames[0].function] | index("grow_site") == null)' "$WORK/g/dump.2" >/dev/null 2>&1 \
   && jq -e '(.growth | length) == 1 and .growth[0].frames[0].function == "old_site"' "$WORK/g/dump.1" >/dev/null 2>&1; then
    ok "growth leaves out a suppressed stack, as the live list does; the suppression counted once"
else bad "growth with a suppression" "$WORK/g/dump.2"; fi

# device free memory where the reporting thread has no context on the
# device: a signal dump (the reporter thread) and the other device at exit
# ask NVML (its double reads 4096 bytes under the driver, so that which one
# answered shows); the exiting thread's own device asks the driver. Two
# 64 MiB devices, 1 MiB live on device 0 and 2 MiB on device 1.
devfree() { # DIR ENV...
    local d=$1; shift; rm -rf "$d"; mkdir -p "$d"
    timeout 60 env LD_PRELOAD="$PRELOAD" GPUSIM_DEVICES=2 GPUSIM_MEM=64M GPUSIM_NVML_SKEW=4096 GPUSIM_NVML_LOG="$d/nvml.log" \
        GPUMEM_REPORT="$d/dump.%n" "$@" "$T/sigtest" devfree "$d" >"$WORK/out" 2>"$WORK/err"
}
frees() { jq -c '[.fragmentation[] | [.device, .device_free, .device_total, .device_free_from]]' "$1" 2>/dev/null; }
devfree "$WORK/df" GPUMEM_REPORT_FORMAT=json
if [ "$(frees "$WORK/df/dump.1")" = '[[0,66056192,67108864,"nvml"],[1,65007616,67108864,"nvml"]]' ] \
   && [ "$(frees "$WORK/df/dump.2")" = '[[0,66060288,67108864,"driver"],[1,65007616,67108864,"nvml"]]' ]; then
    ok "device free memory: NVML's in a signal dump and for another device at exit, the context's own at exit (JSON)"
else bad "device free memory from NVML (JSON)" "$WORK/df/dump.1"; fi
devfree "$WORK/df"
if grep -q "^  device free at report time: 62.0 MiB (65007616 bytes) of 64.0 MiB (67108864 bytes) (NVML)$" "$WORK/df/dump.1" \
   && grep -q "^  device free at report time: 63.0 MiB (66060288 bytes) of 64.0 MiB (67108864 bytes)$" "$WORK/df/dump.2" \
   && [ "$(grep -c "^init$" "$WORK/df/nvml.log")" = 1 ]; then
    ok "device free memory (text): NVML's marked (NVML); NVML opened once for the process's reports"
else bad "device free memory from NVML (text)" "$WORK/df/dump.1"; fi
devfree "$WORK/df" GPUMEM_REPORT_FORMAT=json GPUSIM_NVML=mig
[ "$(frees "$WORK/df/dump.1")" = '[[0,66056192,67108864,"nvml"],[1,65007616,67108864,"nvml"]]' ] \
    && grep -q "^uuid MIG-" "$WORK/df/nvml.log" \
    && ok "device free memory of a MIG instance: NVML finds it by its MIG- UUID" \
    || bad "device free memory, MIG" "$WORK/df/nvml.log"
devfree "$WORK/df" GPUSIM_NVML=absent
if grep -q "^  device free at report time: unknown (no context on this device, no NVML)$" "$WORK/df/dump.1" \
   && grep -q "^  device free at report time: 63.0 MiB (66060288 bytes) of 64.0 MiB (67108864 bytes)$" "$WORK/df/dump.2" && has "done" "$WORK/out"; then
    ok "device free memory without NVML (nvmlInit fails): unknown where no context, the driver's where one is"
else bad "device free memory without NVML" "$WORK/df/dump.1"; fi
# a report made where the context is current asks nothing of NVML
guarded GPUSIM_NVML_LOG="$WORK/nvml-none.log" "$T/apitest" direct families
[ ! -e "$WORK/nvml-none.log" ] && has "device free at report time: " "$WORK/err" \
    && ok "NVML is not opened when the reporting thread's context answers" || bad "NVML opened needlessly" "$WORK/nvml-none.log"
# ... nor for a report that does not show device free memory, where no
# context answers: a clean exit's SUMMARY line alone (legacy2dev frees all,
# on two devices), GPUMEM_REPORT=none with GPUMEM_EXITCODE (the report built
# for its leaks alone), folded stacks. NVML's init can be slow (seconds on a
# node without persistence mode) and is not the program's to pay at exit for
# a number no one reads.
rm -f "$WORK"/nvml-*.log
guarded GPUSIM_DEVICES=2 GPUSIM_NVML_LOG="$WORK/nvml-clean.log" "$T/per_device" legacy2dev
clean_ok=$(grep -c "^SUMMARY: gpumemguard: 0 bytes in 0 allocations still live at exit$" "$WORK/err")
guarded GPUSIM_DEVICES=2 GPUMEM_LIMIT=0:4M,1:8M GPUMEM_REPORT=none GPUMEM_EXITCODE=23 \
    GPUSIM_NVML_LOG="$WORK/nvml-none.log" "$T/per_device" perdev; none_rc=$?
guarded GPUSIM_DEVICES=2 GPUMEM_LIMIT=0:4M,1:8M GPUMEM_REPORT_FORMAT=folded \
    GPUSIM_NVML_LOG="$WORK/nvml-folded.log" "$T/per_device" perdev
if [ "$clean_ok" = 1 ] && [ $none_rc = 23 ] && grep -q " 4194304$" "$WORK/err" \
   && [ ! -e "$WORK/nvml-clean.log" ] && [ ! -e "$WORK/nvml-none.log" ] && [ ! -e "$WORK/nvml-folded.log" ]; then
    ok "NVML is not opened for a report that shows no device free memory (a clean exit, GPUMEM_REPORT=none, folded)"
else bad "NVML opened for a report that does not show what it says (clean $clean_ok, none: exit $none_rc)" \
    "$(ls "$WORK"/nvml-*.log 2>/dev/null | head -1 || echo "$WORK/err")"; fi

# fragmentation: gaps appear when allocations between live ones are freed;
# the numbers, not only the labels (tests/reports/fragmentation.sh pins every field)
guarded "$T/apitest" direct families
if has "Fragmentation, device 0:" "$WORK/err" && has "  live allocations: 6 (13.6 MiB (14255776 bytes) requested, 13.6 MiB (14258176 bytes) granted)" "$WORK/err" \
   && has "  size classes: 64KiB-1MiB: 1 1MiB-16MiB: 5" "$WORK/err" \
   && has "  rounding waste: 2.3 KiB (2400 bytes)" "$WORK/err" && grep -q "^  span utilisation: [0-9.]*%$" "$WORK/err" \
   && grep -q "^  gaps: [1-9]" "$WORK/err"; then
    ok "fragmentation section: size classes, span, gaps, utilisation, rounding waste (the pitch's 2400 bytes)"
else bad "fragmentation" "$WORK/err"; fi

# C++ names in a process with no C++ runtime (an nvcc- or g++-built program
# that calls nothing of libstdc++): demangled by the guard's own demangler
# (libiberty's, linked in), in every format, and suppressions match them;
# no runtime loaded for it. tests/integration/mangled.c is C under C++
# names. The ASan build brings libstdc++ in (UBSan's runtime needs it):
# there the names are checked, the runtime's absence cannot be.
mkdir -p "$WORK/mg"
guarded GPUMEM_REPORT_FORMAT=text,json,folded GPUMEM_REPORT="$WORK/mg/rep.%n" "$T/mangled"
if [ "${GMG_SANITIZER:-}" != asan ]; then
    if ldd "$T/mangled" | grep -qE 'libstdc\+\+|libc\+\+' || ! has "after the report, C++ runtime mapped: none" "$WORK/out" \
       || ! has "global __cxa_demangle: no" "$WORK/out"; then
        bad "mangled: a C++ runtime in the process (linked, or loaded by the guard)" "$WORK/out"
    else ok "a C program with C++ names: no C++ runtime linked, none loaded by the guard's reports"; fi
else
    skip "no C++ runtime loaded by the guard" "UBSan's runtime brings libstdc++ in"
fi
mg=$WORK/mg/rep.2
if grep -q " in model::load_weights(unsigned long) " "$mg.txt" && grep -q " in hidden(unsigned long) " "$mg.txt" \
   && grep -q " in kv::Cache::grow(int) " "$mg.txt" && grep -q " in model::load_weights(unsigned long) " "$WORK/mg/rep.1.txt" \
   && jq -e '.live[0].frames[0].function == "model::load_weights(unsigned long)" and .live[0].frames[1].function == "hidden(unsigned long)"
             and .live[1].frames[0].function == "kv::Cache::grow(int)"' "$mg.json" >/dev/null 2>&1 \
   && grep -qE ';main;hidden\(unsigned_long\);model::load_weights\(unsigned_long\);cuMemAlloc_device0 1048576$' "$mg.folded" \
   && grep -qE ';main;kv::Cache::grow\(int\);cuMemAlloc_device0 65536$' "$mg.folded" \
   && ! grep -q "_ZN5model\|_ZL6hidden\|_ZN2kv" "$WORK"/mg/rep.*; then
    ok "C++ names demangled without a C++ runtime: model::load_weights(unsigned long), a static hidden(unsigned long), in text, JSON and folded"
else bad "C++ names without a C++ runtime" "$mg.txt"; fi
printf 'leak:model::load_weights*\n' >"$WORK/mg/supp"
guarded GPUMEM_EXITCODE=23 GPUMEM_SUPPRESSIONS="$WORK/mg/supp" GPUMEM_REPORT="$WORK/mg/supp.%n" "$T/mangled"; rc=$?
mg=$WORK/mg/supp.2 # the exit report (a dump's growth section lists suppressed stacks too)
if [ $rc = 23 ] && grep -qE "^ +1 +1048576 model::load_weights\*$" "$mg" \
   && has "SUMMARY: gpumemguard: 65536 bytes in 1 allocation still live at exit" "$mg" \
   && has "64.0 KiB (65536 bytes) in 1 allocation (cuMemAlloc" "$mg" && ! before_peak "$mg" | grep -qF "(1048576 bytes) in 1 allocation"; then
    ok "a suppression by a demangled name (leak:model::load_weights*) matches without a C++ runtime; the other leak stays"
else bad "suppression by a demangled name (rc $rc)" "$mg"; fi
# libiberty is linked in hidden (the Makefile's --exclude-libs): none of its
# symbols is exported, so none takes the place of a program's own
iberty=$($CC -print-file-name=libiberty.a)
if [ "${iberty#/}" = "$iberty" ] || [ ! -f "$iberty" ]; then
    bad "exports: libiberty.a not found ($iberty)"
else
    nm -g --defined-only "$iberty" 2>/dev/null | awk 'NF == 3 { print $3 }' | sort -u >"$WORK/iberty.syms"
    nm -D --defined-only "$B/libgpumemguard.so" | awk 'NF == 3 { print $3 }' | sort -u >"$WORK/lib.syms"
    comm -12 "$WORK/iberty.syms" "$WORK/lib.syms" >"$WORK/out"
    if [ -s "$WORK/iberty.syms" ] && [ ! -s "$WORK/out" ] && grep -qx gpumemguard_dump "$WORK/lib.syms"; then
        ok "the built-in demangler exports nothing: none of libiberty's $(wc -l <"$WORK/iberty.syms") symbols in the library's dynamic table"
    else bad "libiberty symbols exported" "$WORK/out"; fi
fi
