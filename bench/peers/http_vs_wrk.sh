#!/usr/bin/env bash
# The same local HTTP server (nginx from Debian, on loopback, one worker process, a static
# 17-byte file) driven by wrk (closed loop: each connection sends its next request when the
# previous answer arrives, as fast as it can) and by truebench loadstep --http (open loop:
# requests leave on a fixed schedule; latency counts from the planned send time), in one
# run. Prints wrk's throughput and latency, then truebench's at 50% and 90% of wrk's
# throughput, and the ratio of truebench's completed rate to its plan.
# Usage: bench/peers/http_vs_wrk.sh [SECONDS] [CONNECTIONS]   (defaults: 5 s, 4)
set -euo pipefail
secs=${1:-5}
conns=${2:-4}
cd "$(dirname "$0")/../.."

for p in nginx wrk; do
  command -v $p >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq nginx wrk >/dev/null; }
done
. bench/truebench_bin.sh
tmp=$(mktemp -d)
export TRUEBENCH_DB="$tmp/peer.db" TRUEBENCH_LOCK="$tmp/lock"
mkdir -p "$tmp/www" "$tmp/logs"
echo "hello from nginx" > "$tmp/www/index.html"
chmod 755 "$tmp" "$tmp/www"; chmod 644 "$tmp/www/index.html"   # nginx's workers are not root
port=18181
cat > "$tmp/nginx.conf" <<CONF
worker_processes 1;
pid $tmp/nginx.pid;
error_log $tmp/logs/error.log;
events { worker_connections 1024; }
http {
  access_log off;
  server { listen 127.0.0.1:$port; root $tmp/www; keepalive_requests 100000000; }
}
CONF
nginx -c "$tmp/nginx.conf" -p "$tmp"
trap 'kill $(cat "$tmp/nginx.pid") 2>/dev/null; rm -rf "$tmp"' EXIT
sleep 0.5
url="http://127.0.0.1:$port/"
pid=$(cat "$tmp/nginx.pid")

echo "machine: $(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) CPUs"
wrk -t1 -c"$conns" -d"${secs}s" --latency "$url" > "$tmp/wrk.txt"
wrk_rps=$(awk '/Requests\/sec/ {print $2}' "$tmp/wrk.txt")
if grep -q 'Non-2xx' "$tmp/wrk.txt"; then echo "wrk got error answers: $(grep Non-2xx "$tmp/wrk.txt")" >&2; exit 1; fi
echo "wrk (closed loop, 1 thread, $conns connections, ${secs} s): $wrk_rps requests/s"
grep -E '^ +(50|90|99)%' "$tmp/wrk.txt" | sed 's/^/  wrk latency /'

for share in 0.5 0.9; do
  rate=$(awk -v r="$wrk_rps" -v s="$share" 'BEGIN {printf "%d", r * s}')
  "$tb" loadstep --http "$url" --pid "$pid" --workers "$conns" --rates "$rate" \
    --step-duration "$secs" --warmup 1 --json 2>/dev/null > "$tmp/tb.json"
  python3 - "$tmp/tb.json" "$share" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); s = d["loadstep"]["steps"][0]
l, u = s["latency"], s["latency_uncorrected"]
print("truebench --http at %d%% of wrk's rate: planned %.0f/s, completed %.0f/s (ratio %.3f), valid %s" % (
    float(sys.argv[2]) * 100, s["planned_rate"], s["completed_rate"], s["completed_rate"] / s["planned_rate"], s["valid"]))
print("  latency from the planned send: p50 %.0f µs, p99 %.0f µs, max %.0f µs; from the actual send: p50 %.0f µs, p99 %.0f µs" % (
    l["p50"], l["p99"], l["max"], u["p50"], u["p99"]))
print("  server: %s CPU-µs and %s system calls per request" % (
    round(s["per_tx"].get("cpu_us", float("nan")), 1), round(s["per_tx"].get("syscalls", float("nan")), 2)))
PY
done
echo "wrk measures how fast the server answers when asked as fast as possible (closed loop):"
echo "its latency is the latency at saturation, and a stall delays the next request instead"
echo "of showing up in the percentiles. truebench sends on a schedule below saturation and"
echo "counts latency from the planned send, so queueing and stalls appear in its percentiles."
