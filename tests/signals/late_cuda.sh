# late_cuda.sh - a handler for the dump signal installed before the process
# touches CUDA (tests/signals/late_cuda.c). Sourced by tests/run.sh (its
# helpers, $T, $WORK).
build latecuda tests/signals/late_cuda.c

# a handler for the dump signal installed before the process touches CUDA
# (libcuda dlopened later, as Python does): armed at the first contact, the
# dump is written and the program's handler still runs, once; the debug log
# says it armed, once
for how in sigaction signal; do
    tguarded 60 GPUMEM_LOG=debug "$T/latecuda" $how; rc=$?
    if [ $rc = 0 ] && has "latecuda: handler calls 1" "$WORK/out" && [ "$(grep -c "gpumemguard report (signal, dump 1)" "$WORK/err")" = 1 ] \
       && [ "$(grep -c "debug: dump signal $(kill -l USR1) armed" "$WORK/err")" = 1 ]; then
        ok "a SIGUSR1 handler set with $how before CUDA was loaded: chained after arming, one dump, 'armed' logged once"
    else bad "handler installed before CUDA ($how, rc $rc)" "$WORK/err"; fi
done
