#!/usr/bin/env bash
# The held-out check of `truebench predict` (docs/predict.md): run loadstep with the mq
# workload (2 workers, 50 µs of service) under the capacity settings 0.5/1 and 1.0/1
# (quota CPUs / cpuset CPUs), predict the highest rate held below a p99 of 5 ms at 1.8/2,
# then run 1.8/2 at rates from 60% to 130% of the prediction and compare: prints the
# prediction with its interval, the highest rate measured to hold the target, their ratio,
# and the load average at the time. Needs root (capacity policies make cgroups).
# Usage: flock /tmp/truebench-measure.lock bench/predict_holdout.sh [REPEATS]   (default 1)
set -euo pipefail
reps=${1:-1}
cd "$(dirname "$0")/.."
cargo build --release --quiet
tb=$PWD/target/release/truebench
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TRUEBENCH_DB="$tmp/holdout.db" TRUEBENCH_LOCK="$tmp/lock"
field() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }

for r in $(seq "$reps"); do
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  $tb loadstep --cpu-quota 0.5,1.0 --cpuset-width 1 --workers 2 --service-us 50 \
    --rates 2000,4000,6000,7000,8000,9000,10000,12000,14000,16000,17000,18000,20000 \
    --step-duration 1 --warmup 0.3 --repeat 1 --json > "$tmp/train.json" 2>/dev/null
  train=$(field "$tmp/train.json" 'd["run_id"]')
  $tb predict "$train" --capacity 1.8/2 --p99 5ms --json > "$tmp/pred.json"
  pred=$(field "$tmp/pred.json" '(d["settings"][0]["max_rate"] if d["settings"] else None)')
  if [ "$pred" = None ]; then
    echo "repeat $r (load $load): no prediction: $(field "$tmp/pred.json" 'd["why_not"] or d["settings"][0]["why_not"]')"
    continue
  fi
  iv=$(field "$tmp/pred.json" '"%.0f-%.0f" % tuple(d["settings"][0]["interval"] or (0, 0))')
  rates=$(python3 -c "import sys; p=float(sys.argv[1]); print(','.join(str(round(p*(0.6+0.05*i))) for i in range(15)))" "$pred")
  $tb loadstep --cpu-quota 1.8 --cpuset-width 2 --workers 2 --service-us 50 --rates "$rates" \
    --step-duration 1 --warmup 0.3 --repeat 1 --json > "$tmp/held.json" 2>/dev/null
  read -r measured invalid top <<<"$(field "$tmp/held.json" '" ".join(str(x) for x in (max([s["planned_rate"] for s in d["loadstep"]["variants"][0]["steps"] if s["valid"] and s["completed_rate"] >= 0.98*s["sent_rate"] and s["latency"]["p99"] <= 5000] or [0]), sum(1 for s in d["loadstep"]["variants"][0]["steps"] if not s["valid"]), d["loadstep"]["variants"][0]["steps"][-1]["planned_rate"]))')"
  ratio=$(python3 -c "import sys; m=float(sys.argv[2]); print('%.3f' % (float(sys.argv[1])/m) if m > 0 else 'n/a')" "$pred" "$measured")
  echo "repeat $r (load $load): predicted at 1.8/2 $(printf %.0f "$pred")/s (95% interval $iv/s); measured highest rate held below p99 5 ms: $(printf %.0f "$measured")/s$( [ "$measured" = "$top" ] && echo ' (the highest rate tried: at least)'); predicted/measured $ratio; invalid steps (generator behind): $invalid"
done
