# buffered_stdout.sh - GPUMEM_EXITCODE replaces the status with _exit: the
# program's stdio buffers must still be written, as exit does
# (tests/exitcode/buffered_stdout.c). Sourced by tests/run.sh (its helpers,
# $T, $WORK).
build buffered_stdout tests/exitcode/buffered_stdout.c -L"$B/sim" -l:libcuda.so.1

guarded GPUMEM_EXITCODE=23 "$T/buffered_stdout"; rc=$?
[ $rc = 23 ] && has "program output, still buffered at exit" "$WORK/out" \
    && ok "GPUMEM_EXITCODE=23 on a leak: the program's buffered stdout is still written" \
    || bad "GPUMEM_EXITCODE loses the program's buffered output (rc $rc)" "$WORK/out"
