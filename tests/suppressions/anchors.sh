# anchors.sh - suppressions matched against a real process's stacks: '$'
# after a piece that also occurs earlier in the name, '^', and the
# per-pattern sums of "Suppressions used" over two groups. Sourced by
# tests/run.sh (its helpers, $T, $WORK).
build anchors tests/suppressions/anchors.c -L"$B/sim" -l:libcuda.so.1
mkdir -p "$WORK/anchors"
printf 'leak:*alloc$\nleak:foo$\nleak:^leak_pair_\nleak:^pair_\n' >"$WORK/anchors/supp"
guarded GPUMEM_EXITCODE=23 GPUMEM_SUPPRESSIONS="$WORK/anchors/supp" GPUMEM_REPORT_FORMAT=json \
    GPUMEM_REPORT="$WORK/anchors/r.json" "$T/anchors"; rc=$?
if [ $rc = 23 ] && jq -e '.suppressions == [{"template":"*alloc$","count":1,"bytes":100000},
                                           {"template":"foo$","count":1,"bytes":200000},
                                           {"template":"^leak_pair_","count":4,"bytes":140000}]
                          and ([.live[].bytes] == [7000])' "$WORK/anchors/r.json" >/dev/null; then
    ok "suppressions on a real stack: '*alloc\$' matches alloc_and_alloc, 'foo\$' foofoo, '^leak_pair_' two call sites summed (4 allocations, 140000 bytes), '^pair_' nothing; the one unsuppressed leak still fails the run"
else
    bad "suppression anchors on a real stack (rc $rc)" "$WORK/anchors/r.json"
fi
if "$T/test_template" >"$WORK/out" 2>&1; then ok "$(tail -1 "$WORK/out"): '*' wildcards, '^' and '\$' anchors with backtracking"
else bad "the template match (tests/suppressions/test_template.c)" "$WORK/out"; fi
