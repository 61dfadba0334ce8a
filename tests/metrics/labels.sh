# labels.sh - every series names its process on a node of containers: two
# processes that are each pid 1 of a pid namespace of their own (two pods'
# first processes) write no series of one name and labels, which
# node_exporter's textfile collector refuses; the host label is the host
# name. Uses tests/metrics/interval.c (built by interval.sh). Sourced by
# tests/run.sh.
series_of() { sed -n 's/^\([a-z_]*{[^}]*}\) .*/\1/p' "$1" | sort; }
if ! unshare -pf --mount-proc true 2>/dev/null; then
    skip "metrics: two pid-1 processes of two pid namespaces" "unshare -p needs root here"
else
    rm -f "$WORK/ns1.prom" "$WORK/ns2.prom"
    for n in 1 2; do
        printf '\n\n' | unshare -pf --mount-proc env LD_PRELOAD="$PRELOAD" GPUMEM_METRICS="$WORK/ns$n.prom" \
            GPUMEM_REPORT=none "$T/interval" >"$WORK/ns$n.out" 2>"$WORK/ns$n.err"
    done
    both=$(comm -12 <(series_of "$WORK/ns1.prom") <(series_of "$WORK/ns2.prom") | wc -l)
    n1=$(series_of "$WORK/ns1.prom" | wc -l)
    if [ "$n1" -gt 5 ] && [ "$both" = 0 ] && grep -q 'pid="1",' "$WORK/ns1.prom" && grep -q 'pid="1",' "$WORK/ns2.prom" \
       && grep -q "^gpumem_used_bytes{device=\"0\",pid=\"1\",exe=\"interval\",host=\"$(hostname)\",pidns=\"[0-9]*\"} 2097152$" "$WORK/ns1.prom"; then
        ok "metrics: two processes that are each pid 1 of a pid namespace share no series (labels host and pidns)"
    else
        { echo "$n1 series, $both in both"; cat "$WORK/ns1.prom" "$WORK/ns2.prom"; } >"$WORK/ns.why" 2>&1
        bad "metrics: series of two pid-1 processes" "$WORK/ns.why"
    fi
fi
