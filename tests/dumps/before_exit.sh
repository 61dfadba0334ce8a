# before_exit.sh - a dump signalled just before exit is written, and
# numbered before the exit report (tests/dumps/dumps.c, built by
# tests/run.sh). Sourced by tests/run.sh (its helpers, $T, $WORK, $PRELOAD).

misses=""
for i in 1 2 3 4 5; do   # a dump signalled just before exit: written, and before the exit report
    rm -rf "$WORK/d"; mkdir -p "$WORK/d"
    env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT="$WORK/d/r.%n.txt" "$T/dumps" dump_exit >/dev/null 2>"$WORK/err"
    { grep -q "(signal, dump 1)" "$WORK/d/r.1.txt" && grep -q "(exit, dump 2)" "$WORK/d/r.2.txt"; } 2>/dev/null || misses="$misses $i"
done
[ -z "$misses" ] && ok "a dump signalled just before exit is written, numbered before the exit report (5 of 5 runs)" \
    || bad "dump just before exit (runs:$misses)" "$WORK/err"
