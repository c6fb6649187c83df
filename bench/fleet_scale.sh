#!/usr/bin/env bash
# The controller's side of a fleet at scale. HOSTS host documents made from real runs of
# this machine: most hosts are a `run timers` document with every figure of a row scaled by
# the host's own factor and the row's own factor, each log-normal with σ 1% (hosts of one
# model); planted among them, every 50th host (from host 3) is the same machine's run under
# another clocksource (measured here when run as root and the kernel offers one: the
# clocksource is switched for that run and restored), and every 50th host from host 17 is
# 1.35x slower on every row. Imported in one `truebench import DIR`,
# ranked with `compare --latest-per-host` (the fleet view), checked against the plants,
# and the same fleet without plants (A/A); then `report` of every run and `history --tag`.
# Import and fleet view (`compare --latest-per-host --json`) are timed, each and together,
# with peak RSS (/usr/bin/time) and the document size, on both stores: SQLite and
# a throwaway PostgreSQL server started here as tests/common/pg.rs starts one (initdb and
# pg_ctl of the Debian package postgresql, as the postgres user when run as root; fsync
# off), stopped and removed at exit.
# Prints each figure; they are recorded in docs/fleet.md.
# Usage: flock /tmp/truebench-measure.lock bench/fleet_scale.sh [HOSTS]   (default 500)
set -euo pipefail
hosts=${1:-500}
cd "$(dirname "$0")/.."
. bench/truebench_bin.sh
tmp=$(mktemp -d)
cs=/sys/devices/system/clocksource/clocksource0/current_clocksource
orig_cs=$(cat "$cs" 2>/dev/null || echo "")
pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
restore() {
  [ -n "$orig_cs" ] && [ -w "$cs" ] && echo "$orig_cs" > "$cs" 2>/dev/null
  [ -f "$tmp/pg/data/postmaster.pid" ] && as_pg "$pgbin/pg_ctl" -D "$tmp/pg/data" -m immediate stop > /dev/null 2>&1
  rm -rf "$tmp"
}
trap restore EXIT
export TRUEBENCH_LOCK=$tmp/run.lock
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
# All CPU time and steal, in ticks, from /proc/stat; steal_since T0: the share (%) stolen since.
cpu_ticks() { awk '/^cpu /{t=0; for (i = 2; i <= 9; i++) t += $i; print t, $9}' /proc/stat; }
steal_since() { # "TOTAL STEAL" at the start
  local now; now=$(cpu_ticks)
  awk -v a="$1" -v b="$now" 'BEGIN{split(a, x, " "); split(b, y, " "); d = y[1] - x[1];
    printf "%.1f", (d > 0 ? 100 * (y[2] - x[2]) / d : 0)}'
}

# Real documents of this machine: its clocksource, and another one when it can switch.
"$tb" --db "$tmp/source.db" run timers --json --tag host=source > "$tmp/source.json"
other=""
for c in $(cat /sys/devices/system/clocksource/clocksource0/available_clocksource 2>/dev/null); do
  [ "$c" != "$orig_cs" ] && [ -w "$cs" ] && other=$c && break
done
if [ -n "$other" ]; then
  echo "$other" > "$cs"
  "$tb" --db "$tmp/source.db" run timers --json --tag host=source > "$tmp/other.json"
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
    host = f"host-{i:05d}"
    d["run_id"] = f"{doc['run_id'][:16]}-{i:05d}"
    d["host"] = host
    d["env"]["hostname"] = host
    d["tags"] = {"host": host, "group": f"rack-{i % 20:02d}", "fleet": "scale"}
    level = 1.35 if kind == "slower" else rng.lognormvariate(0, 0.01)
    for r in d["results"]:
        f = level * rng.lognormvariate(0, 0.01)
        r["samples"] = [s * f for s in r["samples"]]
        for k in scaled:
            if k in r["stats"]:
                r["stats"][k] *= f
        r.pop("derived", None)
        rounds = r.get("rounds") or {}
        # Rounds are stored by column (a list per figure); earlier documents kept a list of
        # rounds, each with its median.
        if isinstance(rounds.get("median"), list):
            rounds["median"] = [m * f for m in rounds["median"]]
        for rd in rounds.get("rounds", []):
            rd["median"] *= f
    json.dump(d, open(f"{out}/{host}.json", "w"))
    if kind != "typical":
        kinds[host] = kind
json.dump(kinds, open(f"{out}.planted", "w"))
PY
}
make_fleet "$tmp/docs" 1
make_fleet "$tmp/aa" 0
bytes=$(stat -c %s "$tmp/docs/host-00000.json")
echo "fleet_scale: $hosts documents of $((bytes / 1024)) KiB each ($(jq '.results | length' "$tmp/source.json") results), $(jq length "$tmp/docs.planted") planted"

# A throwaway PostgreSQL server.
pg_url=""
if [ -n "$pgbin" ]; then
  mkdir -p "$tmp/pg" && echo "Zq9-pw-Xk7v" > "$tmp/pg/pw"
  [ "$(id -u)" = 0 ] && chown -R postgres "$tmp/pg" && chmod 755 "$tmp"
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  as_pg "$pgbin/initdb" -D "$tmp/pg/data" -U tb --pwfile "$tmp/pg/pw" --auth-local=trust \
    --auth-host=scram-sha-256 --no-sync --no-instructions -E UTF8 --locale=C.UTF-8 > /dev/null
  as_pg "$pgbin/pg_ctl" -D "$tmp/pg/data" -l "$tmp/pg/log" -w -t 30 \
    -o "-c listen_addresses=127.0.0.1 -k $tmp/pg -p $port -c fsync=off -c synchronous_commit=off -c full_page_writes=off" start > /dev/null
  pg_url="postgresql://tb:Zq9-pw-Xk7v@127.0.0.1:$port/postgres"
else
  echo "fleet_scale: no PostgreSQL server binaries (the Debian package postgresql): SQLite only"
fi

# ms and peak RSS (MiB) of a command, its stdout to $out.
timed() { # OUT CMD...
  local out=$1; shift
  local t0; t0=$(date +%s%N)
  /usr/bin/time -f %M -o "$tmp/rss" "$@" > "$out"
  echo "$(ms "$t0") ms, peak RSS $(( $(cat "$tmp/rss") / 1024 )) MiB"
}

for store in sqlite postgresql; do
  case $store in
    sqlite) db=$tmp/fleet.db ;;
    postgresql) [ -n "$pg_url" ] || continue; db=$pg_url ;;
  esac
  t_all=$(date +%s%N); ticks=$(cpu_ticks)
  echo "fleet_scale: [$store] import (one process, one directory): $(timed /dev/null "$tb" --db "$db" import "$tmp/docs") for $hosts documents of $((bytes / 1024)) KiB"
  echo "fleet_scale: [$store] fleet view (compare --latest-per-host --json): $(timed "$tmp/rank-$store.json" "$tb" --db "$db" compare --latest-per-host --json)"
  echo "fleet_scale: [$store] import + view: $(ms "$t_all") ms for $hosts hosts (load $(cut -d' ' -f1-3 /proc/loadavg), steal $(steal_since "$ticks")%)"
  "$tb" --db "$db" compare --latest-per-host > "$tmp/rank.txt"
  echo "fleet_scale: [$store] the text view: $(wc -l < "$tmp/rank.txt") lines, widest $(wc -L < "$tmp/rank.txt") characters"
done
db=$tmp/fleet.db
"$tb" --db "$db" compare --latest-per-host --json > "$tmp/rank.json"
"$tb" --db "$db" compare --latest-per-host > "$tmp/rank.txt"
python3 - "$tmp/rank.json" "$tmp/docs.planted" <<'PY'
import json, sys
v = json.load(open(sys.argv[1])); planted = json.load(open(sys.argv[2]))
out = {h["host"] for h in v["hosts"] if h["outlier"]}
found = sorted(set(planted) & out); missed = sorted(set(planted) - out); extra = sorted(out - set(planted))
print(f"fleet_scale: outliers {len(out)}: planted found {len(found)} of {len(planted)}, missed {missed or 'none'}, others {extra or 'none'}")
print(f"fleet_scale: own noise of host x rows: {v['noise']}")
print(f"fleet_scale: FDR {v['fdr_q']:.0%} over {v['fdr_tests']['hosts']} hosts' shifts and {v['fdr_tests']['host_rows']} host x rows")
runs = {h['run']: h['host'] for h in v['hosts']}
for g in v["cause_groups"]:
    kinds = sorted({planted.get(runs[r], 'not planted') for r in g['hosts']})
    print(f"fleet_scale: {g['kind']} group of {len(g['hosts'])} ({', '.join(kinds)}): {g['label']}")
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
