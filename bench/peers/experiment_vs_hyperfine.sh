#!/usr/bin/env bash
# `truebench experiment` against hyperfine on the same CPU-bound command, alternating in
# one run so both see the same machine: each side runs the command N times (no shell
# around it: hyperfine -N) and reports its mean wall time per run. The harness cost is the
# difference; the claim is that truebench's launch under a policy (process group, death
# signal, wait4, perf migration counter) adds under 1% to the measured wall time.
# Prints every figure, the medians of the per-round means, the ratio and the verdict.
# Usage: bench/peers/experiment_vs_hyperfine.sh [ROUNDS] [RUNS]   (defaults: 5, 10)
set -euo pipefail
rounds=${1:-5}
runs=${2:-10}
cd "$(dirname "$0")/../.."
command -v hyperfine >/dev/null || { echo "hyperfine is needed (apt-get install hyperfine)" >&2; exit 2; }
. bench/truebench_bin.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TRUEBENCH_DB=$tmp/results.db TRUEBENCH_LOCK=$tmp/run.lock
# About 0.2 s of single-threaded integer work: long enough that 1% is 2 ms.
cmd=(python3 -c 'sum(i * i for i in range(1500000))')

median() { sort -g | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }
for i in $(seq "$rounds"); do
  "$tb" experiment --runs "$runs" --json -- "${cmd[@]}" 2>/dev/null |
    python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["experiment"]["variants"][0]["makespan_s"]["mean"])' >> "$tmp/tb"
  hyperfine -N --runs "$runs" --warmup 0 --export-json "$tmp/h.json" -- "python3 -c '${cmd[2]}'" >/dev/null 2>&1
  python3 -c 'import json; print(json.load(open("'"$tmp"'/h.json"))["results"][0]["mean"])' >> "$tmp/hf"
done
t=$(median < "$tmp/tb"); h=$(median < "$tmp/hf")
echo "machine: $(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); $runs runs per side per round"
echo "truebench experiment, mean wall s per round: $(paste -sd' ' "$tmp/tb")  median $t"
echo "hyperfine -N, mean wall s per round: $(paste -sd' ' "$tmp/hf")  median $h"
awk -v t="$t" -v h="$h" 'BEGIN {
  printf "ratio truebench/hyperfine: %.4f\n", t / h
  printf "harness adds under 1%%: %s\n", (t / h < 1.01) ? "yes" : "NO"
  exit (t / h < 1.01) ? 0 : 1 }'
