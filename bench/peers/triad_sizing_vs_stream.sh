#!/usr/bin/env bash
# Does sizing the bandwidth arrays by the measured LLC cost any bandwidth? Per round, in one
# run and alternating: `truebench run memory.latency,memory.bandwidth` (its own sizing: 4x
# the LLC the latency sweep measured, at least 128 MiB), then the plain C STREAM-style triad
# (bench/peers/stream_triad.c, gcc -O3 -march=native, OpenMP) with arrays of the size
# truebench chose, and with arrays of 4x the LLC the OS reports (the old sizing). Prints per
# round the three triad figures (1 thread and all CPUs) and at the end the medians and the
# ratios truebench / C at each size, with truebench's peak RSS and the memory suite's wall
# time from the run document.
# Usage: bench/peers/triad_sizing_vs_stream.sh [ROUNDS]   (default 3; about 2 min a round)
# MEASURE_LOCK=FILE holds that lock (flock) around each round.
# REPORTED_LLC_MIB=M sizes the "4x reported" C arrays by M MiB instead of this machine's report
# (e.g. 480: what the old sizing gave on a VM whose CPUID and sysfs report a 480 MiB L3).
# TRUEBENCH_BIN=path runs another truebench build instead of building this tree.
set -euo pipefail
rounds=${1:-3}
case $rounds in '' | *[!0-9]* | 0) echo "error: ROUNDS must be a positive whole number, not '$rounds'" >&2; exit 2 ;; esac
command -v gcc >/dev/null || { echo "error: gcc is needed (apt-get install gcc)" >&2; exit 2; }
cd "$(dirname "$0")/../.."
. bench/truebench_bin.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TRUEBENCH_DB="$tmp/peer.db" TRUEBENCH_LOCK="$tmp/lock"
gcc -O3 -march=native -fopenmp bench/peers/stream_triad.c -o "$tmp/stream_triad"
n=$(nproc)
reported=$("$tb" probe --json | python3 -c '
import json, sys
t = json.load(sys.stdin)["topology"]
sizes = [c["size_bytes"] for c in t["caches"] if c["level"] == t.get("llc_level") and c.get("size_bytes")]
print(max(sizes) if sizes else 0)')
if [ -n "${REPORTED_LLC_MIB:-}" ]; then
  case $REPORTED_LLC_MIB in *[!0-9]* | 0) echo "error: REPORTED_LLC_MIB must be a positive whole number of MiB" >&2; exit 2 ;; esac
  reported=$((REPORTED_LLC_MIB << 20))
fi
[ "$reported" -gt 0 ] || { echo "error: the OS reports no LLC size here" >&2; exit 1; }
locked() { if [ -n "${MEASURE_LOCK:-}" ]; then flock "$MEASURE_LOCK" "$@"; else "$@"; fi; }
echo "machine: $(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $n CPUs; LLC reported $((reported >> 20)) MiB${REPORTED_LLC_MIB:+ (REPORTED_LLC_MIB)}; load $(cut -d' ' -f1-3 /proc/loadavg); $(date -u '+%F %H:%M UTC')"
round() { # ROUND: prints "tb1 tbn c1_same cn_same c1_rep cn_rep array_bytes peak_rss wall_s"
  "$tb" run memory.latency,memory.bandwidth --json >"$tmp/tb.json"
  read -r t1 tn arr peak wall < <(python3 - "$tmp/tb.json" "$n" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); n = int(sys.argv[2])
def triad(threads):
    for r in d["results"]:
        p = r["params"]
        if r["benchmark"].startswith("memory.bandwidth") and p.get("kernel") == "triad" \
                and p.get("stores") == "regular" and p.get("threads") == threads:
            return r["stats"]["median"], p["array_bytes"]
    raise SystemExit("no triad result for %d thread(s)" % threads)
t1, arr = triad(1); tn, _ = triad(n)
mem = [c for c in d.get("suite_costs", []) if c["suite"] == "memory"]
# -1: no peak RSS in the run document (absent, never 0)
peaks = [c["peak_rss_bytes"] for c in mem if c.get("peak_rss_bytes")]
print(t1, tn, arr, max(peaks) if peaks else -1, sum(c["wall_s"] for c in mem))
PY
)
  local same=$((arr / 8)) rep=$((4 * reported / 8))
  c1=$(OMP_NUM_THREADS=1 OMP_PROC_BIND=true "$tmp/stream_triad" "$same" 11)
  cn=$(OMP_NUM_THREADS=$n OMP_PROC_BIND=spread "$tmp/stream_triad" "$same" 11)
  r1=$(OMP_NUM_THREADS=1 OMP_PROC_BIND=true "$tmp/stream_triad" "$rep" 11)
  rn=$(OMP_NUM_THREADS=$n OMP_PROC_BIND=spread "$tmp/stream_triad" "$rep" 11)
  echo "$t1 $tn $c1 $cn $r1 $rn $arr $peak $wall"
}
export -f round
export tb tmp n reported
: >"$tmp/rows"
for r in $(seq "$rounds"); do
  locked bash -c round >>"$tmp/rows"
  read -r t1 tn c1 cn r1 rn arr peak wall < <(tail -1 "$tmp/rows")
  echo "round $r: arrays $((arr >> 20)) MiB (truebench's choice) and $((4 * reported >> 20)) MiB (4x reported LLC); triad MB/s 1 thread: truebench $t1, C same size $c1, C 4x reported $r1; $n threads: truebench $tn, C $cn, C 4x reported $rn; memory suite ${wall} s, peak RSS $([ "$peak" -ge 0 ] && echo "$((peak >> 20)) MiB" || echo "absent (the run document has none)")" >&2
done
python3 - "$tmp/rows" "$n" "$reported" <<'PY'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
n, rep = sys.argv[2], int(sys.argv[3])
med = lambda i: statistics.median(r[i] for r in rows)
ratio = lambda a, b: statistics.median(r[a] / r[b] for r in rows)
print("median of %d round(s); arrays %d MiB (truebench) vs %d MiB (4x reported LLC); MB/s = 10^6 B/s"
      % (len(rows), med(6) / 2**20, 4 * rep / 2**20))
print("%-40s %10s %10s %10s" % ("triad", "1 thread", n + " threads", ""))
print("%-40s %10.0f %10.0f" % ("truebench (its own sizing)", med(0), med(1)))
print("%-40s %10.0f %10.0f" % ("C STREAM-style, same size", med(2), med(3)))
print("%-40s %10.0f %10.0f" % ("C STREAM-style, 4x reported LLC", med(4), med(5)))
print("%-40s %10.3f %10.3f   (bar: >= 0.95)" % ("truebench / C same size", ratio(0, 2), ratio(1, 3)))
print("%-40s %10.3f %10.3f   (bar: >= 0.90)" % ("truebench / C 4x reported LLC", ratio(0, 4), ratio(1, 5)))
peaks = [r[7] for r in rows if r[7] >= 0]
print("memory suite (latency + bandwidth): %.1f s wall time (median), peak RSS %s" % (med(8),
      "%d MiB (median of %d round(s))" % (statistics.median(peaks) / 2**20, len(peaks)) if peaks
      else "absent (no run document had one)"))
PY
