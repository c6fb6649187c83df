#!/usr/bin/env bash
# The A/A test of `compare` with the full default suites: three back-to-back `run`s of
# the same command, each pair compared (1) in a database holding only the pair (no
# history: each run's rounds; documents without rounds cannot tell) and (2) against a calibration of this host made first
# (`calibrate --runs K`). Every row called "B better" or "B worse" is a false alarm; it
# prints, per pair, the rows called real, and how many of them a noisy-neighbour or
# steal-time finding marks as disturbed. Then, per row, the within-run 95% CI half-width
# (median over the three runs) beside the spread of the runs' medians. Run it under the
# measurement lock; figures are recorded in docs/measurements.md.
# Usage: flock /tmp/truebench-measure.lock bench/aa_calibrated.sh [CALIBRATION_RUNS] [SUITES]
#        bench/aa_calibrated.sh --docs DIR   (no measuring: DIR holds exported documents,
#        calibration-*.json or calib*.json tagged by `calibrate`, and the three back-to-back
#        runs aa-1..3.json or aa1..3.json, as tests/fixtures/aa/)
set -euo pipefail
docs=
if [ "${1:-}" = "--docs" ]; then
  docs=$(cd "${2:?--docs needs a directory}" && pwd)
  shift 2
fi
k=${1:-5}
suites=${2:-}
cd "$(dirname "$0")/.."
. bench/truebench_bin.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TRUEBENCH_LOCK=$tmp/run.lock
if [ -n "$docs" ]; then
  cal=$(ls "$docs"/calibration-*.json "$docs"/calib[0-9]*.json 2>/dev/null || true)
  k=$(echo "$cal" | grep -c . || true)
  i=0
  for f in $(ls "$docs"/aa-[0-9].json "$docs"/aa[0-9].json 2>/dev/null | head -3); do
    i=$((i+1)); cp "$f" "$tmp/run$i.json"
  done
  [ "$i" -eq 3 ] || { echo "error: $docs holds $i of the 3 runs aa-1..3.json" >&2; exit 2; }
  "$tb" --db "$tmp/all.db" import $cal "$tmp"/run[123].json > /dev/null
  echo "documents of $docs: $k calibration runs, 3 runs"
else
  echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  if [ "$k" -gt 0 ]; then
    "$tb" --db "$tmp/all.db" calibrate $suites --runs "$k" --json > "$tmp/calibration.json" 2>/dev/null
  fi
  for i in 1 2 3; do
    "$tb" --db "$tmp/all.db" run $suites --json > "$tmp/run$i.json" 2>/dev/null
  done
  echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
fi
python3 - "$tmp" "$tb" "$k" "$docs" <<'PY'
import json, subprocess, sys, os, itertools, math, statistics, glob
tmp, tb, k, docs = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
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
    for label, db in (("alone", alone), ("calibrated", f"{tmp}/all.db")):
        if label == "calibrated" and k == 0:
            continue
        c = compare(db, runs[i], runs[j])
        real = [r for r in c["rows"] if r["verdict"] in ("B better", "B worse")]
        dist = sum(1 for r in real if disturbed(runs[i], r) or disturbed(runs[j], r))
        print(f"pair {i+1}-{j+1} {label}: {c['summary'][0]}")
        print(f"  rows called real: {len(real)} ({dist} disturbed by a neighbour)")
        for r in real:
            print(f"    {r['benchmark']} [{r['placement']}] {r['params']}: B/A {r['ratio']:.3f}, MDE {r['mde']*100:.0f}% ({r['noise']['basis']})")
# Within-run CI half-width against the spread of the runs' medians, per row: the
# calibration's runs when there are documents of one, else the three runs.
spread_runs = runs
if docs:
    cal = sorted(glob.glob(f"{docs}/calibration-*.json") + glob.glob(f"{docs}/calib[0-9]*.json"))
    if len(cal) >= 3:
        spread_runs = [json.load(open(f)) for f in cal]
n = len(spread_runs)
print(f"\nrow | within-run 95% CI half-width (median of {n} runs) | spread of the {n} medians (sd of logs) | ratio")
def key(r): return (r["benchmark"], r["placement"]["name"], json.dumps(r["params"], sort_keys=True))
rows = {}
for d in spread_runs:
    for r in d["results"]:
        rows.setdefault(key(r), []).append(r)
for kk, rs in rows.items():
    if len(rs) < min(3, n): continue
    hw = statistics.median((math.log(r["stats"]["ci95_high"]) - math.log(r["stats"]["ci95_low"])) / 2 for r in rs)
    sd = statistics.stdev(math.log(r["stats"]["median"]) for r in rs)
    print(f"{kk[0]} [{kk[1]}] {kk[2]} | {hw*100:.1f}% | {sd*100:.1f}% | {sd/hw if hw > 0 else float('inf'):.1f}")
PY
