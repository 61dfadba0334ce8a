# concurrent.sh - gpumemguard_dump() from 4 threads at once, and the exit
# report, to one path: every report its own file, no temporary collides
# (tests/dumps/dumps.c). Sourced by tests/run.sh (its helpers, $T, $WORK,
# $PRELOAD).

rm -rf "$WORK/a"; mkdir -p "$WORK/a"
env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT="$WORK/a/r.txt" "$T/dumps" apidumps 40 >/dev/null 2>"$WORK/err"
n=$(ls "$WORK/a" | grep -cE '^r(\.[0-9]+)?\.txt$')
[ "$n" = 161 ] && ! has "cannot write" "$WORK/err" && [ -z "$(ls "$WORK/a" | grep tmp)" ] \
    && ok "160 concurrent API dumps from 4 threads and the exit report, one path: 161 files, no temporary collides" \
    || bad "concurrent dumps: $n files" "$WORK/err"
