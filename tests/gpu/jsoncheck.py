"""jsoncheck.py - checks on the guard's JSON reports for tests/gpu/run.sh.

  group BYTES COUNT FUNCTION REPORT...  a live group of BYTES in COUNT allocations whose
                                     stack names FUNCTION (Python or native), in any REPORT
  same REPORT1 REPORT2               the same live and retained bytes in both (and some)
  api REPORT API MIN                 live groups of API hold at least MIN bytes
  peak REPORT MAX                    device 0's peak is above 0 and at most MAX
  oompeak REPORT FUNCTION MIN        device 0 saw the driver's out of memory, and at its peak
                                     groups naming FUNCTION held at least MIN bytes
  pool REPORT OWNER MIN [noleak]     groups retained by pool OWNER hold at least MIN bytes (and
                                     no group is a leak)
  leakline REPORT BYTES FUNCTION LINE  a leak (no pool) of BYTES whose Python frame FUNCTION is at LINE
  owners REPORT OWNER...             the summary by owner names every OWNER
  memviz GUARD.pickle TORCH.pickle   every segment of PyTorch's snapshot is a segment of the
                                     guard's memviz file taken at the same moment, same size
Prints what it saw; exits 1 when the check fails, 2 when a report is unreadable.
"""
import json
import pickle
import sys


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        print(f"no report: {e}")
        sys.exit(2)


def names(group):
    return [fr.get("function") or "" for fr in group.get("frames", [])]


def main(argv):
    what = argv[1]
    if what == "group":
        size, count, fn = int(argv[2]), int(argv[3]), argv[4]
        groups = [g for path in argv[5:] for g in load(path)["live"]]
        for g in groups:
            if g["bytes"] == size and g["count"] == count:
                py = [f"{fr['function']} {fr['file'].rsplit('/', 1)[-1]}:{fr['line']}" for fr in g["frames"]
                      if fr.get("lang") == "python"][:2]
                ok = any(n == fn or n.endswith("." + fn) or n.startswith(fn + "(") for n in names(g))
                print(f"{size} bytes in {count} ({g['api']}); python {py or 'none'}; {fn} {'named' if ok else 'NOT named'}")
                return 0 if ok else 1
        print(f"no group of {size} bytes in {count}; groups: " +
              ", ".join(f"{g['bytes']}/{g['count']} {g['api']}" for g in groups[:6]))
        return 1
    if what == "same":
        ta, tb = load(argv[2])["totals"], load(argv[3])["totals"]
        a, b = ta["live_bytes"] + ta["retained_bytes"], tb["live_bytes"] + tb["retained_bytes"]
        print(f"live and retained bytes {a} then {b}")
        return 0 if a == b and a > 0 else 1
    if what == "api":
        r, api, least = load(argv[2]), argv[3], int(argv[4])
        held = sum(g["bytes"] for g in r["live"] if g["api"] == api)
        print(f"{api} live {held} bytes; apis " + ", ".join(sorted({g["api"] for g in r["live"]})))
        return 0 if held >= least else 1
    if what == "peak":
        r, most = load(argv[2]), int(argv[3])
        d = r["devices"][0] if r["devices"] else {}
        print(f"peak {d.get('peak')} limit {d.get('limit')} live {r['totals']['live_bytes']}")
        return 0 if 0 < d.get("peak", 0) <= most else 1
    if what == "oompeak":
        r, fn, least = load(argv[2]), argv[3], int(argv[4])
        d = r["devices"][0] if r["devices"] else {}
        peak = next((p for p in r.get("at_peak", []) if p["device"] == 0), {"bytes": 0, "groups": []})
        held = sum(g["bytes"] for g in peak["groups"] if any(n == fn or n.endswith("." + fn) for n in names(g)))
        print(f"driver_oom {d.get('driver_oom')} peak {d.get('peak')}; at the peak {peak['bytes']} bytes, "
              f"{held} under {fn} in {len(peak['groups'])} groups")
        return 0 if d.get("driver_oom", 0) > 0 and held >= least else 1
    if what == "pool":
        r, owner, least = load(argv[2]), argv[3], int(argv[4])
        pools = {}
        for g in r["live"]:
            if g.get("pool"):
                pools[g["pool"]] = pools.get(g["pool"], 0) + g["bytes"]
        leaks = [f"{g['bytes']} {g['api']} owner {g.get('owner')}" for g in r["live"] if not g.get("pool")]
        print(f"retained by pool {pools or 'none'}; leaks {len(leaks)}: {', '.join(leaks[:5]) or 'none'}")
        return 0 if pools.get(owner, 0) >= least and (argv[5:] != ["noleak"] or not leaks) else 1
    if what == "leakline":
        r, size, fn, line = load(argv[2]), int(argv[3]), argv[4], int(argv[5])
        for g in r["live"]:
            if g.get("pool") or g["bytes"] != size:
                continue
            py = [(fr.get("function"), fr.get("line")) for fr in g["frames"] if fr.get("lang") == "python"]
            print(f"leak {size} bytes ({g['api']}, owner {g.get('owner')}); python frames {py[:3]}")
            return 0 if (fn, line) in py else 1
        print("no such leak; leaks: " + ", ".join(f"{g['bytes']} {g['api']}" for g in r["live"] if not g.get("pool")))
        return 1
    if what == "owners":
        r, want = load(argv[2]), argv[3:]
        have = {o["owner"]: o for o in r.get("owners", [])}
        print("owners " + "; ".join(f"{k} {o['bytes']} bytes in {o['count']}, retained {o['retained_bytes']}"
                                    for k, o in have.items()))
        return 0 if all(w in have for w in want) else 1
    if what == "memviz":
        try:
            with open(argv[2], "rb") as f:
                ours = pickle.load(f)
            with open(argv[3], "rb") as f:
                theirs = pickle.load(f)
        except (OSError, pickle.UnpicklingError, EOFError) as e:
            print(f"unreadable: {e}")
            return 2
        mine = {s["address"]: s["total_size"] for s in ours["segments"]}
        segs = theirs["segments"] if isinstance(theirs, dict) else theirs
        same = [s for s in segs if mine.get(s["address"]) == s["total_size"]]
        other = [f"{s['address']:#x}/{s['total_size']}" for s in segs if mine.get(s["address"]) != s["total_size"]]
        extra = len(mine) - len(same)
        print(f"PyTorch {len(segs)} segments, the guard {len(mine)}; {len(same)} same address and size; "
              f"PyTorch's not in the guard's: {other[:4] or 'none'}; the guard's beyond PyTorch's: {extra}")
        return 0 if segs and len(same) == len(segs) else 1
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
