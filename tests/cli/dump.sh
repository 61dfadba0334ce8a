# dump.sh - gpumemguard dump: a bad --signal is a usage error (status 2),
# whatever the process (even one that does not exist). Sourced by
# tests/run.sh (its helpers, $B, $WORK).

"$B/gpumemguard" dump --signal bogus 2147483647 >"$WORK/out" 2>"$WORK/err"; rc=$?
[ $rc = 2 ] && has "--signal 'bogus' is not a dump signal" "$WORK/err" \
    && ok "gpumemguard dump --signal bogus: a usage error, status 2, before the process is looked at" \
    || bad "dump with a bad --signal (rc $rc)" "$WORK/err"

# what the command names is where that dump went: a forked child's file (its
# pid in the name), a report that fell back to stderr, and the signal dump's
# own number while the program dumps through the public API meanwhile
build dumpee tests/cli/dumpee.c -L"$B/sim" -l:libcuda.so.1 -ldl -lpthread
# dwait FILE WORD: until FILE has WORD (10 s)
dwait() { for _ in $(seq 1 1000); do grep -q -- "$2" "$1" 2>/dev/null && return 0; sleep 0.01; done; return 1; }
rm -rf "$WORK/dk" && mkdir "$WORK/dk"
env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT="$WORK/dk/r.txt" "$T/dumpee" fork 4 >"$WORK/dk.out" 2>/dev/null & dk=$!
dwait "$WORK/dk.out" child; child=$(awk '/^child/ {print $2}' "$WORK/dk.out")
"$B/gpumemguard" dump "$child" >"$WORK/dk.cmd" 2>&1
named=$(sed -n 's/.*its report is written: //p' "$WORK/dk.cmd")
kill $dk 2>/dev/null; wait $dk 2>/dev/null
[ -n "$child" ] && [ "$named" = "$WORK/dk/r.$child.txt" ] && [ -f "$named" ] \
    && ok "gpumemguard dump of a forked child (GPUMEM_REPORT without %p): names the file it wrote, its pid in the name" \
    || bad "dump of a forked child named '$named'" "$WORK/dk.cmd"
env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT="$WORK/dgone/r.txt" "$T/dumpee" hold 4 >"$WORK/dg.out" 2>"$WORK/dg.err" & dg=$!
dwait "$WORK/dg.out" pid
"$B/gpumemguard" dump $dg >"$WORK/dg.cmd" 2>&1
kill $dg 2>/dev/null; wait $dg 2>/dev/null
has "could not be written to $WORK/dgone/r.txt" "$WORK/dg.cmd" && has "it went to the process's standard error" "$WORK/dg.cmd" \
    && has "gpumemguard report (signal, dump 1)" "$WORK/dg.err" \
    && ok "gpumemguard dump of a process whose report directory is gone: says the file could not be written and the report went to its stderr" \
    || bad "dump that fell back to stderr" "$WORK/dg.cmd"
rm -rf "$WORK/db" && mkdir "$WORK/db"
env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT="$WORK/db/r.%n.txt" "$T/dumpee" busy 6 >"$WORK/db.out" 2>/dev/null & db=$!
dwait "$WORK/db.out" pid
wrongn=0
for i in 1 2 3 4 5 6; do
    "$B/gpumemguard" dump $db >"$WORK/db.cmd" 2>&1
    f=$(sed -n 's/.*its report is written: //p' "$WORK/db.cmd")
    head -1 "$f" 2>/dev/null | grep -q "(signal, dump" || wrongn=$((wrongn + 1))
done
kill $db 2>/dev/null; wait $db 2>/dev/null
[ $wrongn = 0 ] && ok "gpumemguard dump while the program dumps through the public API: each time the signal dump's own file" \
    || bad "dump named another report's file $wrongn times of 6" "$WORK/db.cmd"
# a program that blocks the dump signal in every thread: after the wait,
# said so (not "busy")
env LD_PRELOAD="$PRELOAD" "$T/dumpee" blocked 20 >"$WORK/db.out" 2>"$WORK/db.err" & db=$!
dwait "$WORK/db.out" pid
"$B/gpumemguard" dump $db >"$WORK/db.cmd" 2>&1
kill -KILL $db 2>/dev/null; wait $db 2>/dev/null
has "once a thread of it unblocks SIGUSR1 (not written within 10 s: every thread blocks it)" "$WORK/db.cmd" \
    && ok "gpumemguard dump of a process that blocks the dump signal in every thread: says so, not that it may be busy" \
    || bad "dump of a process blocking the signal" "$WORK/db.cmd"
