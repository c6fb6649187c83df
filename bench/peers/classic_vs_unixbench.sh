#!/usr/bin/env bash
# The classic suite against UnixBench itself, test by test, alternating in one run so both
# see the same machine state: each round runs, for every test, UnixBench's `./Run -c C -i 1
# TEST` (one pass of UnixBench's own length: 10 s, 30 s or 60 s) and then `truebench run
# classic.TEST --copies C` (the quick plan), and the context-switch test also pinned to one
# CPU and split across two CPUs (see ub_cross), set beside truebench's pinned pair=same-cpu
# and pair=cross-cpu variants, and UnixBench's spawn pinned to one CPU beside
# process-creation's pair=same-cpu. At one copy both tests are placement-sensitive unpinned
# (where the partner or a fork's child runs moves the figure): their pinned rows are the
# judged ones, the unpinned rows are printed as observed. Dhrystone and Whetstone are compared on the index variant
# (params.work = "unixbench"); their all-modules variant is printed beside.
#
# It never downloads: UNIXBENCH_DIR is a byte-unixbench checkout (or its UnixBench/
# directory). It is copied into a temporary directory and built there with its own Makefile
# when its programs are not built yet, so the checkout is not written to (unixbench.sh).
#
# Prints each round, then per test the medians of the rounds and the ratio truebench /
# UnixBench: the median of the rounds' ratios with their range (min-max).
# Usage: bench/peers/classic_vs_unixbench.sh UNIXBENCH_DIR [ROUNDS [COPIES [TEST,...]]]
#        (defaults 3 rounds, 1 copy, all twelve tests: about 9 minutes a round)
# MEASURE_LOCK=FILE holds that lock (flock) around each test's pair of runs, so a shared
# machine's measurement lock is never held for more than about 80 s at a time.
# TRUEBENCH_BIN=path runs another truebench build instead of building this tree.
set -euo pipefail
usage="usage: $0 UNIXBENCH_DIR [ROUNDS [COPIES [TEST,...]]]"
[ $# -ge 1 ] || { echo "error: $usage" >&2; exit 2; }
ub=$1
rounds=${2:-3}
copies=${3:-1}
all="dhrystone,whetstone,execl,file-copy-1024,file-copy-256,file-copy-4096,pipe-throughput,context-switch,process-creation,shell-1,shell-8,syscall"
tests=${4:-$all}
case $rounds in '' | *[!0-9]* | 0) echo "error: ROUNDS must be a positive whole number, not '$rounds'" >&2; exit 2 ;; esac
case $copies in '' | *[!0-9]* | 0) echo "error: COPIES must be a positive whole number, not '$copies'" >&2; exit 2 ;; esac
. "$(dirname "$0")/unixbench.sh"
unixbench_find "$ub"
# UnixBench's name for each truebench test.
ub_name() {
  case $1 in
    dhrystone) echo dhry2reg ;; whetstone) echo whetstone-double ;; execl) echo execl ;;
    file-copy-1024) echo fstime ;; file-copy-256) echo fsbuffer ;; file-copy-4096) echo fsdisk ;;
    pipe-throughput) echo pipe ;; context-switch) echo context1 ;; process-creation) echo spawn ;;
    shell-1) echo shell1 ;; shell-8) echo shell8 ;; syscall) echo syscall ;;
    *) return 1 ;;
  esac
}
for t in ${tests//,/ }; do
  ub_name "$t" >/dev/null || { echo "error: '$t' is not a classic test (one of $all)" >&2; exit 2; }
done
cd "$(dirname "$0")/../.."
. bench/truebench_bin.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TRUEBENCH_DB="$tmp/peer.db" TRUEBENCH_LOCK="$tmp/lock"
unixbench_build "$tmp/ub"
locked() { if [ -n "${MEASURE_LOCK:-}" ]; then flock "$MEASURE_LOCK" "$@"; else "$@"; fi; }

# UnixBench: one pass of TEST at COPIES copies (optionally under taskset); prints its rate.
ub_run() { # CPULIST|- TEST
  local pre=()
  [ "$1" = - ] || pre=(taskset -c "$1")
  (cd "$tmp/ub" && "${pre[@]}" ./Run -c "$copies" -i 1 "$2" 2>&1) |
    awk '/ (lps|KBps|MWIPS|lpm) +\(/ { for (i = 2; i <= NF; i++) if ($i ~ /^(lps|KBps|MWIPS|lpm)$/) v = $(i-1) } END { if (v == "") exit 1; print v }'
}
# UnixBench's context1 with its two processes forced onto two CPUs: `taskset -c 0,1` alone
# does not split them (the scheduler keeps a ping-pong on one CPU, story 1), so the program
# starts on CPU 0 and its forked partner is moved to CPU 1 as soon as it exists (within
# about 10 ms of a 10 s run). Prints its rate in lps (its count over its 10 s).
ub_cross() {
  local p c="" i
  taskset -c 0 "$tmp/ub/pgms/context1" 10 2>"$tmp/ctx.err" &
  p=$!
  for i in $(seq 200); do
    c=$(pgrep -P "$p" | head -1) && [ -n "$c" ] && break
    sleep 0.01
  done
  [ -n "$c" ] || { kill "$p"; echo "error: context1's partner process did not appear" >&2; return 1; }
  taskset -pc 1 "$c" >/dev/null
  wait "$p"
  awk -F'|' '/^COUNT/ { print $2 / 10; exit }' "$tmp/ctx.err"
}
# truebench: the quick plan of classic.TEST at COPIES copies; prints "variant median" lines
# (variant: plain, same-cpu, cross-cpu, unixbench, all-modules).
tb_run() { # TEST
  "$tb" run "classic.$1" --copies "$copies" --json | python3 -c '
import json, sys
for r in json.load(sys.stdin)["results"]:
    p = r["params"]
    print(p.get("pair") or p.get("work") or "plain", r["stats"]["median"])'
}
ncpu=$(nproc)
echo "machine: $(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $ncpu CPUs; load $(cut -d' ' -f1-3 /proc/loadavg); gcc $(gcc -dumpversion); $("$tb" --version)"
echo "copies: $copies; rounds: $rounds; $(date -u '+%F %H:%M UTC')"
: >"$tmp/rows"
# One test of one round, under the lock: UnixBench, truebench, and at one copy UnixBench
# pinned to one CPU for context-switch (also split across two) and process-creation (rows:
# see Ratios below).
one_round() { # ROUND TEST
  local n u t_out
  n=$(ub_name "$2")
  u=$(ub_run - "$n") || { echo "error: UnixBench $n gave no result" >&2; return 1; }
  t_out=$(tb_run "$2" | tr '\n' ' ')
  echo "$1 $2 $u $t_out"
  if [ "$copies" = 1 ] && { [ "$2" = context-switch ] || [ "$2" = process-creation ]; }; then
    echo "$1 $2@same-cpu $(ub_run 0 "$n")"
  fi
  if [ "$copies" = 1 ] && [ "$2" = context-switch ] && [ "$ncpu" -ge 2 ]; then
    echo "$1 $2@cross-cpu $(ub_cross)"
  fi
}
export -f ub_name ub_run ub_cross tb_run one_round
export tmp copies tb ncpu
for r in $(seq "$rounds"); do
  for t in ${tests//,/ }; do
    locked bash -c 'one_round "$0" "$1"' "$r" "$t" | tee -a "$tmp/rows" >&2
  done
done
# Ratios. A row: ROUND TEST UB_RATE VARIANT MEDIAN [VARIANT MEDIAN ...]; TEST@pair rows carry
# UnixBench's taskset figure, set beside truebench's pair=PAIR variant of the same round.
python3 - "$tmp/rows" "$copies" <<'EOF'
import statistics, sys
# At one copy these are placement-sensitive unpinned: judged on their pinned rows.
sensitive = {"context-switch", "process-creation"} if sys.argv[2] == "1" else set()
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
tb = {}   # (round, test) -> {variant: median}
ub = {}   # (round, name) -> UnixBench rate
for w in rows:
    rnd, name, u = w[0], w[1], float(w[2])
    ub[(rnd, name)] = u
    if "@" not in name:
        tb[(rnd, name)] = {w[i]: float(w[i + 1]) for i in range(3, len(w) - 1, 2)}
def med(v):
    return statistics.median(v)
out = {}
for (rnd, name), u in ub.items():
    test, _, pair = name.partition("@")
    v = tb.get((rnd, test), {})
    if pair:
        t = v.get(pair)
    else:
        t = v.get("unixbench", v.get("plain"))
    if t is None:
        continue
    out.setdefault(name, []).append((u, t, t / u))
    if not pair and "all-modules" in v:
        out.setdefault(test + " (all-modules)", []).append((u, v["all-modules"], v["all-modules"] / u))
print("%-34s %14s %14s %8s  %s" % ("test", "UnixBench", "truebench", "ratio", "ratio range over rounds"))
for name, vals in out.items():
    us, ts, rs = zip(*vals)
    ok = "within ±10%" if 0.9 <= med(rs) <= 1.1 else "OUTSIDE ±10%"
    if name in sensitive:
        ok = "observed: placement-sensitive, judged on %s@same-cpu (%s)" % (name, ok)
    print("%-34s %14.1f %14.1f %8.3f  %.3f-%.3f (%d rounds) %s" % (name, med(us), med(ts), med(rs), min(rs), max(rs), len(rs), ok))
EOF
