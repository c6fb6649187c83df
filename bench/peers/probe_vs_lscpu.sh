#!/usr/bin/env bash
# Probe time on the largest fixture tree (2 x 64 cores x 2 threads, 256 CPUs, 4 nodes):
# `truebench probe --root TREE --json` against `lscpu --sysroot TREE` (its summary, and
# its per-CPU table -p, which reads the same topology and cache files), alternating in one
# run so both see the same machine state. Each figure is the wall time of one whole
# process (start, read, print). Prints every figure, the medians, the ratio, and whether
# truebench stays under 1 s.
# Usage: bench/peers/probe_vs_lscpu.sh [ROUNDS] [TREE]   (defaults: 11, epyc-256)
set -euo pipefail
rounds=${1:-11}
tree=tests/fixtures/sysroots/${2:-epyc-256}
cd "$(dirname "$0")/../.."
command -v lscpu >/dev/null || { echo "lscpu (util-linux) is needed" >&2; exit 2; }
. bench/truebench_bin.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

median() { sort -g | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }
# Wall milliseconds of one run of the command.
ms() { local t0 t1; t0=$(date +%s%N); "$@" >/dev/null; t1=$(date +%s%N); echo "scale=2; ($t1 - $t0) / 1000000" | bc; }

"$tb" probe --root "$tree" --json >/dev/null   # warm the page cache for both
lscpu --sysroot "$tree" >/dev/null
for i in $(seq "$rounds"); do
  ms "$tb" probe --root "$tree" --json >> "$tmp/tb"
  ms lscpu --sysroot "$tree" >> "$tmp/lscpu"
  ms lscpu --sysroot "$tree" -p=CPU,CORE,SOCKET,NODE,CACHE >> "$tmp/lscpu_p"
done
t=$(median < "$tmp/tb"); l=$(median < "$tmp/lscpu"); p=$(median < "$tmp/lscpu_p")
cpus=$("$tb" probe --root "$tree" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["topology"]["threads"])')
echo "machine: $(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); tree $tree ($cpus CPUs)"
echo "truebench probe --json, ms: $(paste -sd' ' "$tmp/tb")  median $t"
echo "lscpu, ms: $(paste -sd' ' "$tmp/lscpu")  median $l"
echo "lscpu -p, ms: $(paste -sd' ' "$tmp/lscpu_p")  median $p"
awk -v t="$t" -v l="$l" -v p="$p" 'BEGIN {
  printf "ratio truebench/lscpu: %.2f, truebench/lscpu -p: %.2f\n", t / l, t / p
  printf "truebench under 1 s: %s (median %.0f ms)\n", (t < 1000) ? "yes" : "NO", t
  exit (t < 1000) ? 0 : 1 }'
