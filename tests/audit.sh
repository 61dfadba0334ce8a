# audit.sh - behaviours an audit against SPEC found wrong, one test each
# (tests/integration/audit.c is the program they run). Sourced by run.sh
# (uses its helpers).

# GPUMEM_EXITCODE replaces the status with _exit: the program's stdio
# buffers (stdout to a file or a pipe) must still be written, as exit does
guarded GPUMEM_EXITCODE=23 "$T/audit" stdio; rc=$?
[ $rc = 23 ] && has "program output, still buffered at exit" "$WORK/out" \
    && ok "GPUMEM_EXITCODE=23 on a leak: the program's buffered stdout is still written" \
    || bad "GPUMEM_EXITCODE loses the program's buffered output (rc $rc)" "$WORK/out"
