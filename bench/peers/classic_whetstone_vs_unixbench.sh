#!/usr/bin/env bash
# classic.whetstone against UnixBench's own Whetstone (whets.c), alternating in one run so
# both see the same machine state. UnixBench cannot be downloaded here, so it takes the path
# of a UnixBench checkout (byte-unixbench, or its UnixBench/ directory), copied into a
# temporary directory and built there by UnixBench's own Makefile (unixbench.sh; the
# checkout is not written to). Each round runs that whetstone-double once (it calibrates, then
# times about 10 s, as `./Run -c 1 -i 1` does) and truebench's quick plan once (1 copy,
# 5 passes of 0.5 s). It also runs the same whets.c built without -ffast-math, which shows
# the share of the difference that is gcc rewriting the standard-functions module. Prints
# each round, UnixBench's module times (µs per million Whetstone instructions), the medians
# and the ratios truebench / UnixBench (MWIPS, or the index: both divide by the same 55.0).
# docs/peers.md explains the difference.
# Usage: bench/peers/classic_whetstone_vs_unixbench.sh UNIXBENCH_DIR [ROUNDS]   (default 3)
# TRUEBENCH_BIN=path runs another truebench build instead of building this tree.
set -euo pipefail
usage="usage: $0 UNIXBENCH_DIR [ROUNDS]"
[ $# -ge 1 ] || { echo "error: $usage" >&2; exit 2; }
ub=$1
rounds=${2:-3}
case $rounds in '' | *[!0-9]* | 0) echo "error: ROUNDS must be a positive whole number, not '$rounds'" >&2; exit 2 ;; esac
. "$(dirname "$0")/unixbench.sh"
unixbench_find "$ub"
cd "$(dirname "$0")/../.."

command -v gcc >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq gcc libc6-dev >/dev/null; }
. bench/truebench_bin.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TRUEBENCH_DB="$tmp/peer.db" TRUEBENCH_LOCK="$tmp/lock"
unixbench_build "$tmp/ub"
ln -s "$tmp/ub/pgms/whetstone-double" "$tmp/whetstone-double"
# The same source and flags as the Makefile's whetstone-double, without -ffast-math.
gcc -w -O3 -march=native -mtune=native -DTIME -DDP -DGTODay -DUNIXBENCH \
  -o "$tmp/whetstone-double-no-fast-math" "$tmp/ub/src/whets.c" -lm

median() { sort -g | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }

echo "machine: $(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) CPUs; gcc $(gcc -dumpversion)"
echo "UnixBench module times, µs per million Whetstone instructions (N1..N8):"
for i in $(seq "$rounds"); do
  "$tmp/whetstone-double" > "$tmp/ub.out" 2> "$tmp/ub.err"
  awk -F'|' '/^COUNT/ {print $2}' "$tmp/ub.err" >> "$tmp/ub"
  passes=$(awk '/^Use/ {print $2}' "$tmp/ub.out")
  awk -v p="$passes" -v r="$i" 'BEGIN {printf "  round %d:", r} /^N[1-8] / {printf " %.2f", $NF / (p * 10) * 1e6} END {print ""}' "$tmp/ub.out"
  "$tmp/whetstone-double-no-fast-math" > /dev/null 2> "$tmp/nofm.err"
  awk -F'|' '/^COUNT/ {print $2}' "$tmp/nofm.err" >> "$tmp/nofm"
  "$tb" run classic.whetstone --copies 1 --json \
    | python3 -c 'import json,sys; d=json.load(sys.stdin); r=next(r for r in d["results"] if r["params"].get("work", "unixbench") == "unixbench"); print("%.1f %s" % (r["stats"]["median"], r["benchmark"]))' > "$tmp/tb.last"
  cut -d' ' -f1 "$tmp/tb.last" >> "$tmp/tb"
  echo "  round $i: UnixBench $(tail -1 "$tmp/ub") MWIPS (without -ffast-math $(tail -1 "$tmp/nofm")), $(cut -d' ' -f2 "$tmp/tb.last") $(tail -1 "$tmp/tb") MWIPS" >&2
done
u=$(median < "$tmp/ub")
f=$(median < "$tmp/nofm")
t=$(median < "$tmp/tb")
awk -v t="$t" -v u="$u" -v f="$f" -v id="$(cut -d' ' -f2 "$tmp/tb.last")" 'BEGIN {
  printf "UnixBench whetstone-double          %10.1f MWIPS (index %.1f)\n", u, 10 * u / 55
  printf "  the same without -ffast-math      %10.1f MWIPS (index %.1f)\n", f, 10 * f / 55
  printf "truebench %-25s %10.1f MWIPS (index %.1f)\n", id, t, 10 * t / 55
  printf "ratio truebench / UnixBench %.3f; / UnixBench without -ffast-math %.3f\n", t / u, t / f
}'
