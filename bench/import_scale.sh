#!/usr/bin/env bash
# Import and compare at scale: documents of N results (default 10,000, 20,000 and 40,000),
# each made from a real one (the timers fixture's first result, repeated with a `case`
# param of its own), imported into a fresh SQLite store; then the largest compared with
# the one of half its size. Prints seconds and peak RSS per step, and the time ratio per
# doubling (a linear cost doubles, a quadratic one quadruples). Run it under the machine's
# measurement lock. Figures: docs/safety.md (the bar: 40,000 results within 10 s).
# Usage: bench/import_scale.sh [N...]   (TRUEBENCH_BIN=PATH: use that truebench binary, no build)
set -euo pipefail
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(10000 20000 40000)
cd "$(dirname "$0")/.."
. bench/truebench_bin.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TRUEBENCH_LOCK="$tmp/lock"
for n in "${sizes[@]}"; do
  python3 - "$n" "$tmp/doc-$n.json" <<'PY'
import json, sys
n, out = int(sys.argv[1]), sys.argv[2]
d = json.load(open("tests/fixtures/documents/timers.json"))
first = d["results"][0]
d["results"] = [dict(first, params=dict(first["params"], case=k)) for k in range(n)]
d["run_id"] = "scale-%d" % n
json.dump(d, open(out, "w"))
PY
done
echo "machine: $(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
prev=""
for n in "${sizes[@]}"; do
  /usr/bin/time -f "%e %M" -o "$tmp/t" "$tb" --db "$tmp/results.db" import "$tmp/doc-$n.json" >/dev/null
  read -r s kb <"$tmp/t"
  ratio=""
  [ -n "$prev" ] && ratio=$(awk -v a="$prev" -v b="$s" 'BEGIN { printf " (%.2fx the previous)", b / a }')
  printf 'import %6d results (%s): %6.2f s, peak RSS %d MB%s\n' "$n" "$(du -h "$tmp/doc-$n.json" | cut -f1)" "$s" $((kb / 1024)) "$ratio"
  prev=$s
done
if [ ${#sizes[@]} -ge 2 ]; then
  a=${sizes[-2]} b=${sizes[-1]}
  /usr/bin/time -f "%e %M" -o "$tmp/t" "$tb" --db "$tmp/results.db" compare "scale-$a" "scale-$b" >/dev/null
  read -r s kb <"$tmp/t"
  printf 'compare %d with %d results: %.2f s, peak RSS %d MB\n' "$a" "$b" "$s" $((kb / 1024))
fi
