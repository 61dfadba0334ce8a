"""jsoncheck.py - checks on the guard's JSON reports for tests/gpu/run.sh.

  group BYTES COUNT FUNCTION REPORT...  a live group of BYTES in COUNT allocations whose
                                     stack names FUNCTION (Python or native), in any REPORT
  same REPORT1 REPORT2               the same live bytes in both (and some)
  api REPORT API MIN                 live groups of API hold at least MIN bytes
  peak REPORT MAX                    device 0's peak is above 0 and at most MAX
Prints what it saw; exits 1 when the check fails, 2 when a report is unreadable.
"""
import json
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
        a, b = load(argv[2])["totals"]["live_bytes"], load(argv[3])["totals"]["live_bytes"]
        print(f"live bytes {a} then {b}")
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
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
