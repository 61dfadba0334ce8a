# accepted_values.sh - the man page states the accepted values the library
# enforces (tests/integration/alloc.c refused at start-up). Sourced by
# tests/run.sh (its helpers, $T, $WORK).

guarded GPUMEM_GROUP=.hidden "$T/alloc" 0 1; r1=$?
guarded GPUMEM_METRICS_INTERVAL=86401 "$T/alloc" 0 1; r2=$?
if [ $r1 = 2 ] && [ $r2 = 2 ] && grep -qF "not starting with '.'" docs/gpumemguard.1 \
   && grep -qF "a whole number from 1 to 86400" docs/gpumemguard.1; then
    ok "the man page gives GPUMEM_GROUP's and GPUMEM_METRICS_INTERVAL's accepted values as the library enforces them"
else bad "man page accepted values (GPUMEM_GROUP=.hidden rc $r1, GPUMEM_METRICS_INTERVAL=86401 rc $r2)"; fi
