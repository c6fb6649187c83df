#!/usr/bin/env bash
# Pipe round trip on one CPU: `perf bench sched pipe` (pinned with taskset) against
# truebench ctx.pipe@1 (placement same-cpu, process mode), alternating in one run so both
# see the same machine state. Prints every figure, both medians and the ratio.
# Usage: bench/peers/ctx_pipe_vs_perf.sh [ROUNDS] [CPU]   (defaults: 5 rounds, CPU 0)
set -euo pipefail
rounds=${1:-5}
cpu=${2:-0}
cd "$(dirname "$0")/../.."

if ! command -v perf >/dev/null 2>&1 || ! perf bench sched pipe -l 1000 >/dev/null 2>&1; then
  echo "installing linux-perf..." >&2
  apt-get update -qq && apt-get install -y -qq linux-perf >/dev/null
fi
. bench/truebench_bin.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TRUEBENCH_DB="$tmp/peer.db" TRUEBENCH_LOCK="$tmp/lock"

median() { sort -g | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }

: > "$tmp/perf" ; : > "$tmp/tb"
for i in $(seq "$rounds"); do
  # perf: one timed run of 200000 round trips, including its fork; usecs/op -> ns
  taskset -c "$cpu" perf bench sched pipe -l 200000 2>/dev/null \
    | awk '/usecs\/op/ {printf "%.1f\n", $1 * 1000}' >> "$tmp/perf"
  # truebench: median of 10 batches of >= 20 ms, both tasks pinned to $cpu
  "$tb" run ctx --cpus "$cpu" --mode process --samples 10 --json \
    | python3 -c 'import json,sys; d=json.load(sys.stdin); print("%.1f" % [r for r in d["results"] if r["placement"]["name"]=="cpus"][0]["stats"]["median"])' >> "$tmp/tb"
  echo "round $i: perf $(tail -1 "$tmp/perf") ns, truebench $(tail -1 "$tmp/tb") ns" >&2
done
p=$(median < "$tmp/perf")
t=$(median < "$tmp/tb")
echo "machine: $(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) CPUs"
echo "perf bench sched pipe (taskset -c $cpu), ns per round trip: $(paste -sd' ' "$tmp/perf")  median $p"
echo "truebench ctx.pipe@1 cpus [$cpu,$cpu] process, ns per round trip: $(paste -sd' ' "$tmp/tb")  median $t"
awk -v t="$t" -v p="$p" 'BEGIN {r = t / p; printf "ratio truebench/perf: %.3f (%s)\n", r, (r >= 0.9 && r <= 1.1) ? "within ±10%" : "OUTSIDE ±10%"}'
