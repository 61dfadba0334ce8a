# marks.sh - the timeline's marks in order, and the counts beside them
# (tests/oom/marks.c). Sourced by tests/run.sh (its helpers, $T, $WORK).
build marks tests/oom/marks.c -L"$B/sim" -l:libcuda.so.1

# the peak, reached just before the driver's out-of-memory, is marked
# before it (it was marked at the next sample, after it)
guarded GPUSIM_MEM=64M GPUMEM_REPORT_FORMAT=json GPUMEM_REPORT="$WORK/marks.json" "$T/marks" fill
order=$(jq -r '[.timeline.events[] | select(.device == 0 and (.kind == "peak" or .kind == "driver_oom"))] | map("\(.kind)@\(.t_ms)") | join(" ")' "$WORK/marks.json" 2>/dev/null)
if [[ "$order" =~ ^peak@([0-9]+)\ driver_oom@([0-9]+)$ ]] && [ "${BASH_REMATCH[1]}" -le "${BASH_REMATCH[2]}" ] \
   && [ "$(jq '.devices[0].peak' "$WORK/marks.json")" = 67108864 ]; then
    ok "timeline: the peak reached just before the driver's out-of-memory is marked before it ($order)"
else bad "timeline: peak and out-of-memory marks: '$order'" "$WORK/marks.json"; fi

# a thread still asking (and refused by the driver) as main returns: the
# exit report counts every out-of-memory it marks (the counts were read
# before the marks, which took later ones in)
short=""
for i in 1 2 3 4 5 6 7 8; do
    guarded GPUSIM_MEM=64M GPUMEM_REPORT_FORMAT=json GPUMEM_REPORT="$WORK/storm.json" "$T/marks" storm
    c=$(jq -r '[.devices[0].driver_oom, ([.timeline.events[] | select(.kind == "driver_oom" and .device == 0)] | length)] | "\(.[0]) \(.[1])"' "$WORK/storm.json" 2>/dev/null)
    read -r count marked <<<"$c"
    { [ -n "$count" ] && [ "$count" -ge "$marked" ]; } || short="$short [$c]"
done
[ -z "$short" ] && ok "exit report with a thread still refused by the driver: its count of out-of-memory answers holds every one it marks (8 runs)" \
    || bad "exit report: driver_oom count below its marks (count marks):$short" "$WORK/storm.json"

