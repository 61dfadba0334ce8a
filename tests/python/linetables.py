# linetables.py OUT - every code object of a few stdlib modules (nested ones
# too), as "T firstlineno hex(co_linetable)" and then "A offset line" for each
# instruction, from CPython's own co_lines() (-1 for an instruction with no
# line, which the decoder must say so of): the expected answers
# for tests/unit/test_pylines.c. The first line, "V minor", says which table
# format follows (3.10's, or 3.11's and later).
import sys
import types

mods = ["asyncio.base_events", "json.decoder", "threading", "argparse", "dataclasses", "typing", "email.message"]
n = 0
with open(sys.argv[1], "w") as out:
    out.write("V %d\n" % sys.version_info.minor)
    def walk(co):
        global n
        out.write("T %d %s\n" % (co.co_firstlineno, co.co_linetable.hex() or "-"))
        for start, end, line in co.co_lines():
            for off in range(start, end, 2):
                out.write("A %d %d\n" % (off, -1 if line is None else line))
                n += 1
        for c in co.co_consts:
            if isinstance(c, types.CodeType):
                walk(c)
    for m in mods:
        mod = __import__(m, fromlist=["x"])
        src = open(mod.__file__, encoding="utf-8").read()
        walk(compile(src, mod.__file__, "exec"))
    # code generated with lines far past its first (as code generators set
    # them through ast): line deltas of up to 31 bits (3.10's table grows
    # with the delta: a small one there)
    import ast
    for line in [600000, 536870913, 2 ** 31 - 2] if sys.version_info >= (3, 11) else [600000]:
        tree = ast.parse("def gen():\n    x = 1\n    return x\n")
        for stmt in tree.body[0].body:
            for node in ast.walk(stmt):
                if hasattr(node, "lineno"):
                    node.lineno = node.end_lineno = line
        walk(compile(tree, "generated.py", "exec"))
print(n)
