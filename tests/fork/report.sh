# report.sh - a forked child's exit report goes to its own file
# (r.PID.txt, a path without %p) with only its own allocations
# (tests/fork/report.c). Sourced by tests/run.sh (its helpers, $T, $WORK,
# $PRELOAD).
# (its program is built by tests/run.sh: other scripts run it too)

rm -rf "$WORK/f"; mkdir -p "$WORK/f"
timeout 60 env LD_PRELOAD="$PRELOAD" GPUMEM_REPORT="$WORK/f/r.txt" "$T/fork_report" >"$WORK/out" 2>"$WORK/err"
child=$(sed -n 's/^child \([0-9]*\)$/\1/p' "$WORK/out")
if [ -n "$child" ] && grep -q "1048576 bytes in 1 allocation still live at exit" "$WORK/f/r.txt" 2>/dev/null \
   && grep -q "2097152 bytes in 1 allocation still live at exit" "$WORK/f/r.$child.txt" 2>/dev/null \
   && ! grep -q parent_site "$WORK/f/r.$child.txt" && grep -q "allocations made: 1$" "$WORK/f/r.$child.txt"; then
    ok "a path without %p: the forked child's report goes to r.PID.txt with only its own allocations"
else bad "path without %p, fork: $(ls "$WORK/f" | tr '\n' ' ')" "$WORK/err"; fi
