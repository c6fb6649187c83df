#!/usr/bin/env bash
# Induced differences, with no calibration (root): for each scenario a run A as the machine
# is, a run B with one thing changed, both in a fresh store, then `compare A B`. Prints per
# scenario the rows called, and per called row its ratio and the causes that claim it.
#   quota       B inside a cgroup of half a CPU (cpu.cfs_quota_us 50000 per 100000)
#   clocksource B with the next available clocksource (restored after, even on Ctrl-C)
#   neighbour   B beside a busy loop pinned to the last usable CPU
#   membw       B beside a process streaming two 256 MiB arrays (memmove) pinned to the last
#               usable CPU: a memory-bandwidth neighbour (python3, else stress-ng --stream)
# INDUCED_KEEP=DIR keeps every run document and comparison in DIR.
# Run it on a quiet machine and say the load (it prints the load average at start and end).
# Usage: sudo bench/induced_compare.sh [SCENARIO...] [-- SUITES]
#        (default: all four; suites default: timers,ctx,c2c, for membw memory.bandwidth;
#        TRUEBENCH_BIN: the binary)
set -euo pipefail
scenarios=()
suites=
while [ $# -gt 0 ]; do
  case "$1" in
    --) suites=${2:?-- needs suites}; shift 2 ;;
    quota | clocksource | neighbour | membw) scenarios+=("$1"); shift ;;
    *) echo "error: unknown scenario '$1' (quota, clocksource, neighbour, membw)" >&2; exit 2 ;;
  esac
done
[ ${#scenarios[@]} -gt 0 ] || scenarios=(quota clocksource neighbour membw)
[ "$EUID" -eq 0 ] || { echo "error: the scenarios make cgroups and switch the clocksource: run as root" >&2; exit 2; }
cd "$(dirname "$0")/.."
. bench/truebench_bin.sh
tmp=$(mktemp -d)
cs=/sys/devices/system/clocksource/clocksource0/current_clocksource
cg=/sys/fs/cgroup/cpu/truebench-induced-$$
[ -e /sys/fs/cgroup/cpu/cpu.cfs_quota_us ] || cg=/sys/fs/cgroup/truebench-induced-$$
orig_cs=$(cat "$cs")
hog=
cleanup() {
  [ -n "$hog" ] && kill "$hog" 2>/dev/null || true
  echo "$orig_cs" >"$cs" 2>/dev/null || true
  rmdir "$cg" 2>/dev/null || true
  # INDUCED_KEEP=DIR keeps the documents and comparisons there.
  [ -n "${INDUCED_KEEP:-}" ] && mkdir -p "$INDUCED_KEEP" && cp "$tmp"/*.json "$INDUCED_KEEP"/ 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
echo "induced compare, $(date -u +%FT%TZ), suites ${suites:-per scenario}, load: $(cut -d' ' -f1-3 /proc/loadavg)"

run() { # run NAME [PREFIX...]: a run document into $tmp/NAME.json
  local name=$1
  shift
  "$@" "$tb" run "$run_suites" --json >"$tmp/$name.json" 2>"$tmp/$name.err" ||
    { echo "error: run $name failed:" >&2; cat "$tmp/$name.err" >&2; exit 1; }
}
in_group() { # the command, joined to the half-CPU group first
  sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$cg" "$@"
}
last_cpu() { # the last CPU this script may use
  taskset -pc $$ | sed 's/.*: //' | tr ',' '\n' | tail -1 | sed 's/.*-//'
}
# A memory-bandwidth neighbour on CPU $1: memmove between two 256 MiB arrays (8x a 32 MiB
# LLC) for as long as it runs, its rate on stderr ($tmp/membw.rate) when stopped.
# (The caller has checked one of the two is installed.)
stream_on() {
  if command -v python3 >/dev/null; then
    taskset -c "$1" python3 -c '
import signal, sys, time
n = 256 << 20
a, b = bytearray(b"\1" * n), bytearray(n)
t0, passes = time.monotonic(), 0
def done(*_):
    s = time.monotonic() - t0
    print(f"neighbour streamed {2 * n * passes / s / 1e9:.1f} GB/s (read + write) for {s:.0f} s", file=sys.stderr)
    sys.exit(0)
signal.signal(signal.SIGTERM, done)
while True:
    b[:] = a
    passes += 1
' 2>"$tmp/membw.rate" &
  elif command -v stress-ng >/dev/null; then
    stress-ng --stream 1 --taskset "$1" --metrics-brief 2>"$tmp/membw.rate" >&2 &
  else
    return 1
  fi
  hog=$!
}

for s in "${scenarios[@]}"; do
  export TRUEBENCH_DB=$tmp/$s.db TRUEBENCH_LOCK=$tmp/$s.lock
  case "$s" in membw) run_suites=${suites:-memory.bandwidth} ;; *) run_suites=${suites:-timers,ctx,c2c} ;; esac
  if [ "$s" = membw ] && ! command -v python3 >/dev/null && ! command -v stress-ng >/dev/null; then
    echo "membw: needs python3 or stress-ng (apt-get install stress-ng) for the streaming neighbour: skipped"
    continue
  fi
  run "$s-a"
  case "$s" in
    quota)
      mkdir -p "$cg"
      if [ -e "$cg/cpu.cfs_quota_us" ]; then
        echo 100000 >"$cg/cpu.cfs_period_us" && echo 50000 >"$cg/cpu.cfs_quota_us"
      else
        echo "50000 100000" >"$cg/cpu.max"
      fi
      run "$s-b" in_group
      rmdir "$cg"
      what="B in half a CPU of quota"
      ;;
    clocksource)
      to=$(tr ' ' '\n' </sys/devices/system/clocksource/clocksource0/available_clocksource |
        grep -v -x -e "$orig_cs" -e jiffies -e '' | head -1)
      [ -n "$to" ] || { echo "clocksource: no second clocksource here ($orig_cs only): skipped"; continue; }
      echo "$to" >"$cs"
      run "$s-b"
      echo "$orig_cs" >"$cs"
      what="B at clocksource $to (A at $orig_cs)"
      ;;
    neighbour)
      last=$(last_cpu)
      taskset -c "$last" sh -c 'while :; do :; done' &
      hog=$!
      run "$s-b"
      kill "$hog"; hog=
      what="B beside a busy loop on CPU $last"
      ;;
    membw)
      last=$(last_cpu)
      stream_on "$last"
      sleep 1
      kill -0 "$hog" 2>/dev/null || { echo "error: the streaming neighbour did not start:" >&2; cat "$tmp/membw.rate" >&2; exit 1; }
      run "$s-b"
      kill "$hog"; wait "$hog" 2>/dev/null || true; hog=
      what="B beside a memory-bandwidth neighbour on CPU $last ($(tail -1 "$tmp/membw.rate"))"
      ;;
  esac
  ida=$(jq -r .run_id "$tmp/$s-a.json")
  idb=$(jq -r .run_id "$tmp/$s-b.json")
  "$tb" compare "$ida" "$idb" --json >"$tmp/$s.cmp.json"
  echo
  echo "== $s: $what"
  jq -r '"rows \(.rows|length): \([.rows[].verdict]|group_by(.)|map("\(length) \(.[0])")|join(", "))"' "$tmp/$s.cmp.json"
  jq -r '.rows[] | select(.verdict == "B worse" or .verdict == "B better")
    | "  \(.benchmark) \(.params) [\(.placement)]: B/A \(.ratio*1000|round/1000) (MDE \(.mde*100|round)%); "
      + ([.explanations[] | select(.claim == "explains" or .claim == "partly" or .claim == "contributes")
          | "\(.cause) \(.claim)"] | if length == 0 then "no cause" else join(", ") end)' "$tmp/$s.cmp.json"
done
echo
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
