#!/usr/bin/env python3
"""Within-run confidence interval against the spread between runs, per row.

Give it the exported documents (truebench export RUN -o f.json) of K separate runs of the
same suites on one host, in one or more labelled groups (e.g. before and after a change):

    bench/spread_table.py before=a1.json,a2.json,... after=b1.json,b2.json,...

Per row (benchmark, placement, params) and group it prints:
  - ci: the median over the runs of the row's within-run 95% CI half-width, in % of the
    median (what one run claims about its own median);
  - runs: the half-width a 95% interval of one run's median would need to cover the spread
    between runs, 1.96 x the standard deviation of the runs' log medians, in %;
  - x: runs / ci. Above 1, the within-run interval is narrower than the run-to-run spread:
    a difference between two runs can exceed both intervals with nothing changed.
Then a summary per benchmark (rows, median x, rows with x > 1). Markdown tables.
"""
import json
import math
import statistics
import sys
from collections import defaultdict


def key(r):
    return (r["benchmark"].split("@")[0], r["placement"]["name"],
            ",".join(f"{k}={v}" for k, v in sorted(r["params"].items())))


def load(paths):
    rows = defaultdict(list)  # key -> [(median, ci half-width %)]
    for p in paths:
        for r in json.load(open(p))["results"]:
            s = r["stats"]
            if not s.get("median") or s["median"] <= 0:
                continue
            half = (s["ci95_high"] - s["ci95_low"]) / 2 / s["median"] * 100
            rows[key(r)].append((s["median"], half))
    return rows


def figures(v):
    if len(v) < 3:
        return None
    logs = [math.log(m) for m, _ in v]
    runs = 1.96 * statistics.stdev(logs) * 100
    ci = statistics.median(h for _, h in v)
    return ci, runs, (runs / ci if ci > 0 else math.inf), len(v)


def main(argv):
    if not argv or any("=" not in a for a in argv):
        sys.exit("usage: spread_table.py LABEL=DOC,DOC,... [LABEL=DOC,...]")
    groups = [(a.split("=", 1)[0], load(a.split("=", 1)[1].split(","))) for a in argv]
    keys = sorted(set().union(*(g.keys() for _, g in groups)))
    head = "| row | " + " | ".join(f"{l}: ci % | {l}: runs % | {l}: x" for l, _ in groups) + " |"
    print(head)
    print("|" + "---|" * (1 + 3 * len(groups)))
    per_bench = defaultdict(lambda: defaultdict(list))
    for k in keys:
        cells = []
        for label, g in groups:
            f = figures(g.get(k, []))
            if f is None:
                cells += ["", "", ""]
                continue
            ci, runs, x, n = f
            per_bench[k[0]][label].append(x)
            cells += [f"{ci:.1f}", f"{runs:.1f}", f"{x:.1f}"]
        print(f"| {k[0]} [{k[1]}] {k[2]} | " + " | ".join(cells) + " |")
    print()
    print("| benchmark | " + " | ".join(f"{l}: rows | {l}: median x | {l}: rows x > 1" for l, _ in groups) + " |")
    print("|" + "---|" * (1 + 3 * len(groups)))
    for b in sorted(per_bench):
        cells = []
        for label, _ in groups:
            xs = per_bench[b].get(label, [])
            if not xs:
                cells += ["", "", ""]
                continue
            cells += [str(len(xs)), f"{statistics.median(xs):.1f}", str(sum(1 for x in xs if x > 1))]
        print(f"| {b} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
