# devices.sh - the public API asked about devices that do not exist
# (tests/api/devices.c). Sourced by tests/run.sh (its helpers, $T, $WORK).
build api_devices tests/api/devices.c -L"$B/sim" -l:libcuda.so.1

# the public API asked about devices that do not exist: no quota, nothing live
tguarded 60 GPUMEM_LIMIT=4M "$T/api_devices"
has "api: limit -1 0, 0 4194304, 64 0; live -1 1048576, 0 1048576, 64 0" "$WORK/out" \
    && ok "gpumemguard_limit(-1) and (64) are 0, (0) the limit; gpumemguard_live_bytes(-1) sums the devices" \
    || bad "public API out of range" "$WORK/out"

# a percentage before the device's size is known, or of a device not seen:
# no limit known (0), never the 1 byte the quota refuses with meanwhile
tguarded 60 GPUMEM_LIMIT=50% GPUSIM_MEM=64G "$T/api_devices" early
has "api early: limit 0 before 0, 0 after 34359738368, 5 0" "$WORK/out" \
    && ok "gpumemguard_limit under GPUMEM_LIMIT=50%: 0 before the first CUDA use and for a device not seen, half the device after" \
    || bad "gpumemguard_limit of a percentage" "$WORK/out"

# refusals counted since start-up: the quota's and the driver's, per device
# and in all (pinned host memory the driver refused counts in all only)
tguarded 60 GPUMEM_LIMIT=4M GPUSIM_MEM=64M GPUSIM_HOST_MEM=1M "$T/api_devices" refusals
cp "$WORK/out" "$WORK/refq.out"
tguarded 60 GPUSIM_MEM=64M GPUSIM_HOST_MEM=1M "$T/api_devices" refusals
has "refusals: calls 2 2 2; -1 rc 0 quota 2 driver 1; 0 rc 0 quota 2 driver 0; 64 rc -1; NULLs rc 0" "$WORK/refq.out" \
    && has "refusals: calls 0 2 2; -1 rc 0 quota 0 driver 2; 0 rc 0 quota 0 driver 1; 64 rc -1; NULLs rc 0" "$WORK/out" \
    && ok "gpumemguard_refusals: the quota's refusals and the driver's out of memory, per device and in all (pinned host memory in all only); -1 for a device that cannot be" \
    || bad "gpumemguard_refusals: $(cat "$WORK/refq.out")" "$WORK/out"
