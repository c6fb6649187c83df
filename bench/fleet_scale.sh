#!/usr/bin/env bash
# The controller's side of a fleet at scale: 500 host documents (made from one real run of
# this machine, each with its own run id, host, tags and results scaled by a per-host
# factor) imported into one database, one `truebench import` per document as the
# playbook does, then ranked (`compare --latest-per-host --by tag:host`) and listed
# (`history --tag`). Prints the time per host for the import, the ranking's time and
# line count, and the database size. Figures are recorded in docs/fleet.md.
# Usage: bench/fleet_scale.sh [HOSTS]   (default 500)
set -euo pipefail
hosts=${1:-500}
cd "$(dirname "$0")/.."
cargo build --release --quiet
tb=$PWD/target/release/truebench
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TRUEBENCH_LOCK=$tmp/run.lock

# One real document of this machine (short timers run).
"$tb" --db "$tmp/source.db" run timers --samples 5 --json --tag host=source > "$tmp/source.json"
mkdir "$tmp/docs"
python3 - "$tmp/source.json" "$tmp/docs" "$hosts" <<'PY'
import json, sys, random
src, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
doc = json.load(open(src))
rng = random.Random(42)
scaled = ("median", "ci95_low", "ci95_high", "mean", "min", "max")
for i in range(n):
    d = json.loads(json.dumps(doc))
    host = f"host-{i:03d}"
    d["run_id"] = f"{doc['run_id'][:16]}-{i:04d}"
    d["host"] = host
    d["env"]["hostname"] = host
    d["tags"] = {"host": host, "group": f"rack-{i % 20:02d}", "fleet": "scale"}
    f = rng.uniform(0.8, 1.25)  # this host's speed: every figure scaled (order statistics scale)
    for r in d["results"]:
        r["samples"] = [s * f for s in r["samples"]]
        for k in scaled:
            r["stats"][k] *= f
        r.pop("derived", None)
    json.dump(d, open(f"{out}/{host}.json", "w"))
PY
bytes=$(stat -c %s "$tmp/docs/host-000.json")
echo "fleet_scale: $hosts documents of $((bytes / 1024)) KiB each ($(jq '.results | length' "$tmp/source.json") results)"

db=$tmp/fleet.db
t0=$(date +%s%N)
for f in "$tmp"/docs/*.json; do
  "$tb" --db "$db" import "$f" >/dev/null
done
t1=$(date +%s%N)
import_ms=$(( (t1 - t0) / 1000000 ))
echo "fleet_scale: import: ${import_ms} ms for $hosts hosts = $(echo "scale=1; $import_ms / $hosts" | bc) ms per host"

t0=$(date +%s%N)
if "$tb" --db "$db" compare --latest-per-host --by tag:host > "$tmp/rank.txt" 2> "$tmp/rank.err"; then
  t1=$(date +%s%N)
  echo "fleet_scale: ranking: $(( (t1 - t0) / 1000000 )) ms, $(wc -l < "$tmp/rank.txt") lines, widest $(awk '{ if (length > m) m = length } END { print m }' "$tmp/rank.txt") characters"
  head -15 "$tmp/rank.txt"
else
  echo "fleet_scale: ranking unavailable: $(head -1 "$tmp/rank.err")"
fi

t0=$(date +%s%N)
n=$("$tb" --db "$db" history --json --limit 100000 --tag fleet=scale --tag group=rack-07 | jq length)
t1=$(date +%s%N)
echo "fleet_scale: history --tag over $hosts runs: $(( (t1 - t0) / 1000000 )) ms ($n runs of rack-07)"
echo "fleet_scale: database: $(( $(stat -c %s "$db") / 1024 )) KiB"
