# lost.sh - a dump that cannot be written anywhere leaves its growth to the
# next (tests/dumps/lost.c). Sourced by tests/run.sh (its helpers, $T,
# $WORK, $PRELOAD).
build dump_lost tests/dumps/lost.c -L"$B/sim" -l:libcuda.so.1

# A dump that cannot be written anywhere (its directory gone, stderr full)
# leaves its growth to the next: twice rather than never
rm -rf "$WORK/g"; mkdir -p "$WORK/g"
env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT="$WORK/g/r.json" GPUMEM_REPORT_FORMAT=json "$T/dump_lost" "$WORK/g" \
    >"$WORK/out" 2>/dev/full
g=$(jq -c '[.growth[] | .count, .bytes]' "$WORK/g/r.2.json" 2>/dev/null)
if grep -q "dumplost: two dumps" "$WORK/out" && [ ! -e "$WORK/g/r.json" ] && [ "$g" = "[1,2097152,1,1048576]" ]; then
    ok "a dump lost (no directory, stderr full): the next dump's growth still lists its allocation"
else bad "dump lost, growth: $g, files: $(ls "$WORK/g" | tr '\n' ' ')" "$WORK/out"; fi
