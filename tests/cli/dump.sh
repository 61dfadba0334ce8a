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
# a thread id of a guarded process: the process is asked, and the command
# names the file that process wrote (it waited 10 s for an answer from the
# thread, then named a file of the thread's id)
rm -rf "$WORK/dt" && mkdir "$WORK/dt"
env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT="$WORK/dt/r.%p.%n.txt" "$T/dumpee" busy 6 >"$WORK/dt.out" 2>/dev/null & dt=$!
dwait "$WORK/dt.out" pid
tid=$(ls "/proc/$dt/task" 2>/dev/null | grep -vx "$dt" | head -1)
t0=$(date +%s%N)
"$B/gpumemguard" dump "$tid" >"$WORK/dt.cmd" 2>&1; rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
f=$(sed -n 's/.*its report is written: //p' "$WORK/dt.cmd")
kill $dt 2>/dev/null; wait $dt 2>/dev/null
[ -n "$tid" ] && [ $rc = 0 ] && has "$tid is a thread of process $dt: asking that one" "$WORK/dt.cmd" \
    && case "$f" in "$WORK/dt/r.$dt."*) true ;; *) false ;; esac && head -1 "$f" 2>/dev/null | grep -q "(signal, dump" && [ $ms -lt 8000 ] \
    && ok "gpumemguard dump of a thread id: asks its process, and names the file that process wrote ($ms ms)" \
    || bad "dump of thread $tid of $dt (rc $rc, $ms ms, named '$f')" "$WORK/dt.cmd"
# a guarded process that has ended, its parent not waiting for it (a zombie):
# said so, nothing sent
sh -c 'env LD_PRELOAD="$1" "$2" hold 0 >"$3" 2>/dev/null & exec sleep 30' _ "$PRELOAD" "$T/dumpee" "$WORK/dz.out" & dzp=$!
dwait "$WORK/dz.out" pid; dz=$(awk '/^pid/ {print $2}' "$WORK/dz.out")
for _ in $(seq 200); do [ "$(awk '{print $3}' "/proc/$dz/stat" 2>/dev/null)" = Z ] && break; sleep 0.05; done
"$B/gpumemguard" dump "$dz" >"$WORK/dz.cmd" 2>&1; rc=$?
kill $dzp 2>/dev/null; wait $dzp 2>/dev/null
[ -n "$dz" ] && [ $rc = 1 ] && has "dump: process $dz has ended (its parent has not waited for it yet); nothing sent" "$WORK/dz.cmd" \
    && ok "gpumemguard dump of a guarded process that has ended (a zombie): says it has ended" \
    || bad "dump of a zombie (rc $rc)" "$WORK/dz.cmd"
# a program that blocks the dump signal in every thread: after the wait,
# said so (not "busy")
env LD_PRELOAD="$PRELOAD" "$T/dumpee" blocked 20 >"$WORK/db.out" 2>"$WORK/db.err" & db=$!
dwait "$WORK/db.out" pid
"$B/gpumemguard" dump $db >"$WORK/db.cmd" 2>&1
kill -KILL $db 2>/dev/null; wait $db 2>/dev/null
has "once a thread of it unblocks SIGUSR1 (not written within 10 s: every thread blocks it)" "$WORK/db.cmd" \
    && ok "gpumemguard dump of a process that blocks the dump signal in every thread: says so, not that it may be busy" \
    || bad "dump of a process blocking the signal" "$WORK/db.cmd"
