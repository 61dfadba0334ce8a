# races.sh - VMM handle references raced on two threads
# (tests/vmm/races.c): the guard's count follows the driver's every round.
# Sourced by tests/run.sh (its helpers, $T, $WORK).
build vmm_races tests/vmm/races.c -L"$B/sim" -l:libcuda.so.1

# a VMM handle released on one thread while another unmaps it, released on
# two threads at once, or retained and released while its own reference goes
tguarded 120 "$T/vmm_races" 300
has "vmm races: 300 rounds, 0 wrong; guard 0 sim 0" "$WORK/out" \
    && ok "VMM handle references raced (release || unmap, release || release, retain+release || release): the count follows the driver's every round" \
    || bad "VMM handle races" "$WORK/out"
