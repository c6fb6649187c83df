#!/usr/bin/env bash
# The classic suite against UnixBench's own programs, test by test, in interleaved pairs: for
# every test, PAIRS times one UnixBench pass (its program as its Run starts it, of its own
# length: 10, 30 or 60 s) and one `truebench run classic.TEST --copies COPIES` (the quick
# plan), the order alternating from pair to pair. At one copy the context switch also runs
# under `taskset -c CPU` and split across two CPUs, and process creation under taskset, set
# beside truebench's pinned pair=same-cpu and pair=cross-cpu variants (the judged rows: both
# tests are placement-sensitive unpinned). Whetstone is compared on the index variant
# (params.work = "unixbench"); its all-modules variant is printed beside.
#
# Prints the machine (CPU model, hypervisor, PMU, kernel, compilers), then per row the
# medians of both sides, the median of the pairs' ratios truebench / UnixBench with a
# distribution-free interval of that median (order statistics, binomial: the range at 6
# pairs, 96.9%), whether it is within ±10%, and the load and steal of its pairs: a markdown
# table for docs/peers.md. Each pair is printed on stderr as it ends (bench/peers/
# classic_pairs.py does the runs and the statistics).
#
# It never downloads: UNIXBENCH_DIR is a byte-unixbench checkout (or its UnixBench/
# directory). It is copied into a temporary directory and built there with its own Makefile
# when its programs are not built yet, so the checkout is not written to (unixbench.sh).
#
# Usage: bench/peers/classic_vs_unixbench.sh UNIXBENCH_DIR [PAIRS [COPIES [TEST,...]]]
#        (defaults: 6 pairs (at least 5), 1 copy, all twelve tests: about 8 minutes a pair)
# UB_SECONDS=N runs every UnixBench program for N s instead of its own length (Whetstone
# times itself: about 10 s); for a shorter look, not for the table (the shell tests count
# whole loops, so a pass of a few seconds biases them).
# MEASURE_LOCK=FILE holds that lock (flock) around each pair, so a shared machine's
# measurement lock is never held for more than about 80 s at a time.
# TRUEBENCH_BIN=path runs another truebench build instead of building this tree.
set -euo pipefail
usage="usage: $0 UNIXBENCH_DIR [PAIRS [COPIES [TEST,...]]]"
[ $# -ge 1 ] || { echo "error: $usage" >&2; exit 2; }
ub=$1
pairs=${2:-6}
copies=${3:-1}
all="dhrystone,whetstone,execl,file-copy-1024,file-copy-256,file-copy-4096,pipe-throughput,context-switch,process-creation,shell-1,shell-8,syscall"
tests=${4:-$all}
case $pairs in '' | *[!0-9]*) pairs=0 ;; esac
[ "$pairs" -ge 5 ] || { echo "error: PAIRS must be a whole number of at least 5, not '${2:-}'" >&2; exit 2; }
case $copies in '' | *[!0-9]* | 0) echo "error: COPIES must be a positive whole number, not '$copies'" >&2; exit 2 ;; esac
case ${UB_SECONDS:-} in '') ;; *[!0-9]* | 0*) echo "error: UB_SECONDS must be a positive whole number of seconds, not '$UB_SECONDS'" >&2; exit 2 ;; esac
for t in ${tests//,/ }; do
  case ",$all," in *",$t,"*) ;; *) echo "error: '$t' is not a classic test (one of $all)" >&2; exit 2 ;; esac
done
. "$(dirname "$0")/unixbench.sh"
unixbench_find "$ub"
cd "$(dirname "$0")/../.."
. bench/truebench_bin.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unixbench_build "$tmp/ub"
python3 bench/peers/classic_pairs.py "$tmp/ub" "$tb" "$pairs" "$copies" "$tests" "${MEASURE_LOCK:-}" "$tmp"
