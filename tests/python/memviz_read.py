# memviz_read.py PICKLE REPORT.json - reads a memviz snapshot the way
# PyTorch's memory_viz page does (its own small unpickler: only the opcodes
# it knows, protocols 2 to 4, its memo), lays the blocks out as its
# annotate step does (each block's address is the segment's plus the sizes
# before it), and checks the snapshot field by field against the JSON
# report of the same run. Also reads it with Python's pickle (no torch
# needed): both must agree. Prints one line and exits 0, or raises.
import json
import pickle
import struct
import sys

OPS = {  # memory_viz's opcodes, and nothing else
    0x80: "PROTO", 0x95: "FRAME", ord("}"): "EMPTY_DICT", ord("]"): "EMPTY_LIST", ord("("): "MARK",
    ord("u"): "SETITEMS", ord("e"): "APPENDS", ord("a"): "APPEND", ord("X"): "BINUNICODE",
    0x8C: "SHORT_BINUNICODE", ord("J"): "BININT", ord("K"): "BININT1", ord("M"): "BININT2", 0x8A: "LONG1",
    ord("N"): "NONE", 0x88: "NEWTRUE", 0x89: "NEWFALSE", 0x94: "MEMOIZE", ord("q"): "BINPUT",
    ord("r"): "LONG_BINPUT", ord("h"): "BINGET", ord("j"): "LONG_BINGET", ord(")"): "EMPTY_TUPLE",
    0x85: "TUPLE1", 0x86: "TUPLE2", 0x87: "TUPLE3", ord("t"): "TUPLE", ord("l"): "LIST", ord("d"): "DICT",
    ord("s"): "SETITEM", ord("G"): "BINFLOAT", ord("."): "STOP",
}


def unpickle(buf):
    stack, marks, memo = [], [], {}
    off, memo_id = 0, 0

    def u4():
        nonlocal off
        v = struct.unpack_from("<I", buf, off)[0]
        off += 4
        return v

    while True:
        code = buf[off]
        off += 1
        name = OPS.get(code)
        if name is None:
            raise ValueError("memory_viz has no opcode %#x (at byte %d)" % (code, off - 1))
        if name == "PROTO":
            if not 2 <= buf[off] <= 4:
                raise ValueError("protocol %d: memory_viz reads 2 to 4" % buf[off])
            off += 1
        elif name == "FRAME":
            off += 8
        elif name == "EMPTY_DICT":
            stack.append({})
        elif name == "EMPTY_LIST":
            stack.append([])
        elif name == "MARK":
            marks.append(len(stack))
        elif name in ("SETITEMS", "DICT"):
            m = marks.pop()
            items = stack[m:]
            del stack[m:]
            d = stack[-1] if name == "SETITEMS" else {}
            for i in range(0, len(items), 2):
                d[items[i]] = items[i + 1]
            if name == "DICT":
                stack.append(d)
        elif name == "APPENDS":
            m = marks.pop()
            items = stack[m:]
            del stack[m:]
            stack[-1].extend(items)
        elif name == "APPEND":
            v = stack.pop()
            stack[-1].append(v)
        elif name == "BINUNICODE":
            n = u4()
            stack.append(bytes(buf[off:off + n]).decode("utf-8"))
            off += n
        elif name == "SHORT_BINUNICODE":
            n = buf[off]
            off += 1
            stack.append(bytes(buf[off:off + n]).decode("utf-8"))
            off += n
        elif name == "BININT":
            stack.append(struct.unpack_from("<i", buf, off)[0])
            off += 4
        elif name == "BININT1":
            stack.append(buf[off])
            off += 1
        elif name == "BININT2":
            stack.append(buf[off] | buf[off + 1] << 8)
            off += 2
        elif name == "LONG1":
            n = buf[off]
            off += 1
            stack.append(int.from_bytes(buf[off:off + n], "little", signed=True))
            off += n
        elif name == "NONE":
            stack.append(None)
        elif name in ("NEWTRUE", "NEWFALSE"):
            stack.append(name == "NEWTRUE")
        elif name == "MEMOIZE":
            memo[memo_id] = stack[-1]
            memo_id += 1
        elif name == "BINPUT":
            memo[buf[off]] = stack[-1]
            off += 1
        elif name == "LONG_BINPUT":
            memo[u4()] = stack[-1]
        elif name == "BINGET":
            stack.append(memo[buf[off]])
            off += 1
        elif name == "LONG_BINGET":
            stack.append(memo[u4()])
        elif name in ("TUPLE1", "TUPLE2", "TUPLE3"):
            k = {"TUPLE1": 1, "TUPLE2": 2, "TUPLE3": 3}[name]
            items = tuple(stack[-k:])
            del stack[-k:]
            stack.append(items)
        elif name == "STOP":
            return stack.pop()
        else:
            raise ValueError("unexpected " + name)


def no_category(x):
    if isinstance(x, dict):
        assert "category" not in x, "a 'category' key (memory_viz chokes on it)"
        for v in x.values():
            no_category(v)
    elif isinstance(x, list):
        for v in x:
            no_category(v)


buf = open(sys.argv[1], "rb").read()
rep = json.load(open(sys.argv[2]))
snap = unpickle(buf)
assert snap == pickle.loads(buf), "memory_viz's reading and Python's differ"
no_category(snap)
assert set(snap) >= {"segments", "device_traces", "allocator_settings"}, snap.keys()
assert len(snap["device_traces"]) == len(rep["devices"]), "device_traces: one list per device"
segs = snap["segments"]
order = [(s["device"], s["address"]) for s in segs]
assert order == sorted(order), "segments not by device, then address"
checked = 0
for f in rep["fragmentation"]:
    # the driver allocator's allocations (fragmentation's), and the NVTX
    # heaps over mapped physical memory (expandable, as PyTorch's are)
    alloc = [s for s in segs if s["device"] == f["device"] and not s["is_expandable"]]
    dev = [s for s in segs if s["device"] == f["device"]]
    assert len(alloc) == f["live_allocations"], (len(alloc), f["live_allocations"])
    assert sum(s["requested_size"] for s in alloc) == f["requested_bytes"]
    # what the driver holds: a pitched allocation's pitch x height, not its width x height
    assert sum(s["total_size"] for s in alloc) == f["granted_bytes"], (sum(s["total_size"] for s in alloc), f["granted_bytes"])
    start = int(f["span_start"], 16)
    if f["live_allocations"] and not f["map_merged"]:
        assert sorted(s["address"] for s in alloc) == sorted(start + m[0] for m in f["map"]), "addresses"
    for s in dev:
        assert s["stream"] == 0 and s["segment_pool_id"] == (0, 0) and s["total_size"] >= s["requested_size"]
        addr = s["address"]
        active = 0
        for b in s["blocks"]:  # memory_viz's layout: blocks tile their segment
            # the allocation itself, or the NVTX regions in it and the room between them (no frames)
            assert b["address"] == addr and b["state"] in ("active_allocated", "inactive")
            assert b["requested_size"] <= b["size"]
            assert b["state"] == "active_allocated" or (not b["frames"] and b["requested_size"] == 0)
            active += b["size"] if b["state"] == "active_allocated" else 0
            addr += b["size"]
            for fr in b["frames"]:
                assert set(fr) == {"filename", "line", "name"} and isinstance(fr["line"], int)
        assert addr == s["address"] + s["total_size"], "blocks do not tile the segment"
        assert active == s["allocated_size"] == s["active_size"], "allocated_size is the active blocks'"
        # the allocation's group in the JSON report: same device, its size at
        # least, the same innermost frame (the JSON report lists the Python
        # frames first, the snapshot the native ones, as PyTorch's does)
        def innermost(frames):
            nat = [f for f in frames if f["lang"] == "native"]
            f = (nat or frames)[0]
            if f["lang"] == "native" and not f["function"]:
                return (f["module"] or "??") + "+" + f["offset"], f["line"]
            return f["function"], f["line"]
        groups = [g for g in rep["live"] if g["device"] == s["device"] and g["bytes"] >= s["requested_size"]
                  and g["frames"] and s["frames"] and innermost(g["frames"]) == (s["frames"][0]["name"], s["frames"][0]["line"])]
        assert groups, "no group of the JSON report for the segment at %#x" % s["address"]
        checked += 1
print("memviz ok: %d segments, each a JSON group's allocation, read as memory_viz reads it" % checked)
