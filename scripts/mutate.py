#!/usr/bin/env python3
"""mutate.py - mutation testing of src/ (make mutate; docs/testing.md).

The sample is fixed: tests/mutants.txt lists each mutant as the file, the
line, the original text and the text universalmutator puts in its place.
Each run regenerates universalmutator's mutants of the sampled files and
checks that every listed mutant is still one of them at (or near) its line;
one whose line is gone is "stale" and left out of the score.

Nothing is ever mutated in the working tree: the tree (tracked and untracked,
not ignored, files) is copied to BUILD/mutate/tree, built there once, and each
mutant is written into that copy, built, run against `make test` with
GMG_FAIL_FAST=1 (the suite stops at its first FAIL), and the file put back.

  killed      make test failed, or ran past the time limit (a hang)
  survived    make test passed
  stillborn   the mutant does not build (-Werror included): not scored
  equivalent  the mutant's object file is byte for byte the original's once
              debug sections are stripped (trivial compiler equivalence):
              not scored
  stale       its line is no longer in the file: not scored

usage: mutate.py [--build B] [--list FILE] [--only M001,M017] [--timeout S] [--no-baseline]
                 [--jobs N] [--resume]
       mutate.py --resample [--seed N] [--count N] [--per-file N]   (rewrites tests/mutants.txt)

--jobs N runs N suites side by side, each in a tree of its own (BUILD/mutate/tree,
tree1, ...) and, through unshare(1), a private /dev/shm and tmux server, so that
no suite sees another's status pages, group segments or terminals (root only;
else one at a time). Each verdict is appended to BUILD/mutate/results.partial as
it is reached; --resume keeps those and runs only the rest.
"""
import argparse
import datetime
import glob
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIST = os.path.join(ROOT, "tests", "mutants.txt")
# every C file of src/: the library's layers, the command and the library run as a program
TARGETS = ["src/*.c", "src/*/*.c"]
HEADER_RE = re.compile(r"^([A-Z]\w*) (\S+):(\d+)$")
MUTANT_FILE_RE = re.compile(r"\.mutant\.(\d+)\.")  # universalmutator's file names: NAME.mutant.N.EXT

# A mutant's first look: the scripts of its file's area, run alone
# (tests/run.sh's GMG_ONLY) before the whole suite, with the scripts that
# build the programs they run (sites/sites.sh builds unrolled,
# settings/edges.sh edges). Only an order: a mutant they kill would fail
# the whole suite too, and one they do not kill is then run against the
# whole suite. Files whose area is tested early in tests/run.sh anyway (the
# hooks, the core, the driver) have none.
FIRST_LOOK = [
    (r"src/api\.c$", "tests/api/devices.sh tests/api.sh tests/wheel.sh"),
    (r"src/guard(_main)?\.c$", "tests/library/exports.sh tests/library/copies.sh tests/fork/report.sh tests/fork/pipes.sh"
     " tests/exitcode/buffered_stdout.sh tests/cimode.sh tests/metrics/counts.sh tests/metrics/interval.sh tests/cli.sh"),
    (r"src/base/(buf|log|exe)\.c$", "tests/reports.sh tests/reports/names.sh tests/python/names.sh tests/settings/edges.sh"
     " tests/messages/long_line.sh tests/metrics/counts.sh tests/top.sh"),
    (r"src/base/(config|limit_parse)\.c$", "tests/settings/stack_depth.sh tests/settings/percent.sh tests/settings/edges.sh"
     " tests/docs/accepted_values.sh tests/quota/huge.sh tests/cimode.sh tests/paths/files.sh tests/api.sh"),
    (r"src/base/page\.c$", "tests/settings/edges.sh tests/pictures.sh"),
    (r"src/base/signame\.c$", "tests/signals/early.sh tests/signals/installers.sh tests/cli/dump.sh tests/cli.sh"
     " tests/cli/signals.sh"),
    (r"src/base/suppress\.c$", "tests/suppressions/anchors.sh tests/cimode.sh"),
    (r"src/base/self\.c$", "tests/library/copies.sh tests/fork/report.sh tests/fork/no_handlers.sh"),
    (r"src/cli/", "tests/cli/dump.sh tests/cli.sh tests/cli/signals.sh tests/top.sh tests/top/driver_oom.sh tests/api.sh"
     " tests/settings/edges.sh tests/sites/sites.sh tests/everyday/everyday.sh tests/pictures.sh"),
    (r"src/cluster/group\.c$", "tests/group.sh tests/group/holds.sh tests/group/budget.sh"),
    (r"src/cluster/metrics\.c$", "tests/metrics/counts.sh tests/metrics/interval.sh tests/cimode.sh tests/deploy.sh"),
    (r"src/cluster/status\.c$", "tests/top.sh tests/top/driver_oom.sh"),
    (r"src/core/(pyframes|pylines)\.c$", "tests/python.sh tests/python/names.sh tests/pydeep/pydeep.sh"),
    (r"src/core/(unwind|walkgate)\.c$", "tests/unwind/unwind.sh tests/fork/report.sh"),
    (r"src/report/(html|memviz|trace|timeline)\.c$", "tests/reports.sh tests/settings/edges.sh tests/sites/sites.sh"
     " tests/everyday/everyday.sh tests/pictures.sh"),
    (r"src/report/(owners|owners_fmt|query|atpeak|sites)\.c$", "tests/pools.sh tests/sites/sites.sh tests/oom/driver_oom.sh"
     " tests/api.sh tests/reports.sh"),
]


def first_look(path):
    return next((scripts for pat, scripts in FIRST_LOOK if re.search(pat, path)), None)


def log(msg):
    print(msg, flush=True)


def clean_env(extra=None):
    env = dict(os.environ)
    for k in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES"):
        env.pop(k, None)
    env.update(extra or {})
    return env


def target_files():
    files = []
    for pat in TARGETS:
        files.extend(sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, pat))))
    return files


# ------------------------------------------------------------------ mutants

class Mutant:
    def __init__(self, mid, path, line, orig, repl):
        self.id, self.path, self.line, self.orig, self.repl = mid, path, line, orig, repl

    def diff(self):
        return "\n".join(["-" + self.orig] + ["+" + r for r in self.repl])


def read_list(path):
    mutants, cur = [], None
    with open(path, encoding="utf-8") as f:
        for raw in f:
            line = raw.rstrip("\n")
            m = HEADER_RE.match(line)
            if m:
                cur = Mutant(m.group(1), m.group(2), int(m.group(3)), None, [])
                mutants.append(cur)
            elif cur and line.startswith("-") and cur.orig is None:
                cur.orig = line[1:]
            elif cur and line.startswith("+"):
                cur.repl.append(line[1:])
            elif line.startswith("#") or not line.strip():
                cur = None if not line.strip() else cur
            else:
                sys.exit(f"mutate: {path}: cannot read line {line!r}")
    for m in mutants:
        if m.orig is None or not m.repl:
            sys.exit(f"mutate: {path}: {m.id} has no '-' or no '+' line")
    return mutants


def universal_mutants(tool, path):
    """universalmutator's mutants of ROOT/path, as (line, orig, repl lines)."""
    src = open(os.path.join(ROOT, path), encoding="utf-8").read().split("\n")
    out = []
    with tempfile.TemporaryDirectory() as d:
        subprocess.run([tool, os.path.join(ROOT, path), "c", "--mutantDir", d, "--noCheck"], cwd=d,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        names = sorted((n for n in os.listdir(d) if MUTANT_FILE_RE.search(n)),
                       key=lambda n: int(MUTANT_FILE_RE.search(n).group(1)))
        for n in names:
            mut = open(os.path.join(d, n), encoding="utf-8", errors="replace").read().split("\n")
            i = 0
            while i < len(src) and i < len(mut) and src[i] == mut[i]:
                i += 1
            j = 0
            while j < len(src) - i and j < len(mut) - i and src[-1 - j] == mut[-1 - j]:
                j += 1
            changed = len(src) - i - j
            if changed == 0 and i > 0:  # lines inserted after line i
                i -= 1
            elif changed != 1:
                continue  # not a one-line mutant
            out.append((i + 1, src[i], mut[i:len(mut) - j]))
    return out


def code_lines(text):
    """1-based line numbers holding code outside comments and strings."""
    lines, has_code, i, state = set(), False, 0, "code"
    lineno = 1
    n = len(text)
    while i < n:
        c = text[i]
        if c == "\n":
            if has_code:
                lines.add(lineno)
            lineno, has_code = lineno + 1, False
            if state == "line":
                state = "code"
            i += 1
            continue
        if state == "code":
            if text.startswith("/*", i):
                state, i = "block", i + 2
                continue
            if text.startswith("//", i):
                state, i = "line", i + 2
                continue
            if c in "\"'":
                state = c
            if not c.isspace():
                has_code = True
        elif state == "block":
            if text.startswith("*/", i):
                state, i = "code", i + 2
                continue
        elif state in "\"'":
            has_code = True
            if c == "\\":
                i += 2
                continue
            if c == state:
                state = "code"
        i += 1
    return lines


def locate(lines, m):
    """Index of the mutant's original line in lines (nearest its line), or None."""
    hits = [k for k, l in enumerate(lines) if l == m.orig]
    if not hits:
        return None
    return min(hits, key=lambda k: abs(k + 1 - m.line))


# -------------------------------------------------------------- the scratch tree

class Tree:
    def __init__(self, base, k=0):
        self.dir = os.path.join(base, "tree" + (str(k) if k else ""))
        self.pristine = {}

    def copy(self):
        if os.path.exists(self.dir):
            shutil.rmtree(self.dir)
        files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                               cwd=ROOT, check=True, capture_output=True).stdout.decode().split("\0")
        for f in filter(None, files):
            src = os.path.join(ROOT, f)
            if not os.path.isfile(src):
                continue  # deleted but not yet committed
            dst = os.path.join(self.dir, f)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copy2(src, dst)
            os.utime(dst)  # newer than anything built before

    def make(self, *args, timeout=900):
        try:
            p = subprocess.run(["make", "-s", "B=build", *args], cwd=self.dir, env=clean_env(),
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
            return p.returncode, p.stdout.decode(errors="replace")
        except subprocess.TimeoutExpired:
            return 124, "build timed out"

    def obj(self, path):
        return os.path.join(self.dir, "build", "obj", os.path.splitext(path[len("src/"):])[0] + ".o")

    def reference(self, path, scratch):
        """The pristine file's object, debug sections stripped. The command's
        files (src/cli) are built into it in one step, with no object of their
        own: the pattern rule compiles them alone, for this comparison only."""
        if not os.path.exists(self.obj(path)):
            rc, out = self.make(os.path.relpath(self.obj(path), self.dir))
            if rc != 0:
                sys.exit(f"mutate: {path} does not compile alone:\n{out}")
        return stripped(self.obj(path), scratch)

    def text(self, path):
        if path not in self.pristine:
            self.pristine[path] = open(os.path.join(self.dir, path), encoding="utf-8").read()
        return self.pristine[path]

    def write(self, path, text):
        with open(os.path.join(self.dir, path), "w", encoding="utf-8") as f:
            f.write(text)

    def apply(self, m):
        """Write the mutant into the tree; False when its line is gone."""
        lines = self.text(m.path).split("\n")
        k = locate(lines, m)
        if k is None:
            return False
        self.write(m.path, "\n".join(lines[:k] + m.repl + lines[k + 1:]))
        return True

    def restore(self, path):
        self.write(path, self.text(path))


def stripped(obj, out):
    subprocess.run(["objcopy", "--strip-debug", obj, out], check=True)
    return open(out, "rb").read()


def same_code(tree, path, reference):
    """The mutated file's object equals the pristine one, debug info aside."""
    rc, _ = tree.make(os.path.relpath(tree.obj(path), tree.dir))
    if rc != 0:
        return None  # does not build
    with tempfile.NamedTemporaryFile() as t:
        return stripped(tree.obj(path), t.name) == reference


def isolation():
    """The command prefix that gives a suite a /dev/shm of its own (a private
    mount namespace), or None where that cannot be had (not root)."""
    try:
        p = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                            "mount -t tmpfs tmpfs /dev/shm"], capture_output=True, timeout=30)
        if p.returncode == 0:
            return ["unshare", "--mount", "--propagation", "private", "sh", "-c",
                    'mount -t tmpfs -o mode=1777 tmpfs /dev/shm && exec "$@"', "sh"]
    except (OSError, subprocess.TimeoutExpired):
        pass
    return None


def suite_namespace(pid):
    """The mount namespace unshare(1) made for the suite started as pid."""
    mine = os.readlink("/proc/self/ns/mnt")
    for _ in range(200):
        try:
            ns = os.readlink(f"/proc/{pid}/ns/mnt")
        except OSError:
            return None
        if ns != mine:
            return ns
        time.sleep(0.01)
    return None


def kill_namespace(ns):
    """Every process left in the suite's namespace: a program a test ran
    under timeout(1) is in a process group of its own, which killing the
    suite's group does not reach, and a mutant can make it spin for ever
    (stealing a core from the next suites, whose slow cases then fail)."""
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            if os.readlink(f"/proc/{d}/ns/mnt") == ns:
                os.kill(int(d), signal.SIGKILL)
        except OSError:
            pass


def run_suite(tree, timeout, wrap=None, only=None):
    """(status, seconds, first FAIL line or why) of make test in the tree.
    Under wrap (isolation()), the suite has a /dev/shm and a tmux server of
    its own, so that suites run side by side never see each other's status
    pages, group segments or terminal sessions, and whatever it leaves
    running is killed when it ends."""
    start = time.time()
    env = {"GMG_FAIL_FAST": "1"}
    if only:
        env["GMG_ONLY"] = only
    cmd = ["make", "-s", "B=build", "test"]
    if wrap:
        os.makedirs(os.path.join(tree.dir, "tmux"), exist_ok=True)
        env["TMUX_TMPDIR"] = os.path.join(tree.dir, "tmux")
        cmd = wrap + cmd
    p = subprocess.Popen(cmd, cwd=tree.dir, env=clean_env(env),
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    ns = suite_namespace(p.pid) if wrap else None
    try:
        out, _ = p.communicate(timeout=timeout)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        rc = 124
    finally:
        try:
            os.killpg(p.pid, signal.SIGKILL)  # anything the suite left running
        except ProcessLookupError:
            pass
        if ns:
            kill_namespace(ns)
    text = out.decode(errors="replace")
    secs = time.time() - start
    if rc == 124:
        return "timeout", secs, f"ran past {timeout} s", text
    fail = next((l for l in text.split("\n") if l.startswith("FAIL ")), None)
    if rc == 0:
        return "pass", secs, "", text
    return "fail", secs, fail or text.strip().split("\n")[-1][:200], text


# --------------------------------------------------------------------- run

def run(args, tool):
    mutants = read_list(args.list)
    handmade = os.path.abspath(args.list) != LIST
    if args.only:
        want = set(args.only.split(","))
        mutants = [m for m in mutants if m.id in want]
    base = os.path.abspath(args.work) if args.work else os.path.join(ROOT, args.build, "mutate")
    logs = os.path.join(base, "logs")
    os.makedirs(logs, exist_ok=True)
    partial = os.path.join(base, "results.partial")

    # verdicts of an earlier run of the same sample (--resume)
    done = {}
    if args.resume and os.path.exists(partial):
        for line in open(partial, encoding="utf-8"):
            f = line.rstrip("\n").split("\t")
            if len(f) == 5 and not line.startswith("#"):
                done[f[0]] = (f[1], float(f[2]), f[4])
    elif os.path.exists(partial):
        os.remove(partial)

    # each listed mutant must be one universalmutator makes of today's file
    stale = set()
    by_file = {}
    for m in mutants:
        by_file.setdefault(m.path, []).append(m)
    for path, ms in by_file.items():
        if handmade or all(m.id in done for m in ms):
            continue  # written by hand: their line must be there, no more; or every verdict kept already
        have = {(o, tuple(r)) for _, o, r in universal_mutants(tool, path)}
        for m in ms:
            if (m.orig, tuple(m.repl)) not in have:
                stale.add(m.id)

    jobs = max(1, args.jobs)
    wrap = isolation()
    if jobs > 1 and not wrap:
        log("mutate: no private /dev/shm can be had here (unshare needs root): one suite at a time")
        jobs = 1
    trees = [Tree(base, k) for k in range(jobs)]
    for tree in trees:
        log(f"mutate: copying the tree to {tree.dir} and building it")
        tree.copy()
        rc, out = tree.make("all")
        if rc != 0:
            sys.exit("mutate: the unmutated tree does not build:\n" + out)
    reference = {}
    with tempfile.NamedTemporaryFile() as t:
        for path in by_file:
            reference[path] = [tree.reference(path, t.name) for tree in trees]

    timeout = args.timeout
    if not args.no_baseline:
        log(f"mutate: the suite on the unmutated tree (the baseline){', ' + str(jobs) + ' side by side' if jobs > 1 else ''}")
        outcome = [None] * jobs

        def baseline(k):
            outcome[k] = run_suite(trees[k], 1800, wrap)
        threads = [threading.Thread(target=baseline, args=(k,)) for k in range(jobs)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        for k, (st, secs, why, text) in enumerate(outcome):
            open(os.path.join(logs, f"baseline{k or ''}.log"), "w").write(text)
            if st != "pass":
                sys.exit(f"mutate: the suite fails without any mutant ({why}); see {logs}/baseline{k or ''}.log")
        secs = max(o[1] for o in outcome)
        log(f"mutate: baseline passed in {secs:.0f} s")
        if not timeout:
            timeout = max(300, int(4 * secs))
    timeout = timeout or 600
    log(f"mutate: {len(mutants)} mutants, {timeout} s each at most (a hang counts as killed), {jobs} at a time")

    results = {}
    lock = threading.Lock()
    queue = list(enumerate(mutants, 1))

    def record(n, m, verdict, secs, why):
        with lock:
            results[m.id] = (m, verdict, secs, why)
            with open(partial, "a", encoding="utf-8") as f:
                f.write(f"{m.id}\t{verdict}\t{secs:.0f}\t{m.path}:{m.line}\t{why}\n")
            tail = f" in {secs:.0f} s" if verdict in ("killed", "survived") else ""
            log(f"[{n}/{len(mutants)}] {m.id} {m.path}:{m.line} {verdict}{tail}{': ' + why if why else ''}")

    def worker(k):
        tree = trees[k]
        while True:
            with lock:
                if not queue:
                    return
                n, m = queue.pop(0)
            if m.id in done:
                v, secs, why = done[m.id]
                with lock:
                    results[m.id] = (m, v, secs, why)
                    log(f"[{n}/{len(mutants)}] {m.id} {m.path}:{m.line} {v} (an earlier run's verdict)")
                continue
            if m.id in stale or not tree.apply(m):
                record(n, m, "stale", 0, "no longer a universalmutator mutant of this file")
                continue
            try:
                same = same_code(tree, m.path, reference[m.path][k])
                if same is None:
                    record(n, m, "stillborn", 0, "does not build")
                    continue
                if same:
                    record(n, m, "equivalent", 0, "same object code as the original")
                    continue
                rc, out = tree.make("all")
                if rc != 0:
                    record(n, m, "stillborn", 0, "does not build")
                    continue
                only, secs0 = first_look(m.path), 0.0
                if only:  # its area's scripts first: a kill there needs no more
                    st, secs0, why, text = run_suite(tree, timeout, wrap, only)
                    if st != "pass":
                        open(os.path.join(logs, m.id + ".log"), "w").write(m.diff() + "\n\nGMG_ONLY=" + only + "\n" + text)
                        record(n, m, "killed", secs0, why + " (its area's scripts)")
                        continue
                st, secs, why, text = run_suite(tree, timeout, wrap)
                open(os.path.join(logs, m.id + ".log"), "w").write(m.diff() + "\n\n" + text)
                record(n, m, "survived" if st == "pass" else "killed", secs0 + secs, why)
            finally:
                tree.restore(m.path)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(jobs)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()

    ordered = [results[m.id] for m in mutants if m.id in results]
    scored = [r for r in ordered if r[1] in ("killed", "survived")]
    killed = [r for r in scored if r[1] == "killed"]
    survivors = [r for r in scored if r[1] == "survived"]
    with open(os.path.join(base, "results.txt"), "w") as f:
        f.write(f"# make mutate, {datetime.date.today()}: id, verdict, seconds, file:line, why\n")
        for m, v, secs, why in ordered:
            f.write(f"{m.id}\t{v}\t{secs:.0f}\t{m.path}:{m.line}\t{why}\n")
    log("")
    for kind in ("stillborn", "equivalent", "stale"):
        ids = [r[0].id for r in ordered if r[1] == kind]
        if ids:
            log(f"{kind} (not scored): {len(ids)}: {' '.join(ids)}")
    if survivors:
        log(f"survivors: {len(survivors)}")
        for m, _, _, _ in survivors:
            log(f"  {m.id} {m.path}:{m.line}")
            for l in m.diff().split("\n"):
                log("      " + l)
    pct = 100.0 * len(killed) / len(scored) if scored else 0.0
    log(f"mutation score: {len(killed)}/{len(scored)} killed ({pct:.1f}%), {len(survivors)} survived"
        f" (stillborn, equivalent and stale mutants excluded); results in {base}/results.txt")
    return 0 if pct >= args.min_score else 1


# ---------------------------------------------------------------- resample

def resample(args, tool):
    files = target_files()
    sizes = {p: len(code_lines(open(os.path.join(ROOT, p), encoding="utf-8").read())) for p in files}
    total = sum(sizes.values())
    quota = {p: max(args.per_file, round(args.count * sizes[p] / total)) for p in files}
    base = os.path.join(ROOT, args.build, "mutate")
    tree = Tree(base)
    log(f"mutate: copying the tree to {tree.dir} and building it")
    tree.copy()
    rc, out = tree.make("all")
    if rc != 0:
        sys.exit("mutate: the unmutated tree does not build:\n" + out)
    chosen, stats = [], []
    for path in files:
        with tempfile.NamedTemporaryFile() as t:
            reference = tree.reference(path, t.name)
        code = code_lines(tree.text(path))
        cands, seen = [], set()
        for line, orig, repl in universal_mutants(tool, path):
            if line in code and (line, tuple(repl)) not in seen:
                seen.add((line, tuple(repl)))
                cands.append((line, orig, repl))
        random.Random(f"{args.seed}:{path}").shuffle(cands)
        got, born_dead, equiv, tried = [], 0, 0, 0
        for line, orig, repl in cands:
            if len(got) == quota[path]:
                break
            tried += 1
            m = Mutant("", path, line, orig, repl)
            tree.apply(m)
            try:
                same = same_code(tree, path, reference)
            finally:
                tree.restore(path)
            if same is None:
                born_dead += 1
            elif same:
                equiv += 1
            else:
                got.append(m)
        got.sort(key=lambda m: m.line)
        chosen.extend(got)
        stats.append(f"#   {path}: {len(cands)} mutants on code lines, {tried} drawn, {born_dead} stillborn,"
                     f" {equiv} equivalent (same object code), {len(got)} kept")
        log(stats[-1][4:])
    for k, m in enumerate(chosen, 1):
        m.id = f"M{k:03d}"
    ver = subprocess.run([os.path.join(os.path.dirname(tool), "pip"), "show", "universalmutator"],
                         capture_output=True, text=True).stdout
    ver = next((l.split(":", 1)[1].strip() for l in ver.split("\n") if l.startswith("Version:")), "?")
    with open(LIST, "w", encoding="utf-8") as f:
        f.write("# tests/mutants.txt - the fixed sample of `make mutate` (scripts/mutate.py, docs/testing.md).\n"
                f"# Drawn {datetime.date.today()} by `scripts/mutate.sh --resample --seed {args.seed} --count {args.count}"
                f" --per-file {args.per_file}`\n"
                f"# from universalmutator {ver}'s C mutants of {', '.join(TARGETS)}: per file, a quota\n"
                f"# in proportion to its code lines (at least {args.per_file}), mutants of comment lines left out, drawn in\n"
                "# a seeded order; those that do not build (stillborn) or compile to the original's code\n"
                "# (equivalent) are skipped, as universalmutator's own check would.\n")
        f.write("\n".join(stats) + "\n#\n# Each: ID FILE:LINE, the original line (-), what replaces it (+).\n\n")
        for m in chosen:
            f.write(f"{m.id} {m.path}:{m.line}\n{m.diff()}\n\n")
    log(f"mutate: {len(chosen)} mutants written to {os.path.relpath(LIST, ROOT)}")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--mutator", default=None, help="universalmutator's mutate command")
    ap.add_argument("--list", default=LIST, help="another list of mutants in the same form (written by hand:"
                    " not checked against universalmutator)")
    ap.add_argument("--only", help="comma-separated ids")
    ap.add_argument("--work", help="the scratch directory (default BUILD/mutate)")
    ap.add_argument("--timeout", type=int, default=int(os.environ.get("GMG_MUTATE_TIMEOUT", "0")))
    ap.add_argument("--no-baseline", action="store_true")
    ap.add_argument("--jobs", type=int, default=int(os.environ.get("GMG_MUTATE_JOBS", "1")),
                    help="suites run side by side, each in a tree and a /dev/shm of its own (needs root)")
    ap.add_argument("--resume", action="store_true", help="keep the verdicts in BUILD/mutate/results.partial")
    ap.add_argument("--min-score", type=float, default=85.0)
    ap.add_argument("--resample", action="store_true")
    ap.add_argument("--seed", type=int, default=15)
    ap.add_argument("--count", type=int, default=50)
    ap.add_argument("--per-file", type=int, default=1, help="the least drawn of each file (default 1)")
    args = ap.parse_args()
    tool = args.mutator or shutil.which("mutate")
    if not tool:
        sys.exit("mutate: universalmutator's 'mutate' not found (scripts/mutate.sh installs it)")
    return resample(args, tool) if args.resample else run(args, tool)


if __name__ == "__main__":
    sys.exit(main())
