#!/usr/bin/env bash
# The A/A test of `compare` with the full default suites: three back-to-back `run`s of
# the same command, each pair compared (1) in a database holding only the pair (no
# history: the conservative floor) and (2) against a calibration of this host made first
# (`calibrate --runs K`). Every row called "B better" or "B worse" is a false alarm; it
# prints, per pair, the rows called real, and how many of them a noisy-neighbour or
# steal-time finding marks as disturbed. Then, per row, the within-run 95% CI half-width
# (median over the three runs) beside the spread of the runs' medians. Run it under the
# measurement lock; figures are recorded in docs/methodology.md.
# Usage: flock /tmp/truebench-measure.lock bench/aa_compare.sh [CALIBRATION_RUNS] [SUITES]
set -euo pipefail
k=${1:-5}
suites=${2:-}
cd "$(dirname "$0")/.."
cargo build --release --quiet
tb=$PWD/target/release/truebench
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TRUEBENCH_LOCK=$tmp/run.lock
echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ "$k" -gt 0 ]; then
  "$tb" --db "$tmp/all.db" calibrate $suites --runs "$k" --json > "$tmp/calibration.json" 2>/dev/null
fi
for i in 1 2 3; do
  "$tb" --db "$tmp/all.db" run $suites --json > "$tmp/run$i.json" 2>/dev/null
done
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$tmp" "$tb" "$k" <<'PY'
import json, subprocess, sys, os, itertools, math, statistics
tmp, tb, k = sys.argv[1], sys.argv[2], int(sys.argv[3])
runs = [json.load(open(f"{tmp}/run{i}.json")) for i in (1, 2, 3)]
def disturbed(doc, r):
    return any(x["benchmark"] == r["benchmark"] and x["placement"]["name"] == r["placement"]
               and any(f["id"] in ("noisy-neighbour", "steal-time") for f in x["findings"])
               for x in doc["results"])
def compare(db, a, b):
    out = subprocess.run([tb, "--db", db, "compare", a["run_id"], b["run_id"], "--json"],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)
for (i, j) in itertools.combinations(range(3), 2):
    alone = f"{tmp}/pair{i}{j}.db"
    for d in (runs[i], runs[j]):
        f = f"{tmp}/doc.json"; json.dump(d, open(f, "w"))
        subprocess.run([tb, "--db", alone, "import", f], capture_output=True, check=True)
    for label, db in (("floor", alone), ("calibrated", f"{tmp}/all.db")):
        if label == "calibrated" and k == 0:
            continue
        c = compare(db, runs[i], runs[j])
        real = [r for r in c["rows"] if r["verdict"] in ("B better", "B worse")]
        dist = sum(1 for r in real if disturbed(runs[i], r) or disturbed(runs[j], r))
        print(f"pair {i+1}-{j+1} {label}: {c['summary'][0]}")
        print(f"  rows called real: {len(real)} ({dist} disturbed by a neighbour)")
        for r in real:
            print(f"    {r['benchmark']} [{r['placement']}] {r['params']}: B/A {r['ratio']:.3f}, MDE {r['mde']*100:.0f}% ({r['noise']['basis']})")
# Within-run CI half-width against the spread of the 3 runs' medians, per row.
print("\nrow | within-run CI half-width (median of 3 runs) | spread of the 3 medians (sd of logs) | ratio")
def key(r): return (r["benchmark"], r["placement"]["name"], json.dumps(r["params"], sort_keys=True))
rows = {}
for d in runs:
    for r in d["results"]:
        rows.setdefault(key(r), []).append(r)
for kk, rs in rows.items():
    if len(rs) < 3: continue
    hw = statistics.median((math.log(r["stats"]["ci95_high"]) - math.log(r["stats"]["ci95_low"])) / 2 for r in rs)
    sd = statistics.stdev(math.log(r["stats"]["median"]) for r in rs)
    print(f"{kk[0]} [{kk[1]}] {kk[2]} | {hw*100:.1f}% | {sd*100:.1f}% | {sd/hw if hw > 0 else float('inf'):.1f}")
PY
