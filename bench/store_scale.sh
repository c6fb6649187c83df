#!/usr/bin/env bash
# The results store at fleet scale, SQLite and PostgreSQL side by side in one run: 500
# synthetic hosts with 2 runs each (1,000 documents made from a real one, the timers
# fixture, by changing run_id, host and started_at), imported by 4 parallel `truebench
# import`s into each backend; then the newest run of each host (`compare
# --latest-per-host`'s query, Store::latest_per_host, best of 5) and `history --limit 1000`.
# Prints runs/s, ms, and the PostgreSQL / SQLite ratios. Figures: docs/store.md.
#
# PostgreSQL: a server of its own (Debian package postgresql: initdb into a temporary
# directory, a free port on 127.0.0.1; run as user postgres when root), stopped and removed
# at the end; or the database TRUEBENCH_BENCH_PG names (it must be empty).
# Usage: bench/store_scale.sh [HOSTS]   (default 500: about 2 minutes here)
set -euo pipefail
hosts=${1:-500}
cd "$(dirname "$0")/.."
cargo build --release --quiet --bin truebench --example store_latest
tb=$PWD/target/release/truebench
latest=$PWD/target/release/examples/store_latest
tmp=$(mktemp -d)
chmod 755 "$tmp"
export TRUEBENCH_LOCK="$tmp/lock"
pgdata="$tmp/pg"
cleanup() {
  if [ -f "$pgdata/postmaster.pid" ]; then as_pg "$pgbin/pg_ctl" -D "$pgdata" -m immediate -w stop >/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
as_pg() { if [ "$EUID" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

if [ -n "${TRUEBENCH_BENCH_PG:-}" ]; then
  pg_url=$TRUEBENCH_BENCH_PG
else
  pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
  [ -x "$pgbin/initdb" ] || { echo "error: no PostgreSQL server (install the Debian package postgresql)" >&2; exit 2; }
  mkdir "$pgdata"
  [ "$EUID" -eq 0 ] && chown postgres "$tmp" "$pgdata"
  as_pg "$pgbin/initdb" -D "$pgdata" -U bench --auth=trust --no-sync -E UTF8 --locale=C.UTF-8 >/dev/null
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  # Default durability settings (fsync on): what a real server does per committed run.
  as_pg "$pgbin/pg_ctl" -D "$pgdata" -l "$tmp/pg.log" -w \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $tmp" start >/dev/null
  pg_url="postgresql://bench@127.0.0.1:$port/postgres"
fi
sqlite="$tmp/results.db"

python3 - "$hosts" "$tmp/docs" <<'PY'
import json, sys, os, datetime
hosts, out = int(sys.argv[1]), sys.argv[2]
os.makedirs(out)
base = json.load(open("tests/fixtures/documents/timers.json"))
t0 = datetime.datetime(2026, 11, 1, tzinfo=datetime.timezone.utc)
for h in range(hosts):
    for r in range(2):
        d = dict(base)
        d["host"] = "host-%03d" % h
        d["run_id"] = "scale-%03d-%d" % (h, r)
        d["started_at"] = (t0 + datetime.timedelta(minutes=h, days=r)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
        d["tags"] = {"fleet": "scale", "rack": str(h % 20)}
        json.dump(d, open(os.path.join(out, d["run_id"] + ".json"), "w"))
PY
n=$((hosts * 2))
echo "machine: $(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); $n documents of $hosts hosts ($(du -sh "$tmp/docs" | cut -f1))"

# The first import creates the schema (not timed), as a store in use has one.
first=scale-000-0.json   # (not `ls | head`: with pipefail, ls dies of SIGPIPE on a long list)
for db in "$sqlite" "$pg_url"; do "$tb" --db "$db" import "$tmp/docs/$first" >/dev/null; done

declare -A rate ms hist
for kind in sqlite postgresql; do
  db=$sqlite; [ "$kind" = postgresql ] && db=$pg_url
  start=$(date +%s.%N)
  ls "$tmp/docs" | grep -vx "$first" | xargs -P 4 -I{} "$tb" --db "$db" import "$tmp/docs/{}" >/dev/null
  end=$(date +%s.%N)
  rate[$kind]=$(awk -v n=$((n - 1)) -v s="$start" -v e="$end" 'BEGIN { printf "%.1f", n / (e - s) }')
  read -r found best < <(TRUEBENCH_DB=$db "$latest")
  [ "$found" -eq "$hosts" ] || { echo "error: $kind: latest per host found $found hosts, not $hosts" >&2; exit 1; }
  ms[$kind]=$best
  if "$tb" compare --help 2>/dev/null | grep -q -- --latest-per-host; then
    start=$(date +%s.%N)
    "$tb" --db "$db" compare --latest-per-host >/dev/null
    end=$(date +%s.%N)
    ms[$kind]="$best (the command: $(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.0f", (e - s) * 1000 }') ms)"
  fi
  start=$(date +%s.%N)
  "$tb" --db "$db" history --limit "$n" >/dev/null
  end=$(date +%s.%N)
  hist[$kind]=$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.0f", (e - s) * 1000 }')
  stored=$("$tb" --db "$db" history --json --limit "$((n + 10))" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
  [ "$stored" -eq "$n" ] || { echo "error: $kind stored $stored runs, not $n" >&2; exit 1; }
  printf '%-10s import %8s runs/s (4 parallel importers)   latest per host %s ms   history of %d runs %s ms\n' \
    "$kind" "${rate[$kind]}" "${ms[$kind]}" "$n" "${hist[$kind]}"
done
awk -v a="${rate[postgresql]}" -v b="${rate[sqlite]}" 'BEGIN { printf "ratio PostgreSQL / SQLite: import %.2f\n", a / b }'
