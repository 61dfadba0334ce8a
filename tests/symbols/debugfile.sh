# debugfile.sh - a program's DWARF in a separate file named by its
# .gnu_debuglink (as distributions ship debug symbols) names its frames; a
# program without DWARF never makes the guard load libdebuginfod (libdw
# would, with its client's libraries and their constructors, on the report
# thread). Sourced by run.sh (its helpers, $B, $T, $WORK, $PRELOAD).
build debugfile tests/symbols/debugfile.c -L"$B/sim" -l:libcuda.so.1
mkdir -p "$WORK/dbg"
cp "$T/debugfile" "$WORK/dbg/linked"
objcopy --only-keep-debug "$WORK/dbg/linked" "$WORK/dbg/linked.debug" \
    && objcopy --strip-debug --remove-section=.note.gnu.build-id "$WORK/dbg/linked" \
    && (cd "$WORK/dbg" && objcopy --add-gnu-debuglink=linked.debug linked)
cp "$T/debugfile" "$WORK/dbg/bare" && strip "$WORK/dbg/bare"
if [ "${GMG_SANITIZER:-}" = tsan ]; then
    skip "a program's DWARF in a separate file" "no file:line for clang-built programs (known symbolizer gap, see reports.sh)"
else
    guarded "$WORK/dbg/linked"
    if grep -q " in debugfile_site tests/symbols/debugfile.c:[0-9]" "$WORK/err" && has "libdebuginfod mappings: 0" "$WORK/out"; then
        ok "a program's DWARF in a separate file (.gnu_debuglink, no build-id): its frames named with file and line"
    else bad "frames of a program with a separate debug file" "$WORK/err"; fi
fi
guarded "$WORK/dbg/bare"
if has "libdebuginfod mappings: 0" "$WORK/out" && grep -q "(bare+0x" "$WORK/err"; then
    ok "a program with no DWARF: its frames named by module and offset, libdebuginfod never loaded"
else bad "a program with no DWARF loaded libdebuginfod ($(cat "$WORK/out"))" "$WORK/err"; fi
# a program whose path holds a newline (which /proc/self/maps writes as \012)
mkdir -p "$WORK/dbg/new"$'\n'"line"
cp "$T/debugfile" "$WORK/dbg/new"$'\n'"line/prog"
guarded "$WORK/dbg/new"$'\n'"line/prog"
if grep -q " in debugfile_site " "$WORK/err"; then
    ok "a program whose path holds a newline: its frames named"
else bad "frames of a program whose path holds a newline" "$WORK/err"; fi
