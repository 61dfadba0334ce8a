# interval.sh - the metrics file is written every GPUMEM_METRICS_INTERVAL
# seconds and at exit, not at each second's tick: with an interval of 30 s,
# a program that runs for about 4 s (four ticks, a second megabyte
# allocated halfway) has no file until it exits, and then the file has
# both megabytes. Sourced by tests/run.sh.
build interval tests/metrics/interval.c -L"$B/sim" -l:libcuda.so.1
used_mib() { awk '/^gpumem_used_bytes\{device="0",/ {print $NF / 1048576}' "$WORK/interval.prom" 2>/dev/null; }
rm -f "$WORK/interval.prom" "$WORK/interval.in"
mkfifo "$WORK/interval.in"
env LD_PRELOAD="$PRELOAD" GPUMEM_METRICS="$WORK/interval.prom" GPUMEM_METRICS_INTERVAL=30 \
    "$T/interval" <"$WORK/interval.in" >"$WORK/interval.out" 2>"$WORK/interval.err" &
IP=$!
exec 7>"$WORK/interval.in"
early=""
for _ in $(seq 200); do grep -q '^a$' "$WORK/interval.out" && break; sleep 0.05; done
sleep 2
[ -e "$WORK/interval.prom" ] && early="$early first"
echo >&7
for _ in $(seq 200); do grep -q '^b$' "$WORK/interval.out" && break; sleep 0.05; done
sleep 2
[ -e "$WORK/interval.prom" ] && early="$early second"
echo >&7
exec 7>&-
wait $IP; rc=$?
last=$(used_mib)
if [ $rc = 0 ] && [ -z "$early" ] && [ "$last" = 2 ]; then
    ok "GPUMEM_METRICS_INTERVAL=30: no metrics file during a 4-second run (four ticks), the file at exit with its 2 MiB in use"
else bad "metrics interval: exit $rc, the file there before its interval, seen after megabytes:${early:- none}; MiB in use in it at exit '$last'" "$WORK/interval.err"; fi
