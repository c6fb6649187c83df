#!/usr/bin/env bash
# The classic suite's quick plan (5 passes of 0.5 s, 1 s for the shell tests) against
# UnixBench's full plan (`--full`: 10 passes of 10 s, or 3 of 30 s / 60 s), one copy, test by
# test, in one run: quick, full, quick again (the two quick runs bracket the full one, so
# drift of the machine during the run shows). Prints the medians (lps or KBps, as each test
# reports) and the ratio quick / full, with the quick runs' mean; the target is within ±3%
# on the tests that are not placement-sensitive (context-switch is: see docs/peers.md).
# Usage: bench/peers/classic_quick_vs_full.sh [TEST,...]
#        (default syscall,pipe-throughput,execl,process-creation: about 7 minutes)
set -euo pipefail
tests=${1:-syscall,pipe-throughput,execl,process-creation}
cd "$(dirname "$0")/../.."
cargo build --release --quiet
tb=target/release/truebench
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TRUEBENCH_DB="$tmp/peer.db" TRUEBENCH_LOCK="$tmp/lock"

median_of() { # run ARGS... : the index variant's median from its JSON document (the
  # unixbench work of dhrystone and whetstone, the plain pair of context-switch)
  "$tb" run "$@" --copies 1 --json | python3 -c '
import json, sys
for r in json.load(sys.stdin)["results"]:
    p = r["params"]
    if p.get("work", "unixbench") == "unixbench" and p.get("pair", "plain") == "plain":
        print("%.1f %s" % (r["stats"]["median"], r["unit"]))
        break
else:
    sys.exit("no index variant in the run")'
}

echo "machine: $(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) CPUs"
for t in ${tests//,/ }; do
  read -r q1 unit < <(median_of "classic.$t")
  echo "  classic.$t: quick $q1 $unit, now the full plan..." >&2
  read -r full _ < <(median_of "classic.$t" --full)
  read -r q2 _ < <(median_of "classic.$t")
  awk -v n="classic.$t" -v a="$q1" -v b="$q2" -v f="$full" -v u="$unit" 'BEGIN {
    q = (a + b) / 2; r = q / f
    printf "%-28s quick %12.1f / %12.1f %s  full %12.1f %s  ratio %.3f (%s)\n", n, a, b, u, f, u, r,
      (r >= 0.97 && r <= 1.03) ? "within ±3%" : "OUTSIDE ±3%"
  }'
done
