#!/usr/bin/env python3
"""check-circles.py [SRC_DIR] - no call circle in the library spans more than
two files: the report model knows no format, and formats call the model's
facts (report/facts.c), never the other way round. A file calls another
when it calls a gmg_* function defined there; the circles are the strongly
connected components of that graph. Prints each circle of three files or
more and exits 1; prints one line and exits 0 when there is none.
`check-circles.py --self-test` proves that a circle of three is caught."""
import os
import re
import sys
import tempfile

DEF = re.compile(r'^[A-Za-z_][^\n;(]*?\b(gmg_[a-z0-9_]+)\([^;]*?\)\s*\{', re.M)
CALL = re.compile(r'\b(gmg_[a-z0-9_]+)\s*\(')


def circles(root):
    src, defs = {}, {}
    for d, _, fs in os.walk(root):
        for f in fs:
            if f.endswith('.c'):
                p = os.path.join(d, f)
                t = re.sub(r'/\*.*?\*/', '', open(p, encoding='utf-8', errors='replace').read(), flags=re.S)
                src[p] = t
                for m in DEF.finditer(t):
                    defs.setdefault(m.group(1), p)
    edges = {f: {defs[n] for n in set(CALL.findall(t)) if n in defs and defs[n] != f} for f, t in src.items()}
    index, low, on, stack, comps, n = {}, {}, set(), [], [], [0]

    def visit(v):  # Tarjan's strongly connected components, iteratively
        work = [(v, iter(sorted(edges[v])))]
        index[v] = low[v] = n[0]; n[0] += 1; stack.append(v); on.add(v)
        while work:
            u, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = n[0]; n[0] += 1; stack.append(w); on.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                    break
                if w in on:
                    low[u] = min(low[u], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[u])
                if low[u] == index[u]:
                    comp = []
                    while True:
                        w = stack.pop(); on.discard(w); comp.append(w)
                        if w == u:
                            break
                    comps.append(sorted(os.path.relpath(c, root) for c in comp))

    for v in sorted(src):
        if v not in index:
            visit(v)
    return [c for c in comps if len(c) > 2], len(src)


def main():
    if sys.argv[1:] == ['--self-test']:
        with tempfile.TemporaryDirectory() as t:
            for name, body in (('a', 'gmg_b();'), ('b', 'gmg_c();'), ('c', 'gmg_a();')):
                with open(os.path.join(t, name + '.c'), 'w') as f:
                    f.write('void gmg_%s(void)\n{\n    %s\n}\n' % (name, body))
            if not circles(t)[0]:
                print('check-circles: self-test FAILED (a -> b -> c -> a not caught)')
                return 1
            with open(os.path.join(t, 'c.c'), 'w') as f:
                f.write('void gmg_c(void)\n{\n}\n')
            if circles(t)[0]:
                print('check-circles: self-test FAILED (a chain taken for a circle)')
                return 1
        print('check-circles: self-test ok')
        return 0
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'src')
    bad, nfiles = circles(root)
    for c in bad:
        print('check-circles: a call circle of %d files: %s' % (len(c), ' '.join(c)))
    if bad:
        return 1
    print('check-circles: %d files, no call circle spans more than two' % nfiles)
    return 0


sys.exit(main())
