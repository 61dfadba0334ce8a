"""jq.py REPORT.json EXPR - print eval(EXPR) over the JSON report `r`, for the
pools tests: e.g. '[(g["owner"], g.get("pool")) for g in r["live"]]'."""
import json
import sys

r = json.load(open(sys.argv[1]))
print(eval(sys.argv[2], {"r": r}))
