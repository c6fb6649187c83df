#!/usr/bin/env bash
# The A/A test of `compare` on runs measured in rounds, with no calibration: RUNS default
# `run`s back to back in a fresh store (default 5), every pair compared (10 for 5 runs).
# Every row called "B better" or "B worse" is a false alarm unless a measured cause claims
# it (the machine itself moved between runs: an effective CPU speed 3% apart is real).
# Prints, per pair, the rows called with the causes that claim them and the verdict
# counts, then per family the median MDE of its rows over all pairs, and the wall time and
# peak memory of each run. Run it on a quiet machine and say
# the load (it prints the load average at start and end).
# Usage: bench/aa_compare.sh [RUNS] [SUITES]      (TRUEBENCH_BIN: the binary to use)
#        bench/aa_compare.sh --docs DIR            (no measuring: DIR holds run documents *.json)
set -euo pipefail
docs=
if [ "${1:-}" = "--docs" ]; then
  docs=$(cd "${2:?--docs needs a directory}" && pwd)
  shift 2
fi
runs=${1:-5}
suites=${2:-}
cd "$(dirname "$0")/.."
. bench/truebench_bin.sh
tmp=$(mktemp -d)
# AA_KEEP=DIR keeps the run documents there (for `--docs DIR` later).
trap '[ -n "${AA_KEEP:-}" ] && mkdir -p "$AA_KEEP" && cp "$tmp"/run*.json "$AA_KEEP"/ 2>/dev/null; rm -rf "$tmp"' EXIT
export TRUEBENCH_LOCK=$tmp/run.lock
if [ -n "$docs" ]; then
  i=0
  for f in "$docs"/*.json; do
    i=$((i + 1)); cp "$f" "$tmp/run$i.json"
  done
  runs=$i
  echo "documents of $docs: $runs runs"
else
  echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  for i in $(seq 1 "$runs"); do
    /usr/bin/time -f "%e %M" -o "$tmp/time$i" "$tb" --db "$tmp/runs.db" run $suites --json >"$tmp/run$i.json" 2>/dev/null
    read -r wall kb <"$tmp/time$i"
    echo "run $i: ${wall} s, peak RSS $((kb / 1024)) MiB"
  done
  echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
fi
python3 - "$tmp" "$tb" "$runs" <<'PY'
import json, subprocess, sys, itertools, statistics, collections
tmp, tb, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
docs = [json.load(open(f"{tmp}/run{i}.json")) for i in range(1, n + 1)]
mdes = collections.defaultdict(list)
def family(r):
    b = r["benchmark"].split("@")[0]
    if b.startswith("ctx."):
        return "ctx same-cpu" if r["placement"] == "same-cpu" else "ctx (other placements)"
    if b == "timers.clock-read":
        return "timers"
    return b
called_per_pair = []
explained = collections.Counter()
for i, j in itertools.combinations(range(n), 2):
    db = f"{tmp}/pair{i}{j}.db"
    for d in (docs[i], docs[j]):
        f = f"{tmp}/doc.json"; json.dump(d, open(f, "w"))
        subprocess.run([tb, "--db", db, "import", f], capture_output=True, check=True)
    c = json.loads(subprocess.run([tb, "--db", db, "compare", docs[i]["run_id"], docs[j]["run_id"], "--json"],
                                  capture_output=True, text=True, check=True).stdout)
    counts = collections.Counter(r["verdict"] for r in c["rows"])
    why_not = collections.Counter(r["why"] for r in c["rows"] if r["verdict"] == "not comparable")
    for w, k in why_not.most_common(3):
        print(f"    not comparable ({k} rows): {w}")
    real = [r for r in c["rows"] if r["verdict"] in ("B better", "B worse")]
    called_per_pair.append(len(real))
    print(f"pair {i+1}-{j+1}: {len(real)} called of {len(c['rows'])}; " +
          ", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
    for r in real:
        causes = [f"{e['cause']} {e['claim']}" for e in r["explanations"]
                  if e["claim"] in ("explains", "partly", "contributes")]
        explained[bool(causes)] += 1
        print(f"    {r['benchmark']} [{r['placement']}] {r['params']}: {r['why']} (B/A {r['ratio']:.3f}, "
              f"MDE {r['mde']*100:.1f}%); {', '.join(causes) or 'no cause'}")
    if c["noise"].get("clock"):
        k = c["noise"]["clock"]
        print(f"    {c['noise']['per_cycle_rows']} rows per cycle: B's clock / A's {k['ratio']:.4f} (±{k['se']*100:.2f}%)")
    for r in c["rows"]:
        if r["verdict"] != "not comparable":
            mdes[family(r)].append(r["mde"])
print(f"\nrows called per pair: max {max(called_per_pair)}, total {sum(called_per_pair)} over {len(called_per_pair)} pairs"
      f" ({explained[True]} with a measured cause that claims them, {explained[False]} with none)")
print("family | median MDE of its rows over all pairs | rows")
for fam, v in sorted(mdes.items()):
    print(f"{fam} | {statistics.median(v)*100:.1f}% | {len(v)}")
PY
