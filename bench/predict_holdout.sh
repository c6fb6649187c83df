#!/usr/bin/env bash
# The held-out checks of `truebench predict` (docs/predict.md, "Held-out check"): learn a
# service's load-step curve under two capacity settings (quota CPUs / cpuset CPUs), predict
# the highest rate held below a p99 of 5 ms at a setting not seen, then measure that
# setting at rates from 60% to 130% of the prediction and compare.
#   mq:    the built-in mq workload (2 workers, 50 µs of service): learn 0.5/1 and 1.0/1,
#          predict 1.8/2.
#   nginx: nginx (Debian package; 2 worker processes, a static file on loopback) started by
#          truebench in the capacity group (`loadstep --http --server`), 4 connections,
#          quotas on a 5 ms CFS period (`--quota-period 5ms`): learn 0.2/1 and 0.4/1 (one
#          cpuset CPU), predict 0.6/2 (two).
# Per repeat: the prediction with its interval, the highest rate measured to hold the
# target, predicted/measured, invalid steps and the load average; with several repeats a
# summary line per target (median ratio and its spread). Needs root (capacity cgroups).
# Usage: flock /tmp/truebench-measure.lock bench/predict_holdout.sh [mq|nginx|both] [REPEATS]
#        (defaults: both, 1); KEEP=DIR keeps each repeat's documents in DIR.
set -euo pipefail
what=${1:-both}
reps=${2:-1}
case "$what" in mq | nginx | both) ;; *)
  echo "usage: $0 [mq|nginx|both] [REPEATS]" >&2
  exit 2
  ;;
esac
[[ "$reps" =~ ^[1-9][0-9]*$ ]] || { echo "REPEATS must be a positive number" >&2; exit 2; }
cd "$(dirname "$0")/.."
. bench/truebench_bin.sh
tmp=$(mktemp -d)
chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT
export TRUEBENCH_DB="$tmp/holdout.db" TRUEBENCH_LOCK="$tmp/lock"
field() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }
steps=(--step-duration 1 --warmup 0.3 --repeat 1)

# The nginx target: its own config on a free loopback port, 2 worker processes.
. bench/nginx_target.sh
nginx_setup() {
  nginx_target "$tmp" 2
  nginx_args=(--http "http://127.0.0.1:$port/" --server "$server" --workers 4)
}

# One repeat: NAME TRAIN_QUOTAS HELD_QUOTA TRAIN_RATES QUOTA_PERIOD ARGS...
repeat() {
  local name=$1 train_q=$2 held_q=$3 train_rates=$4 period=$5
  shift 5
  local load pred iv rates measured invalid top ratio
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  "$tb" loadstep "$@" --cpu-quota "$train_q" --cpuset-width 1 --quota-period "$period" \
    --rates "$train_rates" "${steps[@]}" --json >"$tmp/train.json" 2>/dev/null
  "$tb" predict "$(field "$tmp/train.json" 'd["run_id"]')" --capacity "$held_q/2" --p99 5ms \
    --json >"$tmp/pred.json"
  pred=$(field "$tmp/pred.json" '(d["settings"][0]["max_rate"] if d["settings"] else None)')
  if [ -n "${KEEP:-}" ]; then
    mkdir -p "$KEEP"
    for f in train pred; do cp "$tmp/$f.json" "$KEEP/$name-$r-$f.json"; done
  fi
  if [ "$pred" = None ]; then
    echo "$name repeat $r (load $load): no prediction: $(field "$tmp/pred.json" 'd["why_not"] or d["settings"][0]["why_not"]')"
    return
  fi
  iv=$(field "$tmp/pred.json" '"%.0f-%.0f" % tuple(d["settings"][0]["interval"] or (0, 0))')
  rates=$(python3 -c "import sys; p=float(sys.argv[1]); print(','.join(str(round(p*(0.6+0.05*i))) for i in range(15)))" "$pred")
  "$tb" loadstep "$@" --cpu-quota "$held_q" --cpuset-width 2 --quota-period "$period" \
    --rates "$rates" "${steps[@]}" --json >"$tmp/held.json" 2>/dev/null
  read -r measured invalid top <<<"$(field "$tmp/held.json" '" ".join(str(x) for x in (max([s["planned_rate"] for s in d["loadstep"]["variants"][0]["steps"] if s["valid"] and s["completed_rate"] >= 0.98*s["sent_rate"] and s["latency"]["p99"] <= 5000] or [0]), sum(1 for s in d["loadstep"]["variants"][0]["steps"] if not s["valid"]), d["loadstep"]["variants"][0]["steps"][-1]["planned_rate"]))')"
  ratio=$(python3 -c "import sys; m=float(sys.argv[2]); print('%.3f' % (float(sys.argv[1])/m) if m > 0 else 'n/a')" "$pred" "$measured")
  [ "$ratio" != n/a ] && echo "$ratio" >>"$tmp/$name.ratios"
  if [ -n "${KEEP:-}" ]; then
    mkdir -p "$KEEP"
    cp "$tmp/held.json" "$KEEP/$name-$r-held.json"
  fi
  echo "$name repeat $r (load $load): predicted at $(field "$tmp/pred.json" 'd["settings"][0]["capacity"]') $(printf %.0f "$pred")/s (95% interval $iv/s; $(field "$tmp/pred.json" 'd["settings"][0]["limited_by"]')); measured highest rate held below p99 5 ms: $(printf %.0f "$measured")/s$([ "$measured" = "$top" ] && echo ' (the highest rate tried: at least)'); predicted/measured $ratio; invalid steps (generator behind): $invalid"
}

summary() {
  local name=$1
  [ "$reps" -gt 1 ] || return 0
  python3 - "$name" "$reps" "$tmp/$name.ratios" <<'PY'
import os, statistics, sys
name, reps, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
r = [float(x) for x in open(path)] if os.path.exists(path) else []
if not r:
    print(f"{name}: no repeat of {reps} gave a comparison")
else:
    within = sum(1 for x in r if 0.8 <= x <= 1.2)
    print(f"{name}: {len(r)} of {reps} repeats compared; predicted/measured median {statistics.median(r):.3f}, "
          f"spread {min(r):.3f}-{max(r):.3f}; {within} of {len(r)} within 20%")
PY
}

if [ "$what" != nginx ]; then
  for r in $(seq "$reps"); do
    repeat mq 0.5,1.0 1.8 2000,4000,6000,7000,8000,9000,10000,12000,14000,16000,17000,18000,20000 100ms \
      --workers 2 --service-us 50
  done
  summary mq
fi
if [ "$what" != mq ]; then
  nginx_setup
  for r in $(seq "$reps"); do
    repeat nginx 0.2,0.4 0.6 2000,4000,6000,8000,10000,12000,14000,16000,18000,20000,22000,24000,27000,30000 "${NGINX_PERIOD:-5ms}" \
      "${nginx_args[@]}"
  done
  summary nginx
fi
