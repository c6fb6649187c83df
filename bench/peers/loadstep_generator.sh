#!/usr/bin/env bash
# Can truebench's load generator keep a schedule of 100,000 messages/s on this machine?
# Runs the mq workload with no service work and one worker at 100,000/s for ROUNDS rounds
# and prints, per round, the achieved (completed) rate over the plan, the sent rate, the
# schedule lag p50/p99 and the generator's own CPU. Target: every ratio within 1%.
# Usage: bench/peers/loadstep_generator.sh [ROUNDS] [RATE]   (defaults: 3, 100000)
set -euo pipefail
rounds=${1:-3}
rate=${2:-100000}
cd "$(dirname "$0")/../.."
. bench/truebench_bin.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TRUEBENCH_DB="$tmp/peer.db" TRUEBENCH_LOCK="$tmp/lock"
echo "machine: $(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) CPUs"
for i in $(seq "$rounds"); do
  "$tb" loadstep --rates "$rate" --service-us 0 --workers 1 \
    --step-duration 2 --warmup 0.5 --json 2>/dev/null \
  | python3 -c '
import json, sys
s = json.load(sys.stdin)["loadstep"]["steps"][0]
r = s["completed_rate"] / s["planned_rate"]
print("round %s: planned %.0f/s, sent %.0f/s, completed %.0f/s, ratio %.4f (%s), lag p50 %.1f µs p99 %.1f µs, generator CPU %.0f%%" % (
    sys.argv[1], s["planned_rate"], s["sent_rate"], s["completed_rate"], r,
    "within 1%" if abs(r - 1) <= 0.01 else "OUTSIDE 1%",
    s["schedule_lag_us"]["p50"], s["schedule_lag_us"]["p99"], s["generator_cpu_pct"]))' "$i"
done
