# frames.py MODE - Python call sites for the guard's Python frames,
# through ctypes: a CDLL call releases the GIL, as cuda-bindings, numba and
# PyTorch do. tests/python.sh runs each mode under the guard and finds the
# expected lines by the "# SITE:" markers.
import asyncio
import ctypes
import os
import sys
import threading

cu = ctypes.CDLL("libcuda.so.1")
assert cu.cuInit(0) == 0
_dev = ctypes.c_int()
assert cu.cuDeviceGet(ctypes.byref(_dev), 0) == 0
_ctx = ctypes.c_void_p()
assert cu.cuDevicePrimaryCtxRetain(ctypes.byref(_ctx), _dev) == 0
assert cu.cuCtxSetCurrent(_ctx) == 0
MiB = 1 << 20


def alloc(n):
    p = ctypes.c_uint64()
    rc = cu.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(n))  # SITE:alloc
    return p.value if rc == 0 else None


def free(p):
    assert cu.cuMemFree_v2(ctypes.c_uint64(p)) == 0


def model_weights():
    return alloc(6 * MiB)  # SITE:model_weights


def optimizer_state():
    return alloc(1 * MiB)  # SITE:optimizer_state


def sites():
    model_weights()
    optimizer_state()
    free(alloc(3 * MiB))  # freed: not in the report


def too_big_a():
    return alloc(8 * MiB)  # SITE:too_big_a


def too_big_b():
    return alloc(9 * MiB)  # SITE:too_big_b


def refuse():
    for _ in range(3):  # each site refused three times: one message each
        assert too_big_a() is None
        assert too_big_b() is None


def worker(k, barrier, out):
    assert cu.cuCtxSetCurrent(_ctx) == 0
    barrier.wait()
    for _ in range(50):
        p = alloc(4096)  # SITE:worker_churn
        free(p)
    if k == 0:
        out.append(worker_zero())
    elif k == 1:
        out.append(worker_one())
    elif k == 2:
        out.append(worker_two())
    else:
        out.append(worker_three())


def worker_zero():
    return [alloc(1 * MiB) for _ in range(3)]  # SITE:worker_zero


def worker_one():
    return [alloc(2 * MiB) for _ in range(3)]  # SITE:worker_one


def worker_two():
    return [alloc(3 * MiB) for _ in range(3)]  # SITE:worker_two


def worker_three():
    return [alloc(5 * MiB) for _ in range(3)]  # SITE:worker_three


def threads():
    barrier = threading.Barrier(4)
    out = []
    ts = [threading.Thread(target=worker, args=(k, barrier, out)) for k in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


def recurse(n):
    if n == 0:
        return alloc(7 * MiB)  # SITE:recurse_bottom
    return recurse(n - 1)  # SITE:recurse


def deep():
    recurse(100)


def gen_alloc():
    yield alloc(11 * MiB)  # SITE:gen_alloc


async def coro_alloc():
    await asyncio.sleep(0)
    return alloc(13 * MiB)  # SITE:coro_alloc


def gen_coro():
    list(gen_alloc())
    asyncio.run(coro_alloc())


def größe():
    return alloc(5 * MiB)  # SITE:größe


def unicode():
    größe()


def refuse_free():  # a retry after out of memory: free at once, then refused no more
    p = alloc(1 * MiB)
    assert too_big_a() is None
    free(p)


# verify: threads allocate from random depths through three functions and a
# generator, while another thread spins and a trace function runs; each
# allocation (a distinct size) notes the stack CPython itself sees, from the
# same line as the driver call. The expected groups go to $GMG_EXPECTED.
expected = {}
lock = threading.Lock()


def qualname(code):  # 3.10 has no co_qualname: the guard then names co_name too
    return getattr(code, "co_qualname", code.co_name)


def text(s):  # a copy: the names noted hold no code object's strings, which may then be freed (renamed)
    return (s + ".")[:-1]


def write_expected():  # the stacks noted_alloc saw, for as_cpython_saw (tests/python.sh)
    import json
    with open(os.environ["GMG_EXPECTED"], "w") as out:
        json.dump([[list(map(list, st)), sum(v), len(v)] for st, v in expected.items()], out)


def noted_alloc(n):
    p = ctypes.c_uint64(); rc = cu.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(n)); f = sys._getframe(); line = f.f_lineno  # noqa: E501,E702
    st = [(qualname(f.f_code), text(f.f_code.co_filename), line)]  # this frame's line is the call's, not this one's
    f = f.f_back
    while f is not None:
        st.append((qualname(f.f_code), text(f.f_code.co_filename), f.f_lineno))
        f = f.f_back
    assert rc == 0
    with lock:
        expected.setdefault(tuple(st), []).append(n)


def via_a(d, n):
    return noted_alloc(n) if d == 0 else via_b(d - 1, n)


def via_b(d, n):
    return noted_alloc(n) if d == 0 else via_c(d - 1, n)


def via_c(d, n):
    if d == 0:
        return noted_alloc(n)
    if d % 5 == 0:
        return next(via_gen(d - 1, n))
    return via_a(d - 1, n)


def via_gen(d, n):
    yield via_a(d, n)


def verifier(k, rnd):
    assert cu.cuCtxSetCurrent(_ctx) == 0
    for i in range(150):
        via_a(rnd.randrange(0, 30), (k * 1000 + i + 1) * 4096)


def verify():
    import random
    stop = []

    def spin():
        while not stop:
            sum(range(1000))
    threading.settrace(lambda *a: None)
    sp = threading.Thread(target=spin)
    sp.start()
    ts = [threading.Thread(target=verifier, args=(k, random.Random(k))) for k in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    stop.append(1)
    sp.join()
    write_expected()


def runs():
    # runs of allocations from one stack after another: after a run's first
    # few allocations, the thread's last capture is given again; the runs
    # differ in depth, or only in the line of an outer frame (run_from's
    # two calls)
    def run_from(which, d, n):
        for _ in range(n):
            if which:
                via_a(d, 4096)
            else:
                via_a(d, 4096)
    for which, d, n in [(0, 3, 12), (1, 3, 12), (0, 3, 9), (0, 7, 14), (1, 3, 8), (0, 4, 10)]:
        run_from(which, d, n)
    write_expected()


def made(i, name, file, src):
    ns = {"noted_alloc": noted_alloc}
    exec(compile(src, file, "exec"), ns)
    ns[name]((i + 1) * 4096)
    ns.clear()  # the function and its globals are a cycle: broken, all of it is freed now


def codes():
    # functions made by exec one after another, each freed before the next:
    # their code objects, names, files and line tables are made where the
    # last ones were. Only the file's text differs; only the first line;
    # only the name; all of them at once.
    body = "    noted_alloc(n)\n"
    for i in range(50):
        made(i, "made", f"<made {i}>", "def made(n):\n" + body)
    for i in range(50, 100):
        made(i, "made", "<made>", "\n" * (i % 6) + "def made(n):\n" + body)
    for i in range(100, 150):
        made(i, f"made_{i}", "<made>", f"def made_{i}(n):\n" + body)
    for i in range(150, 200):
        made(i, f"made_{i % 2}", f"<made {i % 5}>", "\n" * (i % 7) + f"def made_{i % 2}(n):\n" + "    x = 1\n" * (i % 3) + body)
    write_expected()


def stack_of(f):
    st = []
    while f is not None:
        st.append((qualname(f.f_code), f.f_code.co_filename, f.f_lineno))
        f = f.f_back
    return st


def tables():
    # a function made again and again from one code object, its line table
    # replaced each time by one of the same size and another content (the
    # call on line 2, then on line 3), each freed before the next: the
    # code objects and the tables are made where the last ones were. The
    # allocating path makes no object, so that the addresses come back.
    p = ctypes.c_uint64(); ref = ctypes.byref(p); size = ctypes.c_size_t(4096)  # noqa: E702
    seen = []

    def g(): return (seen.append(stack_of(sys._getframe())) if len(seen) < 2 else None, cu.cuMemAlloc_v2(ref, size))  # noqa: E704,E501

    def code_of(src):
        ns = {}
        exec(compile(src, "<same>", "exec"), ns)
        return ns["f"].__code__
    c1, c2 = code_of("def f():\n    g()\n"), code_of("def f():\n\n    g()\n")
    t = [bytes(c1.co_linetable), bytes(c2.co_linetable)]
    assert len(t[0]) == len(t[1]) and t[0] != t[1]
    glob, ftype = {"g": g}, type(g)

    def call(k):
        tbl = bytes(bytearray(t[k]))
        code = c1.replace(co_linetable=tbl)
        del tbl
        fn = ftype(code, glob)
        del code
        fn()
        del fn
    for i in range(400):
        call(i % 2)
    for st in seen:
        expected[tuple(map(tuple, st))] = [4096] * 200
    write_expected()


def watcher_on():
    # the first allocation asks for the guard's code watcher (3.12+), which
    # the main thread adds between two bytecodes
    free(alloc(4096))
    for _ in range(100000):
        pass


def renamed():
    # a live code object's file name changed in place (importlib does so to
    # code it loaded from a .pyc found moved): no code object is freed, the
    # frames read the same but for the file. Then a name dropped by the
    # next one and a third made where it was (an object of its size): the
    # same address, another text
    import _imp
    watcher_on()

    def f():
        code, first = sys._getframe().f_code, None
        for i in range(9):
            if i == 3:
                _imp._fix_co_filename(code, "/renamed/elsewhere.py")
            elif i == 5:
                _imp._fix_co_filename(code, "".join(["/renamed/", "first.py"]))
                first = id(code.co_filename)
            elif i == 7:
                _imp._fix_co_filename(code, "/renamed/elsewhere.py")  # the first one freed
                _imp._fix_co_filename(code, "".join(["/renamed/", "other.py"]))
                print("a file name made at a dropped one's address:", id(code.co_filename) == first, file=sys.stderr)
            noted_alloc(8192)
    f()
    write_expected()


def gil_held():
    # allocations made with the GIL held (ctypes.PyDLL keeps it, as C
    # extensions may): the guard never asks for its code watcher from such a
    # thread (3.13's Py_AddPendingCall may let the GIL go there), so it never
    # comes on; the stacks are right all the same
    held = ctypes.PyDLL("libcuda.so.1")
    p = ctypes.c_uint64()
    for _ in range(50):
        assert held.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(4096)) == 0  # SITE:gil_held
        for _ in range(2000):
            pass


def cleared_watchers():
    # the program clears every code watcher, the guard's among them, then
    # makes code objects and line tables again where freed ones were, as
    # tables() does
    watcher_on()
    clear = ctypes.pythonapi.PyCode_ClearWatcher
    clear.argtypes = [ctypes.c_int]
    for i in range(8):
        try:
            clear(i)
        except ValueError:  # no watcher there: CPython raises, as the guard's never does
            pass
    tables()


def tables_in_subinterpreter():
    # tables() run in a sub-interpreter (a legacy one: ctypes loads there),
    # after the main one allocated and ran on: the guard's code watcher
    # counts the main interpreter's code objects freed, never another's, so
    # no walk may be given again there unread
    free(alloc(4096))
    for _ in range(100000):
        pass  # between bytecodes: the guard's pending call runs
    try:
        import _interpreters as interpreters  # 3.13
        cid = interpreters.create("legacy")
    except ImportError:
        import _xxsubinterpreters as interpreters  # 3.12
        cid = interpreters.create(isolated=False)
    interpreters.run_string(cid, "import sys\nsys.argv = [%r, 'tables']\n"
                                 "exec(compile(open(%r).read(), %r, 'exec'), {'__name__': '__main__'})\n"
                                 % (__file__, __file__, __file__))
    interpreters.destroy(cid)


if __name__ == "__main__":
    globals()[sys.argv[1]]()
