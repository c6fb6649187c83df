#!/usr/bin/env bash
# The controller's side of a fleet at scale. HOSTS host documents made from real runs of
# this machine: most hosts are a `run timers` document with every figure scaled by the
# host's own factor within ±3%; planted among them, every 50th host (from host 3) is the
# same machine's run under another clocksource (measured here when run as root and the
# kernel offers one: the clocksource is switched for that run and restored), and every 50th
# host from host 17 is 1.3x slower on every row. Imported in one `truebench import DIR`,
# ranked with `compare --latest-per-host` (the fleet view), checked against the plants,
# and the same fleet without plants (A/A); then `report` of every run and `history --tag`.
# Prints each figure; they are recorded in docs/fleet.md.
# Usage: flock /tmp/truebench-measure.lock bench/fleet_scale.sh [HOSTS]   (default 500)
set -euo pipefail
hosts=${1:-500}
cd "$(dirname "$0")/.."
. bench/truebench_bin.sh
tmp=$(mktemp -d)
cs=/sys/devices/system/clocksource/clocksource0/current_clocksource
orig_cs=$(cat "$cs" 2>/dev/null || echo "")
restore() { [ -n "$orig_cs" ] && [ -w "$cs" ] && echo "$orig_cs" > "$cs" 2>/dev/null; rm -rf "$tmp"; }
trap restore EXIT
export TRUEBENCH_LOCK=$tmp/run.lock
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }

# Real documents of this machine: its clocksource, and another one when it can switch.
"$tb" --db "$tmp/source.db" run timers --samples 10 --json --tag host=source > "$tmp/source.json"
other=""
for c in $(cat /sys/devices/system/clocksource/clocksource0/available_clocksource 2>/dev/null); do
  [ "$c" != "$orig_cs" ] && [ -w "$cs" ] && other=$c && break
done
if [ -n "$other" ]; then
  echo "$other" > "$cs"
  "$tb" --db "$tmp/source.db" run timers --samples 10 --json --tag host=source > "$tmp/other.json"
  echo "$orig_cs" > "$cs"
  echo "fleet_scale: planted clocksource: $other (this machine: $orig_cs)"
else
  echo "fleet_scale: no other clocksource to switch to (needs root and a second clocksource): only uniformly slower hosts are planted"
fi

make_fleet() { # DIR PLANTED
  python3 - "$tmp/source.json" "$tmp/other.json" "$1" "$hosts" "$2" <<'PY'
import json, os, sys, random
src, oth, out, n, planted = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5] == "1"
doc = json.load(open(src))
other = json.load(open(oth)) if os.path.exists(oth) else None
rng = random.Random(42)
os.makedirs(out)
scaled = ("median", "ci95_low", "ci95_high", "mean", "min", "max")
kinds = {}
for i in range(n):
    kind = "typical"
    if planted and other is not None and i % 50 == 3:
        kind = "clocksource"
    elif planted and i % 50 == 17:
        kind = "slower"
    d = json.loads(json.dumps(other if kind == "clocksource" else doc))
    host = f"host-{i:03d}"
    d["run_id"] = f"{doc['run_id'][:16]}-{i:04d}"
    d["host"] = host
    d["env"]["hostname"] = host
    d["tags"] = {"host": host, "group": f"rack-{i % 20:02d}", "fleet": "scale"}
    f = 1.3 if kind == "slower" else rng.uniform(0.97, 1.03)
    for r in d["results"]:
        r["samples"] = [s * f for s in r["samples"]]
        for k in scaled:
            if k in r["stats"]:
                r["stats"][k] *= f
        r.pop("derived", None)
    json.dump(d, open(f"{out}/{host}.json", "w"))
    if kind != "typical":
        kinds[host] = kind
json.dump(kinds, open(f"{out}.planted", "w"))
PY
}
make_fleet "$tmp/docs" 1
make_fleet "$tmp/aa" 0
bytes=$(stat -c %s "$tmp/docs/host-000.json")
echo "fleet_scale: $hosts documents of $((bytes / 1024)) KiB each ($(jq '.results | length' "$tmp/source.json") results), $(jq length "$tmp/docs.planted") planted"

db=$tmp/fleet.db
t0=$(date +%s%N)
"$tb" --db "$db" import "$tmp/docs" > /dev/null
import_ms=$(ms "$t0")
echo "fleet_scale: import (one process, one directory): ${import_ms} ms for $hosts hosts"

t0=$(date +%s%N)
"$tb" --db "$db" compare --latest-per-host > "$tmp/rank.txt"
rank_ms=$(ms "$t0")
echo "fleet_scale: fleet view: ${rank_ms} ms, $(wc -l < "$tmp/rank.txt") lines, widest $(wc -L < "$tmp/rank.txt") characters"
echo "fleet_scale: import + rank: $(( import_ms + rank_ms )) ms"
"$tb" --db "$db" compare --latest-per-host --json > "$tmp/rank.json"
python3 - "$tmp/rank.json" "$tmp/docs.planted" <<'PY'
import json, sys
v = json.load(open(sys.argv[1])); planted = json.load(open(sys.argv[2]))
out = {h["host"] for h in v["hosts"] if h["outlier"]}
found = sorted(set(planted) & out); missed = sorted(set(planted) - out); extra = sorted(out - set(planted))
print(f"fleet_scale: outliers {len(out)}: planted found {len(found)} of {len(planted)}, missed {missed or 'none'}, others {extra or 'none'}")
for g in v["cause_groups"]:
    kinds = sorted({planted.get(v['hosts'][[h['run'] for h in v['hosts']].index(r)]['host'], 'not planted') for r in g['hosts']})
    print(f"fleet_scale: group of {len(g['hosts'])} ({', '.join(kinds)}): {g['label']}")
print(f"fleet_scale: --json {len(open(sys.argv[1]).read()) // 1024} KiB")
PY
cat "$tmp/rank.txt"

"$tb" --db "$tmp/aa.db" import "$tmp/aa" > /dev/null
echo "fleet_scale: A/A (no plants): $("$tb" --db "$tmp/aa.db" compare --latest-per-host --json | jq '[.hosts[] | select(.outlier)] | length') outlier(s) among $hosts hosts"

ids=$("$tb" --db "$db" history --json --limit 100000 --tag fleet=scale | jq -r '.[].run_id')
t0=$(date +%s%N)
# shellcheck disable=SC2086
"$tb" --db "$db" report $ids -o "$tmp/fleet.html"
echo "fleet_scale: report of $hosts runs: $(ms "$t0") ms, $(( $(stat -c %s "$tmp/fleet.html") / 1024 )) KiB"

t0=$(date +%s%N)
n=$("$tb" --db "$db" history --json --limit 100000 --tag fleet=scale --tag group=rack-07 | jq length)
echo "fleet_scale: history --tag over $hosts runs: $(ms "$t0") ms ($n runs of rack-07)"
echo "fleet_scale: database: $(( $(stat -c %s "$db") / 1024 )) KiB"
