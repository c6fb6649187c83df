#!/usr/bin/env bash
# The classic suite's quick plan (5 passes of 0.5 s, 1 s for the shell tests) against
# UnixBench's full plan (`--full`: 10 passes of 10 s, or 3 of 30 s / 60 s), one copy, test by
# test, in one run: quick, full, quick again (the two quick runs bracket the full one, so
# drift of the machine during the run shows). Prints the medians (lps or KBps, as each test
# reports) and the ratio quick / full, with the quick runs' mean; the target is within ±3%
# on the tests that are not placement-sensitive. Context-switch and process-creation are,
# unpinned, at one copy (docs/peers.md): for them the pinned pair=same-cpu variant is
# compared; for the others the index variant.
# Usage: bench/peers/classic_quick_vs_full.sh [TEST,...]
#        (default syscall,pipe-throughput,execl,process-creation: about 9 minutes; the full
#        plan of a shell test alone takes 3 minutes, so give shell-1 or shell-8 on its own)
set -euo pipefail
tests=${1:-syscall,pipe-throughput,execl,process-creation}
cd "$(dirname "$0")/../.."
cargo build --release --quiet
tb=target/release/truebench
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TRUEBENCH_DB="$tmp/peer.db" TRUEBENCH_LOCK="$tmp/lock"

median_of() { # run ARGS... : the compared variant's median from its JSON document (the
  # unixbench work of dhrystone and whetstone; the pinned same-cpu pair of context-switch
  # and process-creation)
  case $1 in classic.context-switch | classic.process-creation) pair=same-cpu ;; *) pair=plain ;; esac
  "$tb" run "$@" --copies 1 --json | python3 -c '
import json, sys
for r in json.load(sys.stdin)["results"]:
    p = r["params"]
    if p.get("work", "unixbench") == "unixbench" and p.get("pair", "plain") == sys.argv[1]:
        print("%.1f %s" % (r["stats"]["median"], r["unit"]))
        break
else:
    sys.exit("no such variant in the run")' "$pair"
}

echo "machine: $(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) CPUs"
for t in ${tests//,/ }; do
  read -r q1 unit < <(median_of "classic.$t")
  echo "  classic.$t: quick $q1 $unit, now the full plan..." >&2
  read -r full _ < <(median_of "classic.$t" --full)
  read -r q2 _ < <(median_of "classic.$t")
  label=classic.$t
  case $t in context-switch | process-creation) label="$label,pair=same-cpu" ;; esac
  awk -v n="$label" -v a="$q1" -v b="$q2" -v f="$full" -v u="$unit" 'BEGIN {
    q = (a + b) / 2; r = q / f
    printf "%-28s quick %12.1f / %12.1f %s  full %12.1f %s  ratio %.3f (%s)\n", n, a, b, u, f, u, r,
      (r >= 0.97 && r <= 1.03) ? "within ±3%" : "OUTSIDE ±3%"
  }'
done
