#!/usr/bin/env bash
# The run level of the memory rows whose loads go to memory: RUNS runs of SUITES (default 5
# runs of memory.latency,memory.bandwidth) back to back in a fresh store, then per row past
# the LLC (latency at 40 MiB and more, every bandwidth row) how far the runs' medians spread
# (sd of their logs), what their rounds predict for that spread (the root mean square of
# the runs' standard errors σ/√kept), the excess sqrt(max(0, sd² − se²)): what only separate
# runs sampled, which `compare` must add per run (`noise_model::run_sigma`), and the median σ
# between rounds; then per family the medians. Per run its wall time, steal and load.
#
# Usage: bench/run_level.sh [RUNS] [SUITES]      (TRUEBENCH_BIN: the binary)
#        bench/run_level.sh --docs DIR          (no measuring: DIR holds run documents *.json)
#   RUN_LEVEL_KEEP=DIR  keeps the run documents there.
set -euo pipefail
docs=
case "${1:-}" in
  --docs) docs=$(cd "${2:?--docs needs a directory}" && pwd); shift 2 ;;
  -h | --help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
runs=${1:-5}
suites=${2:-memory.latency,memory.bandwidth}
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
cleanup() {
  [ -n "${RUN_LEVEL_KEEP:-}" ] && mkdir -p "$RUN_LEVEL_KEEP" && cp "$tmp"/run*.json "$RUN_LEVEL_KEEP"/ 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
if [ -n "$docs" ]; then
  cp "$docs"/*.json "$tmp"/
  echo "documents of $docs"
else
  . bench/truebench_bin.sh
  export TRUEBENCH_LOCK=$tmp/run.lock
  # Steal and all ticks over every CPU, from /proc/stat's first line.
  ticks() { awk '/^cpu /{ t = 0; for (i = 2; i <= NF; i++) t += $i; print $9, t; exit }' /proc/stat; }
  echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  for i in $(seq 1 "$runs"); do
    read -r s0 t0 < <(ticks)
    start=$(date +%s.%N)
    "$tb" --db "$tmp/runs.db" run "$suites" --json >"$tmp/run$i.json" 2>/dev/null
    end=$(date +%s.%N)
    read -r s1 t1 < <(ticks)
    awk -v i="$i" -v a="$start" -v b="$end" -v s="$((s1 - s0))" -v t="$((t1 - t0))" -v l="$(cut -d' ' -f1 /proc/loadavg)" \
      'BEGIN { printf "run %d: %.1f s, steal %.1f%% of the CPUs'"'"' time, load %s\n", i, b - a, (t > 0 ? 100 * s / t : 0), l }'
  done
fi
python3 - "$tmp"/run*.json <<'PY'
import json, math, statistics, sys
from collections import defaultdict
rows = defaultdict(list)
for p in sys.argv[1:]:
    for r in json.load(open(p))["results"]:
        b, pr = r["benchmark"].split("@")[0], r["params"]
        if b == "memory.latency" and pr["size_bytes"] >= 40 << 20:
            key = (b, f"latency {pr['pages']} {pr['size_bytes'] / 2**20:.0f} MiB")
        elif b == "memory.bandwidth":
            key = (b, f"bandwidth {pr['kernel']} {pr['stores']} {pr['threads']}T {r['placement']['name']}")
        else:
            continue
        n = (r.get("rounds") or {}).get("noise")
        if n:
            fresh = bool(r.get("quality", {}).get("pages_per_round"))
            rows[key].append((math.log(r["stats"]["median"]), n["se"], n["sigma"], n["kept"], fresh))
print("| row | runs | pages per round | spread of run medians | rounds predict | excess | σ between rounds | kept rounds |")
print("|---|---|---|---|---|---|---|---|")
fam = defaultdict(list)
for key in sorted(rows):
    v = rows[key]
    if len(v) < 3:
        continue
    sd = statistics.stdev(x[0] for x in v)
    se = math.sqrt(statistics.mean(x[1] ** 2 for x in v))
    ex = math.sqrt(max(0.0, sd * sd - se * se))
    sig = statistics.median(x[2] for x in v)
    fresh = sum(x[4] for x in v)
    fam[key[0]].append((sd, se, ex, sig))
    print(f"| {key[1]} | {len(v)} | {fresh} of {len(v)} | {sd:.1%} | {se:.1%} | {ex:.1%} | {sig:.1%} | "
          f"{min(x[3] for x in v)}-{max(x[3] for x in v)} |")
for f, v in sorted(fam.items()):
    m = [statistics.median(x[i] for x in v) for i in range(4)]
    print(f"{f}: {len(v)} rows; medians: spread of run medians {m[0]:.1%}, rounds predict "
          f"{m[1]:.1%}, excess {m[2]:.1%}, σ between rounds {m[3]:.1%}")
PY
