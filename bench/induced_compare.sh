#!/usr/bin/env bash
# Induced differences, with no calibration (root): for each scenario a run A as the machine
# is, a run B with one thing changed, both in a fresh store, then `compare A B`. Prints per
# scenario the rows called, and per called row its ratio and the causes that claim it.
#   quota       B inside a cgroup of half a CPU (cpu.cfs_quota_us 50000 per 100000)
#   clocksource B with the next available clocksource (restored after, even on Ctrl-C)
#   neighbour   B beside a busy loop pinned to the last usable CPU
# Run it on a quiet machine and say the load (it prints the load average at start and end).
# Usage: sudo bench/induced_compare.sh [SCENARIO...] [-- SUITES]
#        (default: all three; suites default: timers,ctx,c2c; TRUEBENCH_BIN: the binary)
set -euo pipefail
scenarios=()
suites=timers,ctx,c2c
while [ $# -gt 0 ]; do
  case "$1" in
    --) suites=${2:?-- needs suites}; shift 2 ;;
    quota | clocksource | neighbour) scenarios+=("$1"); shift ;;
    *) echo "error: unknown scenario '$1' (quota, clocksource, neighbour)" >&2; exit 2 ;;
  esac
done
[ ${#scenarios[@]} -gt 0 ] || scenarios=(quota clocksource neighbour)
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
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
echo "induced compare, $(date -u +%FT%TZ), suites $suites, load: $(cut -d' ' -f1-3 /proc/loadavg)"

run() { # run NAME [PREFIX...]: a run document into $tmp/NAME.json
  local name=$1
  shift
  "$@" "$tb" run "$suites" --json >"$tmp/$name.json" 2>"$tmp/$name.err" ||
    { echo "error: run $name failed:" >&2; cat "$tmp/$name.err" >&2; exit 1; }
}
in_group() { # the command, joined to the half-CPU group first
  sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$cg" "$@"
}

for s in "${scenarios[@]}"; do
  export TRUEBENCH_DB=$tmp/$s.db TRUEBENCH_LOCK=$tmp/$s.lock
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
      last=$(taskset -pc $$ | sed 's/.*: //' | tr ',' '\n' | tail -1 | sed 's/.*-//')
      taskset -c "$last" sh -c 'while :; do :; done' &
      hog=$!
      run "$s-b"
      kill "$hog"; hog=
      what="B beside a busy loop on CPU $last"
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
