# create.sh - cuMemCreate handles that hold no device quota: a failed one
# (location -1) keeps none, one in host memory is counted on no device and
# reported on the current context's (tests/vmm/create.c). Sourced by
# tests/run.sh (its helpers, $T, $WORK).
build vmm_create tests/vmm/create.c -L"$B/sim" -l:libcuda.so.1

# a failed cuMemCreate at location -1 leaks no quota
guarded GPUMEM_LIMIT=8M "$T/vmm_create" vmm_badloc
has "failed creates 40; then alloc of the whole limit: 0; guard 8388608" "$WORK/out" \
    && ok "40 failed cuMemCreate at location -1 keep no quota" || bad "cuMemCreate location -1" "$WORK/out"

# a VMM handle in host memory: not counted on any device (2 MiB under a
# 1 MiB limit), tracked under the current context's device (1 here)
tguarded 60 GPUSIM_DEVICES=2 GPUMEM_LIMIT=1M GPUMEM_REPORT_FORMAT=json "$T/vmm_create" vmm_host
has "vmm_host: 0; guard 0 0 sim 0 0" "$WORK/out" \
    && jq -e '[.live[] | select(.api == "cuMemCreate")] | length == 1 and .[0].device == 1 and .[0].bytes == 2097152
              and .[0].frames[0].function == "vmm_host"' "$WORK/err" >/dev/null 2>&1 \
    && ok "a host-memory cuMemCreate handle: not counted against the limit, reported on the current context's device" \
    || bad "host-memory VMM handle" "$WORK/out"
