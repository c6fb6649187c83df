#!/usr/bin/env bash
# The test command (scripts/test) in a loud hour: a CPU-bound neighbour in bursts
# (bench/neighbour.py) runs beside it from start to end. No test may assume a quiet host,
# so this must be green as the quiet run is. Prints the wall time, the steal and the
# neighbour's share of the CPUs' time.
#
# Usage: bench/loud_test.sh [ARGS of scripts/test]   (as root for the root stage)
set -euo pipefail
cd "$(dirname "$0")/.."
ticks() { awk '/^cpu / { t = 0; for (i = 2; i <= NF; i++) t += $i; print $9, t }' /proc/stat; }
python3 bench/neighbour.py &
hog=$!
trap 'kill "$hog" 2>/dev/null; wait "$hog" 2>/dev/null || true' EXIT
echo "bench/loud_test.sh: a CPU-bound neighbour in bursts beside the test command (pid $hog)," \
  "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) CPUs," \
  "$(date -u '+%Y-%m-%d %H:%M UTC')"
read -r s0 t0 < <(ticks)
h0=$(awk '{ print $14 + $15 }' "/proc/$hog/stat")
start=$(date +%s)
status=0
scripts/test "$@" || status=$?
read -r s1 t1 < <(ticks)
h1=$(awk '{ print $14 + $15 }' "/proc/$hog/stat")
awk -v w="$(($(date +%s) - start))" -v s="$((s1 - s0))" -v t="$((t1 - t0))" -v h="$((h1 - h0))" -v rc="$status" 'BEGIN {
  printf "bench/loud_test.sh: exit %d after %d min %d s; steal %.1f%% and the neighbour %.1f%% of the CPUs'"'"' time\n",
    rc, w / 60, w % 60, (t > 0 ? 100 * s / t : 0), (t > 0 ? 100 * h / t : 0) }'
exit "$status"
