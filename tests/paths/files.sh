# files.sh - where reports land: a path without %n (each dump its own
# file), stale temporaries of an earlier process with this pid, a guarded
# wrapper (sh -c) around the program (tests/dumps/dumps.c). Sourced by
# tests/run.sh (its helpers, $ROOT, $T, $WORK, $PRELOAD).

rm -rf "$WORK/n"; mkdir -p "$WORK/n"
env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT="$WORK/n/r.txt" "$T/dumps" dumps 2 >/dev/null 2>"$WORK/err"
if grep -q "(signal, dump 1)" "$WORK/n/r.txt" 2>/dev/null && grep -q "(signal, dump 2)" "$WORK/n/r.2.txt" 2>/dev/null \
   && grep -q "(exit, dump 3)" "$WORK/n/r.3.txt" 2>/dev/null && [ "$(ls "$WORK/n" | wc -l)" = 3 ]; then
    ok "a path without %n: dumps 2 and 3 go to r.2.txt and r.3.txt, none replaced"
else bad "path without %n: $(ls "$WORK/n" | tr '\n' ' ')" "$WORK/err"; fi

rm -rf "$WORK/s"; mkdir -p "$WORK/s"
env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT="$WORK/s/r.txt" "$T/dumps" stale_tmp "$WORK/s/r.txt" >/dev/null 2>"$WORK/err"
grep -q "SUMMARY: gpumemguard" "$WORK/s/r.txt" 2>/dev/null && ! has "cannot write" "$WORK/err" \
    && ok "stale temporaries left by an earlier process with this pid: the report still lands in its file" \
    || bad "stale temporaries" "$WORK/err"

# a legal file name of 255 bytes: the temporary beside it must fit too
rm -rf "$WORK/l"; mkdir -p "$WORK/l"
long=$(printf 'r%.0s' $(seq 251)).txt
env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT="$WORK/l/$long" "$T/dumps" stale_tmp "$WORK/l/$long" >/dev/null 2>"$WORK/err"
grep -q "SUMMARY: gpumemguard" "$WORK/l/$long" 2>/dev/null && [ "$(ls -A "$WORK/l" | grep -c '')" -ge 1 ] && ! has "cannot write" "$WORK/err" \
    && ok "a report file named with 255 bytes (the most a name may have) is written there, its temporary beside it" \
    || bad "a 255-byte report file name" "$WORK/err"

if [ "${GMG_SANITIZER:-}" != tsan ]; then
    rm -rf "$WORK/w"; mkdir -p "$WORK/w"
    env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT="$WORK/w/r.txt" sh -c "\"$ROOT/$T/dumps\" dump_exit" >/dev/null 2>&1
    [ "$(ls "$WORK/w" | tr '\n' ' ')" = "r.2.txt r.txt " ] \
        && ok "a guarded wrapper (sh -c) around the program does not move its reports to r.PID.txt" \
        || bad "reports behind a wrapper: $(ls "$WORK/w" | tr '\n' ' ')"
fi
