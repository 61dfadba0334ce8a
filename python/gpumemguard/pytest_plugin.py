"""pytest plugin: GPU memory budgets per test, read from the guard.

    pytest --gpumem [--gpumem-limit SIZE]

`--gpumem` runs the session under the guard: when pytest was not started
under it, the plugin runs the same command again (the interpreter's whole
command line, the same environment and directory) with the guard's library
preloaded, through the bundled `gpumemguard` command, and exits with its
status. pytest-xdist's workers inherit the guard; each worker is its own
process with its own numbers.

Markers:

  @pytest.mark.limit_gpu_memory("512MiB")
      the test fails when its own peak exceeds the size: the most the bytes
      in use on one device rose above what was in use when the test began.
  @pytest.mark.limit_gpu_leaks("1MiB")
      the test fails when the allocations it made and left live exceed the
      size (after a garbage collection).

Sizes are written as GPUMEM_LIMIT takes them ("512MiB", "1.5G", "4096") and
parsed by the library's own parser; a bad one is a usage error.
`--gpumem-limit SIZE` applies limit_gpu_memory to every test without the
marker. What is measured is the test's call (its body), not its fixtures'
set-up and tear-down: a fixture set up while the test runs
(request.getfixturevalue) and a unittest.TestCase's setUp are set-up too.
Markers are read when the test is called, so that a conftest's hook or a
fixture (request.applymarker) may add them.
"""
import gc
import os
import re
import sys

import pytest

from . import Guard, GuardNotLoaded, command_path, format_size

REEXEC_ENV = "GPUMEMGUARD_PYTEST_REEXEC"
REEXEC_STACK_DEPTH = 128
SHOWN_STACKS = 5
MAX_DEVICES = 64


def pytest_addoption(parser):
    group = parser.getgroup("gpumemguard", "GPU memory (gpumemguard)")
    group.addoption("--gpumem", action="store_true", default=False,
                    help="run the session under gpumemguard and enforce the limit_gpu_memory and "
                         "limit_gpu_leaks markers")
    group.addoption("--gpumem-limit", metavar="SIZE", default=None,
                    help="a GPU memory budget for every test without a limit_gpu_memory marker: its "
                         "own peak on any device (sizes as GPUMEM_LIMIT takes them: 512MiB, 1.5G; 0: none)")


def _under_guard():
    return Guard.loaded()


def _in_ipython():
    """Whether an IPython shell runs this process (a terminal session or a
    notebook's kernel), not merely whether IPython was imported."""
    ipy = sys.modules.get("IPython")
    try:
        return ipy is not None and ipy.get_ipython() is not None
    except Exception:
        return False


def _command_line(config, orig):
    """The interpreter's command line to run again, and the directory to run
    it in. Python 3.10+ keeps the line (sys.orig_argv); before, it is made
    again from the interpreter's flags (-W, -X, -O, -I ...) and `-m MODULE`
    or the script. A script named by a relative path is run from where that
    path named it: the directory the shell started Python in ($PWD) when
    the path still names the same file from there, else by its absolute
    path from pytest's invocation directory (the script may have changed
    directory before it started pytest)."""
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    if orig:
        argv = list(orig)
    elif spec is not None and getattr(spec, "name", None):
        import subprocess  # its helper reproduces sys.flags, sys.warnoptions and sys._xoptions
        name = spec.name[:-len(".__main__")] if spec.name.endswith(".__main__") else spec.name
        argv = [sys.executable] + subprocess._args_from_interpreter_flags() + ["-m", name] + sys.argv[1:]
    else:
        import subprocess
        argv = [sys.executable] + subprocess._args_from_interpreter_flags() + sys.argv
    argv[0] = sys.executable
    start = str(config.invocation_params.dir)
    script = getattr(main, "__file__", None)
    at = len(argv) - len(sys.argv)  # where the script (or -c, or the module's path) stands in the line
    if spec is None and script and 0 < at < len(argv) and argv[at] == sys.argv[0] and not os.path.isabs(argv[at]):
        pwd = os.environ.get("PWD", "")
        try:
            same = os.path.isabs(pwd) and os.path.samefile(os.path.join(pwd, argv[at]), script)
        except OSError:
            same = False
        if same:
            start = pwd
        elif os.path.isabs(script) and os.path.exists(script):
            argv[at] = script
    return argv, start


def _reexec(config):
    """pytest again, under the guard, in this process's place."""
    if os.environ.get(REEXEC_ENV):
        raise pytest.UsageError(
            "--gpumem: pytest was run again under gpumemguard, but the guard is not loaded in it "
            "(LD_PRELOAD removed on the way?)")
    orig = getattr(sys, "orig_argv", None)
    if sys.argv[0] in ("", "-") or (not orig and sys.argv[0] == "-c") or _in_ipython():
        # the program cannot be run again: read from standard input (now at
        # its end), typed in, a -c whose text Python < 3.10 does not keep,
        # or an IPython session or notebook kernel, which would be replaced
        raise pytest.UsageError(
            "--gpumem: this Python cannot be run again under the guard (its program came from standard input, "
            "an interactive session, a notebook or, before Python 3.10, -c): start it under the guard instead, "
            "e.g. gpumemguard -- python script.py")
    argv, start = _command_line(config, orig)
    capman = config.pluginmanager.getplugin("capturemanager")
    if capman is not None:
        capman.stop_global_capturing()
    sys.stdout.flush()
    sys.stderr.flush()
    env = dict(os.environ)
    env[REEXEC_ENV] = "1"
    # pytest's own frames (about 40) would take the outer half of a 32-frame
    # Python stack, and a test's own frame may then be cut out between them
    env.setdefault("GPUMEM_STACK_DEPTH", str(REEXEC_STACK_DEPTH))
    os.chdir(start)
    cmd = command_path()
    try:
        os.execve(cmd, [cmd, "--"] + argv, env)
    except OSError as e:
        raise pytest.UsageError("--gpumem: cannot run %s: %s" % (cmd, e.strerror))


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config):
    if config.getoption("gpumem") and not _under_guard() and not hasattr(config, "workerinput"):
        _reexec(config)


def pytest_configure(config):
    config.addinivalue_line("markers", "limit_gpu_memory(size): fail the test when its own GPU memory peak "
                                       "(on any device) exceeds size (with --gpumem)")
    config.addinivalue_line("markers", "limit_gpu_leaks(size): fail the test when the GPU memory it allocated "
                                       "and left live exceeds size (with --gpumem)")
    if not config.getoption("gpumem"):
        if config.getoption("gpumem_limit") is not None:  # (an ini's addopts may carry it for --gpumem runs)
            config.issue_config_time_warning(pytest.PytestConfigWarning(
                "--gpumem-limit is ignored without --gpumem: no test's GPU memory is measured"), stacklevel=2)
        return
    try:
        guard = Guard()
    except GuardNotLoaded as e:
        raise pytest.UsageError("--gpumem: %s" % e)
    default = None
    text = config.getoption("gpumem_limit")
    if text is not None:
        try:
            default = guard.parse_size(text)
        except ValueError as e:
            raise pytest.UsageError("--gpumem-limit %r: %s" % (text, e))
    config.pluginmanager.register(GpuMemPlugin(guard, default), "gpumemguard-session")


def _marker_size(guard, item, name):
    m = item.get_closest_marker(name)
    if m is None:
        return None
    if len(m.args) != 1 or m.kwargs:
        raise pytest.UsageError("%s: @pytest.mark.%s takes one size, e.g. %s(\"512MiB\")"
                                % (item.nodeid, name, name))
    try:
        return guard.parse_size(m.args[0])
    except ValueError as e:
        raise pytest.UsageError("%s: @pytest.mark.%s(%r): %s" % (item.nodeid, name, m.args[0], e))


_FRAME = re.compile(r'^\s+File "(.*)", line -?\d+, in ')


def _harness_dirs():
    """Where pytest's, pluggy's, xdist's and execnet's own frames are."""
    dirs = [os.path.dirname(os.path.abspath(__file__)) + os.sep]
    for name in ("_pytest", "pytest", "pluggy", "xdist", "execnet"):
        mod = sys.modules.get(name)
        if mod is not None and getattr(mod, "__file__", None):
            dirs.append(os.path.dirname(os.path.abspath(mod.__file__)) + os.sep)
    return tuple(dirs)


def _trim(text):
    """The stacks without the frames of the test harness (pytest calling the
    test, the plugins, the `pytest` script, runpy): the test's own are left."""
    dirs = _harness_dirs()
    out = []
    for line in text.splitlines():
        m = _FRAME.match(line)
        if m:
            f = m.group(1)
            if f.startswith(dirs) or f.startswith("<frozen runpy") or os.path.basename(f) in ("pytest", "py.test"):
                continue
        out.append(line)
    return "\n".join(out) + ("\n" if out else "")


class GpuMemPlugin(object):
    def __init__(self, guard, default_limit):
        self.guard = guard
        self.default_limit = default_limit
        self.results = {}         # (nodeid, worker) -> (peak, leaked, over): each test's last run on each worker
        self.bad = {}             # nodeid -> a marker's bad size (under xdist)
        self._window = None       # the test's call under way: its set-up windows and peaks so far
        self._peaks = None        # per device, the test's peak over its windows (set-up inside the call)
        self._peak_in_last = True # the peak was in the last window, which peak_text describes

    # ---------------------------------------------------------- collection

    @pytest.hookimpl(trylast=True)  # after a conftest's own hook, which may add markers
    def pytest_collection_modifyitems(self, session, config, items):
        # A bad size stops the session before any test runs. An xdist worker
        # cannot stop it cleanly (its error would be an internal error of
        # the session): there the test errors at set-up, with the same text.
        worker = hasattr(config, "workerinput")
        for item in items:
            try:  # checked here; read again at the call (_limits)
                _marker_size(self.guard, item, "limit_gpu_memory")
                _marker_size(self.guard, item, "limit_gpu_leaks")
            except pytest.UsageError as e:
                if not worker:
                    raise
                self.bad[item.nodeid] = str(e)

    def pytest_runtest_setup(self, item):
        if item.nodeid in self.bad:
            pytest.fail("usage error: %s" % self.bad[item.nodeid], pytrace=False)

    # ---------------------------------------------------------- the test's call

    def _limits(self, item):
        """The test's limits, from its markers as they are at its call's end:
        a fixture or the test itself (request.applymarker, node.add_marker)
        may have added one since collection. Raises pytest.UsageError."""
        peak = _marker_size(self.guard, item, "limit_gpu_memory")
        leaks = _marker_size(self.guard, item, "limit_gpu_leaks")
        return (peak if peak is not None else self.default_limit), leaks

    # ---------------------------------------------------------- set-up inside the call
    #
    # A fixture set up while the test runs (request.getfixturevalue), or a
    # unittest.TestCase's setUp (which pytest runs inside the call), is set-up,
    # not the test's: what it allocates and still holds at the test's end is
    # no leak of the test's, and the bytes it holds when done are not the
    # test's peak (the peak is measured again from there, the higher of the
    # two windows kept).

    def _setup_begin(self):
        w = self._window
        for d in range(MAX_DEVICES):
            g = self.guard.peak_growth(d)
            if g > w["devices"].get(d, 0):
                w["devices"][d] = g
        w["peak"] = max(w["peak"], self.guard.peak_growth(-1))
        try:
            return self.guard.mark()
        except RuntimeError:
            return None

    def _setup_end(self, begin):
        w = self._window
        if begin is not None:
            try:
                w["setups"].append((begin, self.guard.mark()))
            except RuntimeError:  # no mark left: what it holds now, counted as it is now
                b, n = self.guard.since(begin, pools=False)
                self.guard.mark_release(begin)
                w["held"] = (w["held"][0] + b, w["held"][1] + n)
        w["reset"] = True
        self.guard.peak_reset()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_fixture_setup(self, fixturedef, request):
        if self._window is None:
            yield
            return
        begin = self._setup_begin()
        try:
            yield
        finally:
            self._setup_end(begin)

    def _wrap_unittest_setup(self, item):
        case = getattr(item, "_testcase", None)
        setup = getattr(case, "setUp", None)
        if case is None or setup is None:
            return
        plugin = self

        def setUp(*args, **kwargs):
            begin = plugin._setup_begin() if plugin._window is not None else None
            try:
                return setup(*args, **kwargs)
            finally:
                if plugin._window is not None:
                    plugin._setup_end(begin)
        try:
            case.setUp = setUp
        except Exception:
            pass

    def _leaked(self, mark, window):
        """The test's allocations still live, less what set-up inside the
        call made and still holds."""
        b, n = self.guard.since(mark, pools=False)
        for begin, end in window["setups"]:
            b1, n1 = self.guard.since(begin, pools=False)
            b2, n2 = self.guard.since(end, pools=False)
            b, n = b - (b1 - b2), n - (n1 - n2)
        held = window["held"]
        return max(b - held[0], 0), max(n - held[1], 0)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item):
        guard = self.guard
        mark = guard.mark()
        window = self._window = {"devices": {}, "peak": 0, "setups": [], "held": (0, 0), "reset": False}
        self._wrap_unittest_setup(item)
        guard.peak_reset()
        try:
            outcome = yield
            self._window = None
            for d in range(MAX_DEVICES) if window["reset"] else ():
                g = guard.peak_growth(d)
                if g > window["devices"].get(d, 0):
                    window["devices"][d] = g
            last = guard.peak_growth(-1)
            peak = max(window["peak"], last)
            self._peaks = window["devices"] if window["reset"] else None
            self._peak_in_last = last >= peak
            leaked, leaked_n = self._leaked(mark, window)
            if leaked:  # what a garbage collection frees was no leak
                gc.collect()
                leaked, leaked_n = self._leaked(mark, window)
            # a test run again (pytest-rerunfailures) keeps its properties: this run's replace them
            item.user_properties[:] = [p for p in item.user_properties if not str(p[0]).startswith("gpumem_")]
            item.user_properties.append(("gpumem_peak", peak))
            item.user_properties.append(("gpumem_leaked", leaked))
            if outcome.excinfo is not None:
                return  # the test failed on its own: that is its message
            try:
                peak_limit, leak_limit = self._limits(item)
            except pytest.UsageError as e:
                outcome.force_exception(pytest.fail.Exception("usage error: %s" % e, pytrace=False))
                return
            problems = []
            if peak_limit is not None and peak > peak_limit:
                problems.append(self._peak_message(peak_limit, peak, mark))
            if leak_limit is not None and leaked > leak_limit:
                problems.append(self._leak_message(leak_limit, leaked, leaked_n, mark))
            if problems:
                item.user_properties.append(("gpumem_over", 1))
                outcome.force_exception(pytest.fail.Exception("\n\n".join(problems), pytrace=False))
        finally:
            self._window = None
            for m in [mark] + [m for pair in window["setups"] for m in pair]:
                guard.mark_release(m)

    def _devices_over(self):
        if self._peaks is not None:  # set-up inside the call: the windows' highest
            return sorted(((g, d) for d, g in self._peaks.items() if g), reverse=True)
        out = []
        for d in range(MAX_DEVICES):
            g = self.guard.peak_growth(d)
            if g:
                out.append((g, d))
        return sorted(out, reverse=True)

    def _stacks(self, mark, title):
        text = _trim(self.guard.since_text(mark, -1, SHOWN_STACKS, pools=False))
        if not text.strip():
            return ""
        return "\n%s\n%s" % (title, text.rstrip("\n"))

    def _peak_message(self, limit, peak, mark):
        devs = self._devices_over()
        where = ", ".join("device %d: %s" % (d, format_size(g)) for g, d in devs if g > limit) or "?"
        msg = ("Test was limited to %s of GPU memory but its peak was %s above what was in use when it "
               "started (%s)" % (format_size(limit), format_size(peak), where))
        text = _trim(self.guard.peak_text(-1, SHOWN_STACKS)) if self._peak_in_last else ""
        if text.strip():  # what made the peak, freed or not
            return msg + ("\nWhat was live at the test's peak, biggest first (with what was in use when it started; "
                          "Python frames first, pytest's own left out):\n%s" % text.rstrip("\n"))
        if not self._peak_in_last:  # the peak_text of that window is gone with the window
            return msg + ("\n(the peak came before set-up that ran inside the test: a fixture it asked for, or "
                          "its setUp; what was live then is not shown)")
        stacks = self._stacks(mark, "Allocations the test made and still holds, biggest first "
                                    "(Python frames first, pytest's own left out):")
        return msg + (stacks or "\n(the test freed everything it allocated before it ended)")

    def _leak_message(self, limit, leaked, count, mark):
        msg = ("Test was limited to %s of GPU memory leaks but left %s in %d allocation%s live"
               % (format_size(limit), format_size(leaked), count, "" if count == 1 else "s"))
        return msg + self._stacks(mark, "Leaked allocations, biggest first (Python frames first, pytest's own "
                                        "left out):")

    # ---------------------------------------------------------- the summary

    def pytest_runtest_logreport(self, report):
        if report.when != "call" or report.skipped:
            return
        props = dict(report.user_properties)
        if "gpumem_peak" in props:
            # a rerun replaces its test's run; xdist's --dist each runs a test on every worker, each a run
            gateway = getattr(getattr(report, "node", None), "gateway", None)
            key = (report.nodeid, getattr(gateway, "id", None))
            self.results[key] = (props["gpumem_peak"], props["gpumem_leaked"], props.get("gpumem_over", 0))

    def pytest_terminal_summary(self, terminalreporter):
        if not self.results:
            terminalreporter.write_line("gpumemguard: no test measured")
            return
        runs = [(key[0],) + r for key, r in self.results.items()]
        top = max(runs, key=lambda r: r[1])
        over = sum(1 for r in runs if r[3])
        leaked = sum(1 for r in runs if r[2])
        terminalreporter.write_line(
            "gpumemguard: %d test%s measured, %d over a GPU memory limit, %d left GPU memory live; "
            "highest peak %s in %s" % (len(runs), "" if len(runs) == 1 else "s", over, leaked,
                                       format_size(top[1]), top[0]))
