#!/usr/bin/env bash
# The classic suite's quick plan (5 passes of 0.5 s, 1 s for the shell tests) against
# UnixBench's full plan (`--full`: 10 passes of 10 s, or 3 of 30 s / 60 s), one copy, test by
# test, in one run: quick, full, quick again (the two quick runs bracket the full one, so
# drift of the machine during the run shows). Prints the medians (lps or KBps, as each test
# reports) and the ratio quick / full, with the quick runs' mean; the target is within ±3%
# on the tests that are not placement-sensitive. Context-switch and process-creation are,
# unpinned, at one copy (docs/peers.md): for them the pinned pair=same-cpu variant is
# compared; for the others the index variant.
# QUICK_EACH=K runs K quick runs before the full one and K after (default 1): a test whose
# quick figure moves from run to run (file-copy-4096 here: about 6% between runs seconds
# apart) needs several for its mean; the ratio is printed with the standard error that the
# quick runs' spread gives it.
# Usage: bench/peers/classic_quick_vs_full.sh [TEST,...]
#        (default syscall,pipe-throughput,execl,process-creation: about 9 minutes; the full
#        plan of a shell test alone takes 3 minutes, so give shell-1 or shell-8 on its own)
# TRUEBENCH_BIN=path runs another truebench build instead of building this tree.
set -euo pipefail
tests=${1:-syscall,pipe-throughput,execl,process-creation}
each=${QUICK_EACH:-1}
case $each in '' | *[!0-9]* | 0) echo "error: QUICK_EACH must be a positive whole number, not '$each'" >&2; exit 2 ;; esac
cd "$(dirname "$0")/../.."
. bench/truebench_bin.sh
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

echo "machine: $(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg); quick runs: $each before and $each after the full one"
for t in ${tests//,/ }; do
  quick=()
  for _ in $(seq "$each"); do
    read -r q unit < <(median_of "classic.$t")
    quick+=("$q")
  done
  echo "  classic.$t: quick ${quick[*]} $unit, now the full plan..." >&2
  read -r full _ < <(median_of "classic.$t" --full)
  for _ in $(seq "$each"); do
    read -r q _ < <(median_of "classic.$t")
    quick+=("$q")
  done
  label=classic.$t
  case $t in context-switch | process-creation) label="$label,pair=same-cpu" ;; esac
  python3 - "$label" "$unit" "$full" "${quick[@]}" <<'EOF2'
import statistics, sys
label, unit, full, quick = sys.argv[1], sys.argv[2], float(sys.argv[3]), [float(x) for x in sys.argv[4:]]
m = statistics.mean(quick)
r = m / full
# The quick runs' own run-to-run spread: the ratio is known to about its standard error.
cv = statistics.stdev(quick) / m
se = cv / len(quick) ** 0.5
print("%-28s quick %s %s (mean %.1f, run-to-run CV %.1f%%)  full %.1f %s  ratio %.3f ± %.3f (%s)" % (
    label, " / ".join("%.1f" % q for q in quick), unit, m, 100 * cv, full, unit, r, r * se,
    "within ±3%" if 0.97 <= r <= 1.03 else "OUTSIDE ±3%"))
EOF2
done
