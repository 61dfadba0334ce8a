# races.sh - a graph allocation freed by two free nodes, or a free node and
# cuMemFree, on two threads at once (tests/graphs/races.c). Sourced by
# tests/run.sh (its helpers, $T, $WORK).
build graph_races tests/graphs/races.c -L"$B/sim" -l:libcuda.so.1

# a graph allocation freed by free nodes of two graphs, or a free node and
# cuMemFree, at once: nothing left, nothing counted
tguarded 120 "$T/graph_races" 200
has "graph races: 200 rounds; guard 0 sim 0" "$WORK/out" && has "SUMMARY: gpumemguard: 0 bytes in 0 allocations still live at exit" "$WORK/err" \
    && ok "a graph allocation freed by two free nodes, or a free node and cuMemFree, on two threads at once: nothing left listed" \
    || bad "graph free races" "$WORK/out"
