#!/usr/bin/env bash
# The classic suite's syscall, pipe-throughput, process-creation and execl loops against
# the same loops in plain C (bench/peers/classic_loops.c, gcc -O2), alternating in one run so both
# see the same machine state: 1 copy, 5 passes of 0.5 s each side per round. Prints each
# round's medians, the medians over rounds and the ratio truebench / C (lps, higher is
# faster): within ±10% means the harness (fork per copy, barrier, window) adds nothing.
# Usage: bench/peers/classic_vs_c.sh [ROUNDS]   (default 3)
set -euo pipefail
rounds=${1:-3}
cd "$(dirname "$0")/../.."

command -v gcc >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq gcc libc6-dev >/dev/null; }
. bench/truebench_bin.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TRUEBENCH_DB="$tmp/peer.db" TRUEBENCH_LOCK="$tmp/lock"
gcc -O2 -o "$tmp/loops" bench/peers/classic_loops.c

median() { sort -g | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }

echo "machine: $(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) CPUs"
for pair in syscall:classic.syscall pipe:classic.pipe-throughput spawn:classic.process-creation execl:classic.execl; do
  c_test=${pair%%:*}
  tb_test=${pair#*:}
  : > "$tmp/c" ; : > "$tmp/tb"
  for i in $(seq "$rounds"); do
    "$tmp/loops" "$c_test" 5 0.5 | median >> "$tmp/c"
    "$tb" run "$tb_test" --copies 1 --json \
      | python3 -c 'import json,sys; d=json.load(sys.stdin); print("%.1f" % d["results"][0]["stats"]["median"])' >> "$tmp/tb"
    echo "  $tb_test round $i: C $(tail -1 "$tmp/c") lps, truebench $(tail -1 "$tmp/tb") lps" >&2
  done
  c=$(median < "$tmp/c")
  t=$(median < "$tmp/tb")
  awk -v n="$tb_test" -v t="$t" -v c="$c" 'BEGIN {r = t / c; printf "%-28s C %12.1f lps  truebench %12.1f lps  ratio %.3f (%s)\n", n, c, t, r, (r >= 0.9 && r <= 1.1) ? "within ±10%" : "OUTSIDE ±10%"}'
done
