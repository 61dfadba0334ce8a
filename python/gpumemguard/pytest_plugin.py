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
(request.getfixturevalue) and a unittest.TestCase's setUp or asyncSetUp
are set-up too.
Markers are read when the test is called, so that a conftest's hook or a
fixture (request.applymarker) may add them.
"""
import gc
import inspect
import os
import re
import sys

import pytest

from . import Guard, GuardNotLoaded, command_path, format_size

REEXEC_ENV = "GPUMEMGUARD_PYTEST_REEXEC"
# sys.path[0] as pytest starts, before a conftest's directory goes in front
# of it (rootdir-relative imports): for -m, the directory Python started in
_PATH0 = sys.path[0] if sys.path else ""
REEXEC_STACK_DEPTH = 128
# The process whose test a measuring session is running now (its pid), or
# None: a session started inside that test measures nothing
_MEASURING = [None]
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


def _program_index(argv):
    """Where the program stands in an interpreter's command line, past the
    interpreter's options: (index, "script") for a script, directory or
    zip file (or "-"), (None, "module") for -m, (None, "command") for -c,
    (None, None) for none."""
    i = 1
    while i < len(argv):
        a = argv[i]
        if a == "--":
            return (i + 1, "script") if i + 1 < len(argv) else (None, None)
        if a == "-" or not a.startswith("-"):
            return i, "script"
        if a.startswith("--"):
            i += 2 if a == "--check-hash-based-pycs" else 1
            continue
        takes_next = False
        for j, ch in enumerate(a[1:], 1):
            if ch in "cm":
                return None, "module" if ch == "m" else "command"
            if ch in "WX":  # its value: the rest of this word, or the next word
                takes_next = j == len(a) - 1
                break
        i += 2 if takes_next else 1
    return None, None


def _program_file(path):
    """The absolute path of the script, directory or zip file this process
    was started with, named `path` on its command line; None when unknown."""
    main = sys.modules.get("__main__")
    f = getattr(main, "__file__", None)
    base = os.path.basename(path.rstrip(os.sep))
    if f and os.path.isabs(f) and os.path.basename(f) == base:  # a script (3.9+: absolute)
        return f
    p0 = _PATH0  # as pytest started: a conftest's directory goes in front of it since
    if p0 and os.path.isabs(p0):
        if os.path.basename(p0.rstrip(os.sep)) == base and os.path.exists(p0):  # a directory or zip file run
            return p0
        if f and os.path.basename(f) == base and os.path.exists(os.path.join(p0, base)):  # a script, before 3.9
            return os.path.join(p0, base)
    return None


def _same(a, b):
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _command_line(config, orig):
    """The interpreter's command line to run again, and the directory to run
    it in. Python 3.10+ keeps the line (sys.orig_argv); before, it is made
    again from the interpreter's flags (-W, -X, -O, -I ...) and `-m MODULE`
    or the program. It runs from pytest's invocation directory unless the
    directory the shell started Python in ($PWD) is where the program was
    found: a script (or directory, or zip file) named by a relative path
    that still names it from $PWD, or a module found from $PWD (the program
    may have changed directory before it started pytest); a script not
    found from $PWD is named by its absolute path."""
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    module = None
    if spec is not None and getattr(spec, "name", None):
        module = spec.name[:-len(".__main__")] if spec.name.endswith(".__main__") else spec.name
        if module == "__main__":  # a directory or zip file run: its __main__.py
            module = None
    if orig:
        argv = list(orig)
    else:
        import subprocess  # its helper reproduces sys.flags, sys.warnoptions and sys._xoptions
        flags = subprocess._args_from_interpreter_flags()
        if module:
            argv = [sys.executable] + flags + ["-m", module] + sys.argv[1:]
        else:
            f = getattr(main, "__file__", None)
            named = os.path.basename(sys.argv[0].rstrip(os.sep)) if sys.argv else ""
            # the script, or a directory's or zip file's __main__.py
            if f and named not in (os.path.basename(f), os.path.basename(os.path.dirname(f))):
                raise pytest.UsageError(
                    "--gpumem: the program changed sys.argv[0], and before Python 3.10 its command line cannot "
                    "be made again: start it under the guard instead, e.g. gpumemguard -- python %s"
                    % os.path.basename(f))
            argv = [sys.executable] + flags + sys.argv
    argv[0] = sys.executable
    start = str(config.invocation_params.dir)
    pwd = os.environ.get("PWD", "")
    pwd = pwd if os.path.isabs(pwd) and os.path.isdir(pwd) else None
    at, kind = _program_index(argv)
    if kind == "script" and at is not None and argv[at] != "-" and not os.path.isabs(argv[at]):
        real = _program_file(argv[at])
        if pwd and real and _same(os.path.join(pwd, argv[at]), real):
            start = pwd
        elif real:
            argv[at] = real
    elif kind == "module" and module and _found_in_start_dir(module):
        start = _PATH0  # -m found the module in the directory Python started in
    return argv, start


def _found_in_start_dir(module):
    """Whether -m found `module` in the directory Python started in
    (sys.path[0] as pytest started, when not isolated): its file lies
    there, at its dotted name's path."""
    if not os.path.isabs(_PATH0) or sys.flags.isolated or getattr(sys.flags, "safe_path", False):
        return False
    f = getattr(sys.modules.get("__main__"), "__file__", None)
    if not f or not os.path.isabs(f):
        return False
    rel = os.path.relpath(f, _PATH0)
    if rel.startswith(os.pardir + os.sep):
        return False
    parts = rel[:-3].split(os.sep) if rel.endswith(".py") else []
    if parts and parts[-1] in ("__main__", "__init__"):
        parts = parts[:-1]
    return ".".join(parts) == module


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
    if _under_guard():
        # run again by _reexec: the mark is for that run alone, not for the
        # tests' environment or a pytest that one of them starts afresh
        os.environ.pop(REEXEC_ENV, None)
    elif config.getoption("gpumem") and not hasattr(config, "workerinput"):
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
            default = guard.parse_size(text) or None  # 0: no default budget, as GPUMEM_LIMIT=0 is no limit
        except ValueError as e:
            raise pytest.UsageError("--gpumem-limit %r: %s" % (text, e))
    if _MEASURING[0] == os.getpid():
        # a session inside a test of another (pytester's runpytest_inprocess):
        # the guard's peak window is the process's, which the outer test is
        # measuring; this one measures nothing rather than spoil that
        config.issue_config_time_warning(pytest.PytestConfigWarning(
            "--gpumem: a pytest session inside a test of a session that measures GPU memory already "
            "measures nothing (the outer test's figures include what it allocates)"), stacklevel=2)
        return
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
    test, the plugins, the `pytest` script, runpy): the test's own are left.
    Frames of code run from a string (`<string>`) are the harness's where
    they follow its frames outwards (an xdist worker's bootstrap, which
    execnet runs with exec); a test's own exec keeps its frame."""
    dirs = _harness_dirs()
    out = []
    dropping = False  # the last frame of this stack was the harness's
    for line in text.splitlines():
        m = _FRAME.match(line)
        if m:
            f = m.group(1)
            if (f.startswith(dirs) or f.startswith("<frozen runpy") or os.path.basename(f) in ("pytest", "py.test")
                    or (dropping and f == "<string>")):
                dropping = True
                continue
        dropping = False
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
    # unittest.TestCase's setUp or asyncSetUp (which pytest runs inside the
    # call), is set-up, not the test's: what it allocates and still holds at
    # the test's end is no leak of the test's, and the bytes it holds are not
    # the test's peak. Each outermost such window (one inside another is
    # part of it) ends with the peak measured again from there; what the test
    # itself held then (in use, less what it held at its start and what the
    # set-up windows hold) is carried into the next window's peak, per
    # device, and the highest of the windows is the test's peak.

    def _devices(self):
        """The devices with bytes in use in the window, or a peak in it."""
        return [d for d in range(MAX_DEVICES) if self.guard.peak(d)]

    def _setup_begin(self):
        w = self._window
        w["depth"] += 1
        if w["depth"] > 1:
            return None  # inside another set-up window, which covers it
        g = self.guard
        devs = self._devices()
        if w["start"] is None:  # the first window's base: what was in use when the test began
            w["start"] = {d: g.peak(d) - g.peak_growth(d) for d in devs}
        for d in devs:
            w["best"][d] = max(w["best"].get(d, 0), w["carry"].get(d, 0) + g.peak_growth(d))
        try:
            return g.mark()
        except RuntimeError:  # no mark left (64 held): this set-up's allocations count as the test's
            return None

    def _setup_end(self, begin):
        w = self._window
        w["depth"] -= 1
        if w["depth"] > 0:
            return
        g = self.guard
        if begin is not None:
            try:
                w["setups"].append((begin, g.mark()))
            except RuntimeError:  # no mark left: what it holds now, counted as it is now
                b, n = g.since(begin, pools=False)
                w["held"] = (w["held"][0] + b, w["held"][1] + n)
                for d in self._devices():
                    w["held_dev"][d] = w["held_dev"].get(d, 0) + g.since(begin, d)[0]
                g.mark_release(begin)
        g.peak_reset()
        w["reset"] = True
        start = w["start"] or {}
        for d in self._devices():  # just after the reset, peak(d) is what is in use now
            setups = sum(g.since(b, d)[0] - g.since(e, d)[0] for b, e in w["setups"]) + w["held_dev"].get(d, 0)
            w["carry"][d] = max(g.peak(d) - start.get(d, 0) - setups, 0)

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
        if case is None:
            return
        plugin = self
        setup = getattr(case, "setUp", None)
        asetup = getattr(case, "asyncSetUp", None)

        def setUp(*args, **kwargs):
            window = plugin._window
            begin = plugin._setup_begin() if window is not None else None
            try:
                return setup(*args, **kwargs)
            finally:
                if window is not None and plugin._window is window:
                    plugin._setup_end(begin)

        async def asyncSetUp(*args, **kwargs):
            window = plugin._window
            begin = plugin._setup_begin() if window is not None else None
            try:
                return await asetup(*args, **kwargs)
            finally:
                if window is not None and plugin._window is window:
                    plugin._setup_end(begin)
        try:
            if setup is not None:
                case.setUp = setUp
            if asetup is not None and inspect.iscoroutinefunction(asetup):
                case.asyncSetUp = asyncSetUp
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
        window = self._window = {"depth": 0, "start": None, "best": {}, "carry": {}, "setups": [], "held": (0, 0),
                                 "held_dev": {}, "reset": False}
        self._wrap_unittest_setup(item)
        refused = guard.refusals()
        guard.peak_reset()
        pid = os.getpid()
        outer, _MEASURING[0] = _MEASURING[0], pid
        try:
            outcome = yield
            self._window = None
            if os.getpid() != pid:
                # a child the test forked that went on running pytest: the
                # marks are its parent's, which measures the test
                window["setups"] = []
                mark = None
                return
            if window["reset"]:  # set-up inside the call: the highest of the windows
                best, last = window["best"], 0
                for d in self._devices():
                    g = window["carry"].get(d, 0) + guard.peak_growth(d)
                    best[d] = max(best.get(d, 0), g)
                    last = max(last, g)
                peak = max(best.values()) if best else 0
                self._peaks, self._peak_in_last = best, last >= peak
            else:
                peak = guard.peak_growth(-1)
                self._peaks, self._peak_in_last = None, True
            leaked, leaked_n = self._leaked(mark, window)
            if leaked:  # what a garbage collection frees was no leak
                gc.collect()
                leaked, leaked_n = self._leaked(mark, window)
            # a test run again (pytest-rerunfailures) keeps its properties: this run's replace them
            item.user_properties[:] = [p for p in item.user_properties if not str(p[0]).startswith("gpumem_")]
            item.user_properties.append(("gpumem_peak", peak))
            item.user_properties.append(("gpumem_leaked", leaked))
            if outcome.excinfo is not None:
                if not issubclass(outcome.excinfo[0], (pytest.skip.Exception, pytest.xfail.Exception)):
                    self._explain_refusals(item, refused)
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
            _MEASURING[0] = outer
            self._window = None
            for m in ([mark] if mark is not None else []) + [m for pair in window["setups"] for m in pair]:
                guard.mark_release(m)

    def _explain_refusals(self, item, before):
        """A test that failed after an allocation was refused: what filled
        the memory, in a section of its report. (The guard's own message, with
        the refused call's stack, goes to the stderr the process started
        with, which pytest's capture of descriptor 2 has replaced.)"""
        quota, driver = (a - b for a, b in zip(self.guard.refusals(), before))
        if quota <= 0 and driver <= 0:
            return
        said = []
        s = lambda n: "" if n == 1 else "s"
        if driver > 0:
            said.append("the driver refused %d allocation%s (out of memory)" % (driver, s(driver)))
        if quota > 0 and os.environ.get("GPUMEM_ON_LIMIT") == "warn":  # counted, made all the same
            said.append("%d allocation%s went over GPUMEM_LIMIT (made: GPUMEM_ON_LIMIT=warn)" % (quota, s(quota)))
        elif quota > 0:
            said.append("the quota refused %d allocation%s (GPUMEM_LIMIT)" % (quota, s(quota)))
        text = "While this test ran, %s.%s" % (" and ".join(said), self._at_peak())
        item.add_report_section("call", "gpumemguard", text)

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

    def _at_peak(self):
        """What was live at the test's peak, freed or not, as lines to follow
        a message; "" when the guard has nothing to show."""
        if not self._peak_in_last:  # the peak_text of that window is gone with the window
            return ("\n(the peak came before set-up that ran inside the test: a fixture it asked for, or "
                    "its setUp; what was live then is not shown)")
        text = _trim(self.guard.peak_text(-1, SHOWN_STACKS))
        if not text.strip():
            return ""
        return ("\nWhat was live at the test's peak, biggest first (with what was in use when it started; "
                "Python frames first, pytest's own left out):\n%s" % text.rstrip("\n"))

    def _peak_message(self, limit, peak, mark):
        devs = self._devices_over()
        where = ", ".join("device %d: %s" % (d, format_size(g)) for g, d in devs if g > limit) or "?"
        msg = ("Test was limited to %s of GPU memory but its peak was %s above what was in use when it "
               "started (%s)" % (format_size(limit), format_size(peak), where))
        at_peak = self._at_peak()
        if at_peak:
            return msg + at_peak
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
            "highest peak %s%s" % (len(runs), "" if len(runs) == 1 else "s", over, leaked,
                                   format_size(top[1]), " in %s" % top[0] if top[1] else ""))
