# wheel.sh - the Python wheel and its pytest plugin, for real: the wheel is
# built as `make wheel` builds it, installed with pip into a fresh virtual
# environment together with pytest, pytest-xdist and cuda-bindings (from
# PyPI; pip's cache keeps it quick), and everything runs from a directory
# away from the build tree with an environment that names no part of it
# (but the simulated driver's directory, which stands for the real driver):
# the command, `python -m gpumemguard`, a cuda-bindings client under the
# guard, and `pytest --gpumem` on tests/wheel/sample_gpumem.py, serially and
# under pytest-xdist, its failures' text checked. Skipped only when PyPI
# cannot be reached (or under a sanitizer). Sourced by run.sh (its helpers,
# $B, $ROOT, $WORK).

WH_PINS="pytest==9.2.0 pytest-xdist==3.8.0 execnet==2.1.2 pluggy==1.7.0 iniconfig==2.3.1 packaging==26.4
pytest-rerunfailures==16.7 Pygments==2.21.0 cuda-bindings==13.0.3 cuda-pathfinder==1.9.1"
WH_VERSION=$(sed -n 's/^#define GPUMEMGUARD_VERSION "\(.*\)"/\1/p' include/gpumemguard.h)
wh_skip=""
if [ -n "${GMG_SANITIZER:-}" ]; then
    wh_skip="not under $GMG_SANITIZER: the wheel bundles the release build"
elif ! timeout 20 python3 -c 'import urllib.request; urllib.request.urlopen("https://pypi.org/simple/pytest/", timeout=15)' \
        >/dev/null 2>&1; then
    wh_skip="PyPI cannot be reached"
fi

# clean CMD...: in $WORK/away, an environment without the build tree: the
# venv's bin and the system's on PATH; the simulated driver as the driver
wh_clean() {
    (cd "$WORK/away" && env -i HOME="$HOME" PATH="$WORK/wvenv/bin:/usr/local/bin:/usr/bin:/bin" \
        LD_LIBRARY_PATH="$ROOT/$B/sim" "$@")
}

wh_run() {
    # the wheel, built as make wheel builds it
    if ! DIST="$WORK/dist" scripts/wheel.sh "$B" >"$WORK/wheel.out" 2>&1; then
        bad "make wheel" "$WORK/wheel.out"; return
    fi
    local whl
    whl=$(tail -1 "$WORK/wheel.out")
    case $whl in
        "$WORK"/dist/gpumemguard-"$WH_VERSION"-py3-none-manylinux_2_[0-9]*_x86_64.whl) ;;
        *) bad "make wheel: unexpected name '$whl'" "$WORK/wheel.out"; return ;;
    esac
    # the library's own libraries are in the wheel, and its RUNPATH finds them there
    python3 -c 'import sys, zipfile; print("\n".join(zipfile.ZipFile(sys.argv[1]).namelist()))' "$whl" >"$WORK/names"
    if grep -q '^gpumemguard.libs/libdw-' "$WORK/names" && grep -q '^gpumemguard.libs/libunwind-' "$WORK/names" \
       && grep -q '^gpumemguard/_native/gpumemguard$' "$WORK/names" \
       && grep -q '^gpumemguard/_native/libgpumemguard.so$' "$WORK/names" \
       && grep -q '^gpumemguard/pytest_plugin.py$' "$WORK/names"; then
        ok "make wheel: $(basename "$whl") with the library, the command, the plugin and libdw/libunwind bundled"
    else
        bad "make wheel: contents" "$WORK/names"; return
    fi

    # a fresh venv: the wheel and the test tools from PyPI
    mkdir -p "$WORK/away"
    python3 -m venv "$WORK/wvenv" >"$WORK/pip.out" 2>&1 || { bad "python3 -m venv" "$WORK/pip.out"; return; }
    # shellcheck disable=SC2086 # the pins are words
    if ! PIP_DISABLE_PIP_VERSION_CHECK=1 timeout 600 "$WORK/wvenv/bin/python" -m pip install -q --no-input \
            --progress-bar off "$whl" $WH_PINS >>"$WORK/pip.out" 2>&1; then
        bad "pip install of the wheel, pytest, pytest-xdist and cuda-bindings" "$WORK/pip.out"; return
    fi
    local site
    site=$("$WORK/wvenv/bin/python" -c 'import gpumemguard, os; print(os.path.dirname(gpumemguard.__file__))')

    # the command, from the console entry point and python -m
    wh_clean gpumemguard --version >"$WORK/out" 2>&1; local rc=$?
    if [ $rc = 0 ] && [ "$(cat "$WORK/out")" = "gpumemguard $WH_VERSION" ]; then
        ok "pip-installed gpumemguard --version, away from the build tree"
    else
        bad "pip-installed gpumemguard --version (rc $rc)" "$WORK/out"
    fi
    wh_clean python -m gpumemguard -- python -c \
        'import os, gpumemguard; print(gpumemguard.Guard().version(), os.environ["LD_PRELOAD"])' \
        >"$WORK/out" 2>"$WORK/err"; rc=$?
    if [ $rc = 0 ] && [ "$(cat "$WORK/out")" = "$WH_VERSION $site/_native/libgpumemguard.so" ] \
       && ! grep -q "$ROOT" "$WORK/out"; then
        ok "python -m gpumemguard -- python -c ...: the library loaded from the installed package"
    else
        bad "python -m gpumemguard -- python -c ... (rc $rc): $(cat "$WORK/out")" "$WORK/err"
    fi

    # a cuda-bindings client under the guard, on the simulated driver
    cp tests/python/client_bindings.py "$WORK/away/"
    wh_clean gpumemguard --report "$WORK/away/client.json" --format json -- python client_bindings.py \
        >"$WORK/out" 2>"$WORK/err"; rc=$?
    if [ $rc = 0 ] && has "client_bindings ok" "$WORK/out" \
       && jq -e '(.live | length) == 1 and .live[0].bytes == 3538944 and .live[0].api == "cuMemAlloc"
                 and any(.live[0].frames[]; .lang == "python" and .function == "main")' \
             "$WORK/away/client.json" >/dev/null 2>&1; then
        ok "pip-installed guard on a cuda-bindings client: its 3538944-byte leak, with its Python frames"
    else
        bad "pip-installed guard on a cuda-bindings client (rc $rc)" "$WORK/err"
    fi

    # pytest --gpumem, started without the guard: run again under it
    cp tests/wheel/sample_gpumem.py tests/wheel/sample_overlap.py tests/wheel/bad_marker.py "$WORK/away/"
    wh_clean GMG_SAMPLE_ENV="kept, with spaces" pytest -p no:cacheprovider --gpumem --gpumem-limit 32MiB \
        -rA sample_gpumem.py >"$WORK/pt.out" 2>&1; rc=$?
    local peakmsg="Test was limited to 16.0 MiB (16777216 bytes) of GPU memory but its peak was 24.0 MiB (25165824 bytes)"
    local leakmsg="Test was limited to 1.0 MiB (1048576 bytes) of GPU memory leaks but left 6.0 MiB (6291456 bytes) in 2 allocations live"
    local defmsg="Test was limited to 32.0 MiB (33554432 bytes) of GPU memory but its peak was 40.0 MiB (41943040 bytes)"
    wh_verdicts() { # the outcome of every test in $1
        for t in within_budget:PASSED over_budget:FAILED leaks:FAILED small_leak_allowed:PASSED \
                 default_budget:FAILED marker_over_default:PASSED fixture_memory_not_counted:PASSED \
                 fails_on_its_own:FAILED env_and_guard_kept:PASSED; do
            grep -q "^${t#*:} sample_gpumem.py::test_${t%:*}\b" "$1" || echo "test_${t%:*} not ${t#*:}"
        done
    }
    local wrong
    wrong=$(wh_verdicts "$WORK/pt.out")
    # the leak's stack: Python frames first, the test's own function, no pytest frame
    local stack
    stack=$(grep -A12 -F "$leakmsg" "$WORK/pt.out")
    # the peak's stacks: what made it, though the test freed it all
    local peakstack
    peakstack=$(grep -A14 -F "$peakmsg" "$WORK/pt.out")
    if [ $rc = 1 ] && [ -z "$wrong" ] && has "$peakmsg" "$WORK/pt.out" && has "$leakmsg" "$WORK/pt.out" \
       && grep -q "^What was live at the test's peak, biggest first" <<<"$peakstack" \
       && [ "$(grep -c "^12.0 MiB (12582912 bytes) in 1 allocation (cuMemAlloc, device 0) allocated from:" <<<"$peakstack")" = 2 ] \
       && grep -A1 "^12.0 MiB (12582912 bytes) in 1 allocation (cuMemAlloc, device 0) allocated from:" <<<"$peakstack" | sed -n 2p \
            | grep -q '^    File ".*sample_gpumem.py", line [0-9]*, in alloc$' \
       && grep -q 'in test_over_budget$' <<<"$peakstack" \
       && has "$defmsg" "$WORK/pt.out" \
       && grep -A1 "^3.0 MiB (3145728 bytes) in 1 allocation (cuMemAlloc, device 0) allocated from:" <<<"$stack" | tail -1 \
            | grep -q '^    File ".*sample_gpumem.py", line [0-9]*, in ' \
       && grep -q 'in test_leaks$' <<<"$stack" && grep -q 'in hold_site$' <<<"$stack" \
       && ! grep -q '_pytest\|pluggy' <<<"$stack" && has "AssertionError: its own failure" "$WORK/pt.out" \
       && has "gpumemguard: 9 tests measured, 3 over a GPU memory limit, 2 left GPU memory live; highest peak 40.0 MiB (41943040 bytes) in sample_gpumem.py::test_default_budget" "$WORK/pt.out" \
       && has "SUMMARY: gpumemguard: 8388608 bytes in 3 allocations still live at exit" "$WORK/pt.out"; then
        ok "pytest --gpumem (run again under the guard, arguments and environment kept): limit_gpu_memory, limit_gpu_leaks, --gpumem-limit; messages with the numbers, the stacks live at the test's peak (freed since) and the leak's stacks, Python frames first; the session's summary line"
    else
        bad "pytest --gpumem (rc $rc)${wrong:+: $wrong}" "$WORK/pt.out"
    fi

    # a pool's segments (a pool: line names the program's own pool) are no
    # test's leak; a leak beside them is; without the line both are leaks
    cp tests/wheel/sample_pool.py "$WORK/away/"
    printf 'pool:my_arena_grow\n' >"$WORK/away/pools.supp"
    wh_clean GPUMEM_SUPPRESSIONS="$WORK/away/pools.supp" pytest -p no:cacheprovider --gpumem -rA sample_pool.py \
        >"$WORK/pp.out" 2>&1; rc=$?
    wh_clean pytest -p no:cacheprovider --gpumem -rA sample_pool.py >"$WORK/pp0.out" 2>&1; local rc0=$?
    if [ $rc = 1 ] && grep -q "^PASSED sample_pool.py::test_pool_keeps_its_segment" "$WORK/pp.out" \
       && grep -q "^FAILED sample_pool.py::test_leak_beside_the_pool" "$WORK/pp.out" \
       && has "of GPU memory leaks but left 3.0 MiB (3145728 bytes) in 1 allocation live" "$WORK/pp.out" \
       && [ $rc0 = 1 ] && grep -q "^FAILED sample_pool.py::test_pool_keeps_its_segment" "$WORK/pp0.out" \
       && has "of GPU memory leaks but left 7.0 MiB (7340032 bytes) in 2 allocations live" "$WORK/pp0.out"; then
        ok "pytest --gpumem with a pool: line: the pool's segments are no test's leak, a leak beside them is (without the line, both are)"
    else
        bad "pytest --gpumem with a pool (rc $rc, without the line rc $rc0)" "$WORK/pp.out"
    fi

    # limits added after collection (a conftest's hook, a fixture, the test
    # itself); set-up run inside the call (getfixturevalue, unittest's
    # setUp) is not the test's, its own peak before or after it is
    mkdir -p "$WORK/away/setup"
    cp tests/wheel/setup/conftest.py tests/wheel/setup/sample_setup.py "$WORK/away/setup/"
    cp tests/wheel/setup/run_from_script.py tests/wheel/setup/cmdline_probe.py tests/wheel/setup/dispatch.py \
       tests/wheel/setup/run_as_module.py "$WORK/away/"
    cp -r tests/wheel/setup/dirprog "$WORK/away/"
    (cd "$WORK/away/setup" && env -i HOME="$HOME" PATH="$WORK/wvenv/bin:/usr/local/bin:/usr/bin:/bin" \
        LD_LIBRARY_PATH="$ROOT/$B/sim" GPUMEM_REPORT=none pytest -p no:cacheprovider --gpumem -rA sample_setup.py) \
        >"$WORK/ps.out" 2>&1; rc=$?
    wrong=$(for t in test_over_conftest_budget test_applymarker_in_body_fails test_leak_marker_from_fixture_fails \
                     test_own_peak_after_getfixturevalue_fails test_own_peak_before_getfixturevalue_fails \
                     test_nested_getfixturevalue_leak_fails test_peak_across_getfixturevalue_fails \
                     Case::test_body_over_fails; do
                grep -q "^FAILED sample_setup.py::$t " "$WORK/ps.out" || echo "$t did not fail"; done
            for t in test_getfixturevalue_is_setup_passes Case::test_setup_is_not_the_body_passes; do
                grep -q "^PASSED sample_setup.py::$t$" "$WORK/ps.out" || echo "$t did not pass"; done)
    if [ $rc = 1 ] && [ -z "$wrong" ] \
       && [ "$(grep -c "but its peak was 8.0 MiB (8388608 bytes) above what was in use when it started (device 0: 8.0 MiB (8388608 bytes))" "$WORK/ps.out")" = 5 ] \
       && has "of GPU memory leaks but left 8.0 MiB (8388608 bytes) in 1 allocation live" "$WORK/ps.out" \
       && has "(the peak came before set-up that ran inside the test" "$WORK/ps.out" \
       && has "but its peak was 16.0 MiB (16777216 bytes)" "$WORK/ps.out" \
       && [ "$(grep -c "of GPU memory leaks but left 8.0 MiB (8388608 bytes) in 1 allocation live" "$WORK/ps.out")" = 2 ] \
       && has "10 tests measured, 8 over a GPU memory limit, 2 left GPU memory live" "$WORK/ps.out"; then
        ok "pytest --gpumem: markers a conftest's hook, a fixture or the test adds are enforced; a fixture set up inside the call (getfixturevalue, also nested) and unittest's setUp are set-up, not the test's peak or leak; the test's own peak before, after and across them is"
    else
        bad "pytest --gpumem with limits added late and set-up inside the call (rc $rc)${wrong:+: $wrong}" "$WORK/ps.out"
    fi
    # the re-run: a script that changed directory before it started pytest;
    # and the command line as made without sys.orig_argv (Python < 3.10)
    wh_clean PWD="$WORK/away" GPUMEM_REPORT=none python run_from_script.py >"$WORK/prs.out" 2>&1; rc=$?
    wh_clean python -X dev -W error::UserWarning -m cmdline_probe one "two words" >"$WORK/pcl.out" 2>&1; local rcp=$?
    local probe
    probe=$(python3 -c 'import json, os, sys; a = json.load(open(sys.argv[1])); print(a[0][0] == sys.argv[2], "-X" in a[0] and a[0][a[0].index("-X") + 1] == "dev", any(x.endswith("error::UserWarning") for x in a[0]), a[0][-4:], os.path.samefile(a[1], sys.argv[3]))' \
            "$WORK/pcl.out" "$WORK/wvenv/bin/python" "$WORK/away" 2>&1)
    wh_clean GPUMEM_REPORT=none python dispatch.py test -p no:cacheprovider -q --gpumem setup/sample_setup.py -k passes \
        >"$WORK/pds.out" 2>&1; local rcd=$?
    wh_clean GPUMEM_REPORT=none python -m run_as_module >"$WORK/pmo.out" 2>&1; local rcm=$?
    wh_clean PWD="$WORK/away" GPUMEM_REPORT=none python dirprog >"$WORK/pdp.out" 2>&1; local rcdp=$?
    if [ $rc = 0 ] && has "2 passed" "$WORK/prs.out" && [ $rcp = 0 ] \
       && [ "$probe" = "True True True ['-m', 'cmdline_probe', 'one', 'two words'] True" ] \
       && [ $rcd = 0 ] && has "2 passed" "$WORK/pds.out" && [ $rcm = 0 ] && has "2 passed" "$WORK/pmo.out" \
       && [ $rcdp = 0 ] && has "2 passed" "$WORK/pdp.out"; then
        ok "pytest --gpumem run again: from a script that changed directory first, from a tool that shifted sys.argv, from python -m of a module and from a directory program that changed directory (a conftest's directory in front of sys.path by then); without sys.orig_argv, python -X dev -W ... -m MODULE made again with its flags, -m and arguments"
    else
        bad "pytest --gpumem run again: script (rc $rc), shifted sys.argv (rc $rcd), -m (rc $rcm), directory (rc $rcdp), command line without sys.orig_argv (rc $rcp): $probe" "$WORK/prs.out"
    fi

    # under pytest-xdist: each worker guarded, the same verdicts and messages
    wh_clean GMG_SAMPLE_ENV="kept, with spaces" GPUMEM_REPORT=none \
        python -m pytest -p no:cacheprovider --gpumem --gpumem-limit 32MiB -n 2 -rA sample_gpumem.py \
        >"$WORK/px.out" 2>&1; rc=$?
    wrong=$(wh_verdicts "$WORK/px.out")
    # and each worker's numbers its own: two tests, one a worker, each
    # holding 12 MiB while the other does, each under a 16 MiB budget
    mkdir -p "$WORK/away/ov"
    wh_clean GMG_OVERLAP_DIR="$WORK/away/ov" GPUMEM_REPORT=none \
        python -m pytest -p no:cacheprovider --gpumem -n 2 -rA sample_overlap.py >"$WORK/po.out" 2>&1; local rco=$?
    if [ $rc = 1 ] && [ -z "$wrong" ] && has "$peakmsg" "$WORK/px.out" && has "$leakmsg" "$WORK/px.out" \
       && has "[gw1]" "$WORK/px.out" && ! has 'File "<string>"' "$WORK/px.out" \
       && has "gpumemguard: 9 tests measured, 3 over a GPU memory limit, 2 left GPU memory live;" "$WORK/px.out" \
       && [ $rco = 0 ] && has "PASSED sample_overlap.py::test_overlap_a" "$WORK/po.out" \
       && has "PASSED sample_overlap.py::test_overlap_b" "$WORK/po.out"; then
        ok "pytest --gpumem -n 2 (pytest-xdist): every worker under the guard with numbers of its own (two at 12 MiB at once, each within 16 MiB); the same verdicts and messages, no frame of the workers' bootstrap in them; one summary"
    else
        bad "pytest --gpumem -n 2 (rc $rc, overlap rc $rco)${wrong:+: $wrong}" "$WORK/px.out"
        sed 's/^/     | /' "$WORK/po.out" | tail -15
    fi

    # edges: --gpumem-limit 0 is no budget; the re-run's mark is not left in
    # the tests' environment; a session inside a test (pytester) measures
    # nothing, and the outer test's figures stand; a test that fails after
    # the driver ran out of memory has what filled it in its report
    cp tests/wheel/sample_edges.py "$WORK/away/"
    wh_clean GPUMEM_REPORT=none pytest -p no:cacheprovider -p pytester --gpumem --gpumem-limit 0 -rA sample_edges.py \
        >"$WORK/pg.out" 2>&1; rc=$?
    wrong=$(for t in no_default_budget:PASSED env_clean:PASSED inner_session_keeps_outer_figures:FAILED oom_explained:FAILED \
                     sizes_that_are_none:PASSED fork_child_goes_on:PASSED; do
                grep -q "^${t#*:} sample_edges.py::test_${t%:*}\b" "$WORK/pg.out" || echo "test_${t%:*} not ${t#*:}"; done)
    local oomsec
    oomsec=$(sed -n '/^-* Captured gpumemguard call -*$/,/^=/p' "$WORK/pg.out")
    if [ $rc = 1 ] && [ -z "$wrong" ] \
       && has "Test was limited to 4.0 MiB (4194304 bytes) of GPU memory but its peak was 8.0 MiB (8388608 bytes)" "$WORK/pg.out" \
       && has "a pytest session inside a test of a session that measures GPU memory already measures nothing" "$WORK/pg.out" \
       && grep -q "^While this test ran, the driver refused 1 allocation (out of memory)\.$" <<<"$oomsec" \
       && grep -q "^8.0 GiB (8589934592 bytes) in 8 allocations (cuMemAlloc, device 0) allocated from:$" <<<"$oomsec" \
       && grep -q 'in fill_device$' <<<"$oomsec" && ! grep -q '_pytest\|pluggy' <<<"$oomsec" \
       && grep -q "SystemExit: 3" "$WORK/pg.out" && ! has "INTERNALERROR" "$WORK/pg.out" \
       && ! has "is not held by this process" "$WORK/pg.out"; then
        ok "pytest --gpumem: --gpumem-limit 0 is no budget; the re-run's mark is not in the tests' environment; a pytest session run inside a test measures nothing and the outer test still fails over its budget; a test failing after the driver's out of memory has what filled the device in its report; a forked child that goes on running pytest fails of its own error; NUL, a lone surrogate and 1.5 bytes are no sizes"
    else
        bad "pytest --gpumem edges (rc $rc)${wrong:+: $wrong}" "$WORK/pg.out"
    fi

    # a session whose tests allocated nothing: its summary names no test for its peak
    wh_clean GPUMEM_REPORT=none pytest -p no:cacheprovider --gpumem -k test_env_clean sample_edges.py \
        >"$WORK/pz.out" 2>&1; rc=$?
    if [ $rc = 0 ] && grep -q "^gpumemguard: 1 test measured, 0 over a GPU memory limit, 0 left GPU memory live; highest peak 0 bytes$" "$WORK/pz.out"; then
        ok "pytest --gpumem: a session whose tests allocated nothing says its highest peak is 0 bytes, naming no test"
    else bad "pytest --gpumem summary of a session without allocations (rc $rc)" "$WORK/pz.out"; fi

    # a budget without --gpumem measures nothing: said, the tests run
    wh_clean pytest -p no:cacheprovider --gpumem-limit 1MiB sample_overlap.py >"$WORK/nogm.out" 2>&1; local rcn=$?
    if grep -q "PytestConfigWarning: --gpumem-limit is ignored without --gpumem" "$WORK/nogm.out" \
       && ! grep -q "FAILED\|ERROR" "$WORK/nogm.out"; then
        ok "pytest --gpumem-limit without --gpumem: a warning that it is ignored, the tests run as without it (rc $rcn)"
    else
        bad "pytest --gpumem-limit without --gpumem (rc $rcn)" "$WORK/nogm.out"
    fi

    # a leak 25 Python frames below its test still names the test (pytest's
    # own frames take the outer half of a stack); a cycle a collection frees
    # is no leak; a test run again counts once, with its last run's numbers
    cp tests/wheel/sample_more.py "$WORK/away/"
    mkdir -p "$WORK/away/more"
    wh_clean GMG_MORE_DIR="$WORK/away/more" GPUMEM_REPORT=none pytest -p no:cacheprovider --gpumem -rA \
        sample_more.py >"$WORK/pm.out" 2>&1; rc=$?
    stack=$(grep -A40 -F "Leaked allocations, biggest first" "$WORK/pm.out")
    if [ $rc = 1 ] && grep -q "^FAILED sample_more.py::test_deep_leak" "$WORK/pm.out" \
       && grep -q 'in test_deep_leak$' <<<"$stack" && [ "$(grep -c 'in deep$' <<<"$stack")" = 25 ] \
       && grep -q "^PASSED sample_more.py::test_cycle_without_marker" "$WORK/pm.out" \
       && grep -q "^PASSED sample_more.py::test_flaky_then_within" "$WORK/pm.out" && has "1 rerun" "$WORK/pm.out" \
       && has "gpumemguard: 3 tests measured, 1 over a GPU memory limit, 1 left GPU memory live; highest peak 3.0 MiB (3145728 bytes) in sample_more.py::test_cycle_without_marker" "$WORK/pm.out"; then
        ok "pytest --gpumem: a leak 25 frames below its test names the test; a cycle a collection frees is no leak; a test run again (pytest-rerunfailures) counts once"
    else
        bad "pytest --gpumem: deep leak, cycle, rerun (rc $rc)" "$WORK/pm.out"
    fi

    # --dist each: one test on every worker, each run counted; a conftest
    # that imports ipykernel (no kernel running) is no notebook
    cp tests/wheel/sample_each.py "$WORK/away/"
    mkdir -p "$WORK/away/ipy/ipykernel"
    printf '' >"$WORK/away/ipy/ipykernel/__init__.py"
    printf 'import sys\nsys.path.insert(0, %s)\nimport ipykernel  # noqa: F401\n' "'$WORK/away/ipy'" >"$WORK/away/conftest.py"
    wh_clean GPUMEM_REPORT=none pytest -p no:cacheprovider --gpumem -n 2 --dist each -rA sample_each.py \
        >"$WORK/pe.out" 2>&1; rc=$?
    rm -f "$WORK/away/conftest.py"
    if [ $rc = 1 ] && has "gpumemguard: 2 tests measured, 1 over a GPU memory limit, 0 left GPU memory live; highest peak 32.0 MiB (33554432 bytes) in sample_each.py::test_each_worker" "$WORK/pe.out"; then
        ok "pytest --gpumem -n 2 --dist each: each worker's run of a test counted in the summary; a conftest importing ipykernel is no notebook"
    else
        bad "pytest --gpumem --dist each (rc $rc)" "$WORK/pe.out"
    fi

    # a program that cannot be run again: refused, not run empty
    printf 'import sys, pytest\nsys.exit(pytest.main(["-p", "no:cacheprovider", "--gpumem", "sample_overlap.py"]))\n' \
        >"$WORK/away/stdin_main.py"
    wh_clean python - <"$WORK/away/stdin_main.py" >"$WORK/pstdin.out" 2>&1; rc=$?
    if [ $rc = 4 ] && has "this Python cannot be run again under the guard (its program came from standard input" "$WORK/pstdin.out" \
       && has "gpumemguard -- python" "$WORK/pstdin.out"; then
        ok "pytest.main([--gpumem]) in a program read from standard input: a usage error saying to start it under the guard"
    else
        bad "pytest.main([--gpumem]) from standard input (rc $rc)" "$WORK/pstdin.out"
    fi

    # bad sizes: usage errors, before any test runs
    wh_clean pytest -p no:cacheprovider --gpumem --gpumem-limit 12parsecs sample_gpumem.py >"$WORK/out" 2>&1; rc=$?
    wh_clean pytest -p no:cacheprovider --gpumem bad_marker.py >"$WORK/out2" 2>&1; local rc2=$?
    # under xdist a worker cannot stop the session: the test errors at set-up
    wh_clean pytest -p no:cacheprovider --gpumem -n 2 bad_marker.py >"$WORK/out3" 2>&1; local rc3=$?
    if [ $rc = 4 ] && grep -q "^ERROR: --gpumem-limit '12parsecs': " "$WORK/out" && ! has "PASSED" "$WORK/out" \
       && [ $rc2 = 4 ] && grep -q "^ERROR: bad_marker.py::test_bad_size: @pytest.mark.limit_gpu_memory('12 parsecs'): " "$WORK/out2" \
       && [ $rc3 = 1 ] && has "usage error: bad_marker.py::test_bad_size: @pytest.mark.limit_gpu_memory('12 parsecs'): " "$WORK/out3" \
       && ! has "INTERNALERROR" "$WORK/out3"; then
        ok "pytest --gpumem: a bad size (option or marker) is a usage error naming it, with the parser's reason (under xdist, the test's set-up error)"
    else
        bad "pytest --gpumem bad sizes (rc $rc, $rc2, $rc3): $(grep ERROR "$WORK/out2")" "$WORK/out3"
    fi
}

if [ -n "$wh_skip" ]; then
    skip "the wheel and the pytest plugin" "$wh_skip"
else
    wh_run
fi
