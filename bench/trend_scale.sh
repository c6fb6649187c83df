#!/usr/bin/env bash
# `trend` at scale on stored histories made from the timers fixture document of this
# machine (tests/fixtures/documents/timers.json, 11 rows): every row scaled by 1.5% noise
# per run, the system-call rows 10% slower from 60% of each host's runs on. Times, for
# SQLite and (when PG_URL=postgresql://... is given) PostgreSQL:
#   1,000 runs of one host (target under 1 s), 500 hosts x 100 runs (target under 20 s).
# On PostgreSQL both histories share the one database: the fleet is imported and timed
# first, then the one host (named `one`) is imported and timed with --host one.
# Every timing is of `trend --fleet --json` (the fleet grouping included).
# Usage: bench/trend_scale.sh [HOSTS] [RUNS]   (default 500 100)
set -euo pipefail
hosts=${1:-500}
runs=${2:-100}
cd "$(dirname "$0")/.."
. bench/truebench_bin.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TRUEBENCH_LOCK=$tmp/run.lock
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }

make_history() { # FILE HOSTS RUNS PREFIX
  python3 - tests/fixtures/documents/timers.json "$1" "$2" "$3" "$4" <<'PY'
import json, math, random, sys, datetime
base, out, hosts, runs, prefix = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
doc = json.load(open(base))
rng = random.Random(1)
t0 = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
with open(out, "w") as f:
    for h in range(hosts):
        for i in range(runs):
            d = json.loads(json.dumps(doc))
            name = prefix if hosts == 1 else f"{prefix}{h:04}"
            d["host"] = name
            d["run_id"] = f"{name}-{i:05}"
            t = t0 + datetime.timedelta(hours=6 * i)
            d["started_at"] = t.strftime("%Y-%m-%dT%H:%M:%SZ")
            d["finished_at"] = (t + datetime.timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
            for r in d["results"]:
                x = math.exp(0.015 * rng.gauss(0, 1))
                if i >= runs * 6 // 10 and r["params"].get("path") == "syscall":
                    x *= 1.1
                for k in ("median", "ci95_low", "ci95_high", "mean", "min", "max"):
                    r["stats"][k] *= x
                r["samples"] = [v * x for v in r["samples"]]
            f.write(json.dumps(d) + "\n")
PY
}

measure() { # LABEL DB [TREND OPTIONS]
  local s label=$1 db=$2
  shift 2
  s=$(date +%s%N); "$tb" --db "$db" trend --fleet --json "$@" > "$tmp/out.json"
  echo "trend_scale: $label: $(ms "$s") ms, $(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['changes']))" "$tmp/out.json") changes"
}

make_history "$tmp/one.ndjson" 1 1000 one
make_history "$tmp/fleet.ndjson" "$hosts" "$runs" h
"$tb" --db "$tmp/one.db" import "$tmp/one.ndjson" > /dev/null
"$tb" --db "$tmp/fleet.db" import "$tmp/fleet.ndjson" > /dev/null
measure "sqlite, 1 host x 1000 runs" "$tmp/one.db"
measure "sqlite, $hosts hosts x $runs runs" "$tmp/fleet.db"
if [ -n "${PG_URL:-}" ]; then
  "$tb" --db "$PG_URL" import "$tmp/fleet.ndjson" > /dev/null
  measure "postgresql, $hosts hosts x $runs runs" "$PG_URL"
  "$tb" --db "$PG_URL" import "$tmp/one.ndjson" > /dev/null
  measure "postgresql, 1 host x 1000 runs (--host one)" "$PG_URL" --host one
else
  echo "trend_scale: PostgreSQL not measured (set PG_URL to an empty truebench database)"
fi
