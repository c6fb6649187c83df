#!/usr/bin/env bash
# The A/A of `truebench ab` side by side with the two-run way, in one sitting on one host:
# two default `run`s back to back and `compare` of them, then `ab nice=0` (B the host as A,
# nice 0 being every process's default) given the wall time the two runs took. Each is an
# A/A: every row called "B better" or "B worse" is a false alarm unless a measured cause
# claims it. Prints per family the median MDE of its rows both ways and their ratio (ab
# over two runs: docs/ab.md asks at most 0.5), and the calls no measured cause claims each
# way; the load and the hypervisor's steal over each part.
#
# Usage: bench/ab_aa.sh [SUITES]   (TRUEBENCH_BIN: the binary; SUITES default: the default)
#        AB_REPEAT=N repeats the whole (default 1), each sitting printed.
set -euo pipefail
suites=${1:-}
cd "$(dirname "$0")/.."
. bench/truebench_bin.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TRUEBENCH_LOCK=$tmp/run.lock
ticks() { awk '/^cpu /{ t = 0; for (i = 2; i <= NF; i++) t += $i; print $9, t; exit }' /proc/stat; }
steal_since() { read -r s1 t1 < <(ticks); awk -v s="$(($s1 - $1))" -v t="$(($t1 - $2))" 'BEGIN { printf "%.1f", (t > 0 ? 100 * s / t : 0) }'; }
echo "host: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) CPUs, $(date -u '+%Y-%m-%d %H:%M UTC')"
for sitting in $(seq 1 "${AB_REPEAT:-1}"); do
  db=$tmp/s$sitting.db
  echo "sitting $sitting: load $(cut -d' ' -f1-3 /proc/loadavg)"
  read -r s0 t0 < <(ticks)
  start=$(date +%s.%N)
  "$tb" --db "$db" run $suites --json >"$tmp/r1.json" 2>/dev/null
  "$tb" --db "$db" run $suites --json >"$tmp/r2.json" 2>/dev/null
  two=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f", b - a }')
  echo "  two runs: ${two} s, steal $(steal_since "$s0" "$t0")%"
  id() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["run_id"])' "$1"; }
  "$tb" --db "$db" compare "$(id "$tmp/r1.json")" "$(id "$tmp/r2.json")" --json >"$tmp/two.json"
  read -r s0 t0 < <(ticks)
  start=$(date +%s.%N)
  "$tb" --db "$db" ab nice=0 $suites --budget "${two}s" --json >"$tmp/ab.json" 2>/dev/null
  took=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f", b - a }')
  echo "  ab nice=0 (budget ${two} s): ${took} s, steal $(steal_since "$s0" "$t0")%; load $(cut -d' ' -f1-3 /proc/loadavg)"
  python3 - "$tmp/two.json" "$tmp/ab.json" <<'PY'
import json, sys, statistics, collections
two, ab = (json.load(open(f)) for f in sys.argv[1:3])
sys.path.insert(0, "bench")
from families import family, CLAIMS
def summary(c):
    mdes = collections.defaultdict(list)
    unclaimed = []
    for r in c["rows"]:
        if r.get("mde") is not None and r["verdict"] != "not comparable":
            mdes[family(r)].append(r["mde"])
        if r["verdict"] in ("B better", "B worse") and not any(e["claim"] in CLAIMS for e in r["explanations"]):
            unclaimed.append(f"{r['label']} [{r['placement']}]: {r['why']}")
    called = sum(r["verdict"] in ("B better", "B worse") for r in c["rows"])
    return mdes, called, unclaimed
(m2, c2, u2), (ma, ca, ua) = summary(two), summary(ab)
print("  family | median MDE, two runs + compare | median MDE, ab | ab / two runs | rows")
for fam in sorted(set(m2) | set(ma)):
    x = statistics.median(m2[fam]) if m2[fam] else None
    y = statistics.median(ma[fam]) if ma[fam] else None
    ratio = f"{y / x:.2f}" if x and y else "-"
    fx = f"{x*100:.1f}%" if x is not None else "-"
    fy = f"{y*100:.1f}%" if y is not None else "-"
    print(f"  {fam} | {fx} | {fy} | {ratio} | {len(m2[fam])}, {len(ma[fam])}")
print(f"  calls: two runs {c2} ({len(u2)} no measured cause claims), ab {ca} ({len(ua)} unclaimed)")
for u in ua:
    print(f"    ab unclaimed: {u}")
PY
done
