# entry_points.sh - the legacy (pre-_v2) entry points count what the driver
# holds (tests/legacy/entry_points.c). Sourced by tests/run.sh (its helpers,
# $T, $WORK).
build legacy_entry_points tests/legacy/entry_points.c -L"$B/sim" -l:libcuda.so.1

# the legacy (pre-_v2) entry points count what the driver holds: 2D and 3D
# arrays by their descriptors, pitch by the pitch; IPC gets its flag through
tguarded 60 "$T/legacy_entry_points"
has "legacy: array 0 guard 262144 sim 262144; 3d 0 guard 327680 sim 327680; pitch 0 (1024) guard 430080 sim 430080; freed guard 0 sim 0; ipc 0" "$WORK/out" \
    && ok "legacy cuArrayCreate, cuArray3DCreate, cuMemAllocPitch counted as the driver counts; cuIpcOpenMemHandle's flag passed on" \
    || bad "legacy entry points" "$WORK/out"
