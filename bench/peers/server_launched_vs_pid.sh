#!/usr/bin/env bash
# The same nginx (Debian; one worker process, a static file on loopback) driven by
# `truebench loadstep --http` two ways in one run, alternating: started by truebench itself
# (`--server`, its whole process tree costed) and started here and followed with `--pid`.
# Same rate, connections and step length. The two paths must give the same figures within
# noise: per request the context switches and CPU time of the server, and the latency p50.
# Prints each round, the medians of each path and their ratios.
# Usage: bench/peers/server_launched_vs_pid.sh [ROUNDS] [RATE]   (defaults: 3, 2000 requests/s)
set -euo pipefail
rounds=${1:-3}
rate=${2:-2000}
cd "$(dirname "$0")/../.."
. bench/truebench_bin.sh
tmp=$(mktemp -d)
export TRUEBENCH_DB="$tmp/results.db" TRUEBENCH_LOCK="$tmp/lock"
. bench/nginx_target.sh
nginx_target "$tmp" 1
bg=""
cleanup() { [ -n "$bg" ] && kill "$bg" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
url="http://127.0.0.1:$port/"
common=(--http "$url" --workers 2 --rates "$rate" --step-duration 3 --warmup 0.5 --json)
# One step's per-request figures: context switches, CPU µs, latency p50 µs.
figures() {
  python3 -c 'import json,sys; s=json.load(sys.stdin)["loadstep"]["variants"][0]["steps"][0]
t=s["per_tx"]; print(t.get("context_switches", "nan"), t.get("cpu_us", "nan"), s["latency"]["p50"], "valid" if s["valid"] else "INVALID")'
}
echo "machine: $(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); $rate requests/s, 2 connections, 3 s per step"
: > "$tmp/launched"; : > "$tmp/pid"
for i in $(seq "$rounds"); do
  "$tb" loadstep "${common[@]}" --server "$server" 2>/dev/null | figures >> "$tmp/launched"
  $server & bg=$!
  for _ in $(seq 50); do python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 0.1)" 2>/dev/null && break; sleep 0.1; done
  "$tb" loadstep "${common[@]}" --pid "$bg" 2>/dev/null | figures >> "$tmp/pid"
  kill "$bg"; wait "$bg" 2>/dev/null || true; bg=""
  echo "round $i: launched $(tail -1 "$tmp/launched") | --pid $(tail -1 "$tmp/pid")   (switches/req, CPU µs/req, p50 µs)"
done
python3 - "$tmp/launched" "$tmp/pid" <<'PY'
import statistics, sys
rows = [[l.split() for l in open(p)] for p in sys.argv[1:3]]
names = ["context switches per request", "server CPU µs per request", "latency p50 µs"]
for k, name in enumerate(names):
    a = statistics.median(float(r[k]) for r in rows[0])
    b = statistics.median(float(r[k]) for r in rows[1])
    ratio = a / b if b else float("nan")
    print(f"{name}: launched {a:.3g}, --pid {b:.3g}, ratio launched/--pid {ratio:.3f}")
PY
