#!/usr/bin/env bash
# The A/A test of `compare` on runs measured in rounds, with no calibration: RUNS default
# `run`s back to back in a fresh store (default 5), every pair compared (10 for 5 runs).
# Every row called "B better" or "B worse" is a false alarm unless a measured cause claims
# it (the host itself moved between runs: steal, an effective CPU speed 3% apart, the host's
# memory). Prints, per pair, the rows called with the causes that claim them; the most calls
# in one pair that no cause claims; per family the median MDE of its rows over all pairs
# against the family's target for the hour (quiet, noisy or very noisy by the spread
# between the timers rows' rounds: the targets x1, x2, x3); per run its wall time (the
# budget promises 40 s when steal stays under 2% and 60 s whatever the host does), the
# share of its CPU time the hypervisor took (steal) and its peak memory; the load at start
# and end.
#
# Usage: bench/aa_compare.sh [--neighbour] [RUNS] [SUITES]   (TRUEBENCH_BIN: the binary)
#        bench/aa_compare.sh --docs DIR       (no measuring: DIR holds run documents *.json)
#   --neighbour  a CPU-bound neighbour in bursts beside the runs (one CPU busy for 0.5-3 s,
#                then idle 0.5-3 s, at random), standing in for a loud hour where the
#                hypervisor gives none; stopped when the script ends.
#   AA_KEEP=DIR  keeps the run documents there (for --docs DIR later).
set -euo pipefail
docs=
neighbour=0
while [ $# -gt 0 ]; do
  case "$1" in
    --docs) docs=$(cd "${2:?--docs needs a directory}" && pwd); shift 2 ;;
    --neighbour) neighbour=1; shift ;;
    -h | --help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) break ;;
  esac
done
runs=${1:-5}
suites=${2:-}
cd "$(dirname "$0")/.."
. bench/truebench_bin.sh
tmp=$(mktemp -d)
hog=
cleanup() {
  # The neighbour ends killed: its status is not the script's, and the documents are kept.
  if [ -n "$hog" ]; then kill "$hog" 2>/dev/null; wait "$hog" 2>/dev/null || true; fi
  [ -n "${AA_KEEP:-}" ] && mkdir -p "$AA_KEEP" && cp "$tmp"/run*.json "$AA_KEEP"/ 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
export TRUEBENCH_LOCK=$tmp/run.lock
# Steal and all ticks over every CPU, from /proc/stat's first line.
ticks() { awk '/^cpu /{ t = 0; for (i = 2; i <= NF; i++) t += $i; print $9, t; exit }' /proc/stat; }
if [ -n "$docs" ]; then
  i=0
  for f in "$docs"/*.json; do
    i=$((i + 1)); cp "$f" "$tmp/run$i.json"
  done
  runs=$i
  echo "documents of $docs: $runs runs"
else
  echo "host: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) CPUs, $(date -u '+%Y-%m-%d %H:%M UTC')"
  if [ "$neighbour" = 1 ]; then
    python3 bench/neighbour.py &
    hog=$!
    echo "a CPU-bound neighbour in bursts beside the runs (pid $hog)"
  fi
  echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  for i in $(seq 1 "$runs"); do
    read -r s0 t0 < <(ticks)
    /usr/bin/time -f "%e" -o "$tmp/time$i" "$tb" --db "$tmp/runs.db" run $suites --json >"$tmp/run$i.json" 2>/dev/null
    read -r s1 t1 < <(ticks)
    read -r wall <"$tmp/time$i"
    steal=$(awk -v s="$((s1 - s0))" -v t="$((t1 - t0))" 'BEGIN { printf "%.1f", (t > 0 ? 100 * s / t : 0) }')
    # The peak is the document's (its suites' largest): a run resets the kernel's high-water
    # mark per suite (/proc/self/clear_refs), so the process's own peak at exit (what
    # /usr/bin/time reports) is the last suite's.
    peak=$(python3 -c 'import json, sys; c = json.load(open(sys.argv[1])).get("suite_costs", []); p = [s["peak_rss_bytes"] for s in c if s.get("peak_rss_bytes")]; print(f"{max(p) / 2**20:.0f} MiB (its largest suite)" if p else "not in the document")' "$tmp/run$i.json")
    echo "run $i: ${wall} s, steal ${steal}% of the CPUs' time, peak RSS $peak"
  done
  echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
fi
python3 - "$tmp" "$tb" "$runs" <<'PY'
import json, os, subprocess, sys, itertools, statistics, collections
tmp, tb, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
docs = [json.load(open(f"{tmp}/run{i}.json")) for i in range(1, n + 1)]
sys.path.insert(0, "bench")
from families import family, CLAIMS, TARGETS
mdes = collections.defaultdict(list)
called_per_pair, unclaimed_per_pair = [], []
# Which hour this was: the spread between the rounds of the timers rows (σ of their log
# round medians, as each document holds it and its host-noise finding says it), the median
# over the rows of each run, then over the runs: under 1.5% quiet, 1.5-4% noisy, above 4%
# very noisy.
def timer_spread(d):
    s = [r["rounds"]["noise"]["sigma"] for r in d["results"]
         if family(r) == "timers" and ((r.get("rounds") or {}).get("noise") or {}).get("sigma") is not None]
    return statistics.median(s) if s else None
timer_spreads = [t for t in map(timer_spread, docs) if t is not None]
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
    unclaimed = 0
    print(f"pair {i+1}-{j+1}: {len(real)} called of {len(c['rows'])}; " +
          ", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
    for r in real:
        causes = [f"{e['cause']} {e['claim']}" for e in r["explanations"] if e["claim"] in CLAIMS]
        explained[bool(causes)] += 1
        unclaimed += not causes
        print(f"    {r['benchmark']} [{r['placement']}] {r['params']}: {r['why']} (B/A {r['ratio']:.3f}, "
              f"MDE {r['mde']*100:.1f}%); {', '.join(causes) or 'NO CAUSE'}")
    unclaimed_per_pair.append(unclaimed)
    if c["noise"].get("clock"):
        k = c["noise"]["clock"]
        print(f"    {c['noise']['per_cycle_rows']} rows per cycle: B's clock / A's {k['ratio']:.4f} (±{k['se']*100:.2f}%)")
    for r in c["rows"]:
        if r["verdict"] != "not comparable" and r.get("mde") is not None:
            mdes[family(r)].append(r["mde"])
print(f"\nrows called per pair: max {max(called_per_pair)}, total {sum(called_per_pair)} over {len(called_per_pair)} pairs"
      f" ({explained[True]} with a measured cause that claims them, {explained[False]} with none)")
print(f"calls no measured cause claims, per pair: max {max(unclaimed_per_pair)}, "
      f"pairs with more than one: {sum(u > 1 for u in unclaimed_per_pair)} of {len(unclaimed_per_pair)}")
if timer_spreads:
    h = statistics.median(timer_spreads)
    hour = "quiet" if h < 0.015 else "noisy" if h <= 0.04 else "very noisy"
    k = {"quiet": 1, "noisy": 2, "very noisy": 3}[hour]
    print(f"hour: {hour} (the timers rows' rounds {h*100:.1f}% apart, median over the runs: "
          + ", ".join(f"{t*100:.1f}%" for t in timer_spreads)
          + f"; quiet under 1.5%, noisy 1.5-4%, very noisy above): targets x{k}")
else:
    k = 1
    print("hour: not known (no timers rows measured in rounds)")
print("family | median MDE of its rows over all pairs | target | rows")
for fam, v in sorted(mdes.items()):
    t = TARGETS.get(fam)
    mark = "" if t is None else (" (met)" if statistics.median(v) <= k * t else " (not met)")
    print(f"{fam} | {statistics.median(v)*100:.1f}%{mark} | {'-' if t is None else f'{k*t*100:.0f}%'} | {len(v)}")
for k, d in enumerate(docs, 1):
    size = os.path.getsize(f"{tmp}/run{k}.json")
    print(f"run {k}: document {size/1000:.0f} KB as `run --json` wrote it")
PY
