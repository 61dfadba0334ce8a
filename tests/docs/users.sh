# docs/users.sh - the docs and the README are for users: no citation of the
# product contract's sections, of issue numbers, of sessions or passes, and no
# talk of how a test machine was lent; the README's status agrees with
# docs/gpu-validation.md (the guard has run on a GPU and under the frameworks).
doc_files="README.md docs/ARCHITECTURE.md docs/deploy.md docs/gpu-validation.md docs/report-format.md docs/testing.md docs/top.md
           docs/gpumemguard.1 tests/gpu/README.md docs/benchmarks.md CHANGELOG.md"
doc_bad=$(grep -nHE 'SPEC|§|[Ii]ssue [0-9]|[Ii]ssues? #?[0-9]|\bsession\b|(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth) pass\b|device tool|device-tool|\blent\b|\.library/' $doc_files 2>&1)
if [ -z "$doc_bad" ]; then
    ok "docs: no citation of contract sections, issues, sessions or passes, no machine-lending talk"
else
    printf '%s\n' "$doc_bad" >"$WORK/docbad"; bad "docs: citations users cannot follow" "$WORK/docbad"
fi
if grep -qiE 'never run on a GPU|has never run|have not been run|not been run under' README.md; then
    grep -niE 'never run on a GPU|has never run|have not been run|not been run under' README.md >"$WORK/docbad"
    bad "README: its status contradicts docs/gpu-validation.md" "$WORK/docbad"
elif grep -q 'an H100 and an H200' README.md && grep -q '31 of 31' docs/gpu-validation.md \
     && grep -q '52 of 53, and the last on its re-run' docs/gpu-validation.md \
     && grep -q 'PyTorch' README.md && grep -q 'JAX' README.md && grep -q 'CuPy' README.md; then
    ok "README: its status says what docs/gpu-validation.md records (an H100 and an H200, the frameworks)"
else
    bad "README: its status does not name the GPU validation" README.md
fi
# the recipe for one's own program builds with -g (stacks with file:line)
if grep -E '^\s+cc .*myprog\.c' README.md | grep -q -- ' -g '; then
    ok "README: the own-program recipe compiles with -g"
else
    bad "README: the own-program recipe compiles without -g" README.md
fi
