#!/usr/bin/env bash
# Memory figures side by side in one run: truebench memory.bandwidth triad against a plain C
# STREAM-style triad (gcc -O3 -march=native, OpenMP) at 1 and N threads, alternating; then
# sysbench memory (1 KiB default block, and a block far larger than the LLC), truebench
# memory.per-event (per-event and batch timing), and mbw's memcpy. Prints a table of figures
# and ratios. Usage: bench/peers/memory_vs_peers.sh [ROUNDS]   (default 3)
set -euo pipefail
rounds=${1:-3}
cd "$(dirname "$0")/../.."
need=()
command -v sysbench >/dev/null || need+=(sysbench)
command -v mbw >/dev/null || need+=(mbw)
command -v gcc >/dev/null || need+=(gcc)
if [ ${#need[@]} -gt 0 ]; then
  echo "installing ${need[*]}..." >&2
  apt-get update -qq && apt-get install -y -qq "${need[@]}" >/dev/null
fi
. bench/truebench_bin.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TRUEBENCH_DB="$tmp/peer.db" TRUEBENCH_LOCK="$tmp/lock"
gcc -O3 -march=native -fopenmp bench/peers/stream_triad.c -o "$tmp/stream_triad"
n=$(nproc)
array=128M
elements=$((128 * 1024 * 1024 / 8))

median() { sort -g | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }
tbfield() { python3 -c "
import json,sys
d=json.load(sys.stdin)
for r in d['results']:
    p=r['params']
    if all(str(p.get(k))==v for k,v in (a.split('=') for a in sys.argv[1:])):
        print('%.1f' % r['stats']['median']); break
" "$@"; }

for i in $(seq "$rounds"); do
  OMP_NUM_THREADS=1 OMP_PROC_BIND=true "$tmp/stream_triad" $elements 11 >> "$tmp/c1"
  OMP_NUM_THREADS=$n OMP_PROC_BIND=spread "$tmp/stream_triad" $elements 11 >> "$tmp/cn"
  "$tb" run memory.bandwidth --array-size $array --json > "$tmp/tb.json"
  tbfield kernel=triad stores=regular threads=1 < "$tmp/tb.json" >> "$tmp/t1"
  tbfield kernel=triad stores=regular threads=$n < "$tmp/tb.json" >> "$tmp/tn"
  tbfield kernel=copy stores=regular threads=1 < "$tmp/tb.json" >> "$tmp/copy1"
  tbfield kernel=fill stores=regular threads=1 < "$tmp/tb.json" >> "$tmp/fill1"
  echo "round $i: C triad 1T $(tail -1 "$tmp/c1"), truebench $(tail -1 "$tmp/t1"); C ${n}T $(tail -1 "$tmp/cn"), truebench $(tail -1 "$tmp/tn") MB/s" >&2
done
c1=$(median < "$tmp/c1"); cn=$(median < "$tmp/cn"); t1=$(median < "$tmp/t1"); tn=$(median < "$tmp/tn"); copy1=$(median < "$tmp/copy1"); fill1=$(median < "$tmp/fill1")

# sysbench reports MiB/s (2^20); converted to MB/s (10^6) here.
sb_small=$(sysbench memory --threads=1 --time=5 run | awk '/MiB\/sec/ {gsub(/[()]/,""); print $(NF-1) * 1.048576}')
sb_big=$(sysbench memory --threads=1 --time=5 --memory-block-size=256M --memory-total-size=50G run | awk '/MiB\/sec/ {gsub(/[()]/,""); print $(NF-1) * 1.048576}')
"$tb" run memory.per-event --json > "$tmp/pe.json"
pe=$(tbfield timing=per-event < "$tmp/pe.json"); pb=$(tbfield timing=batch < "$tmp/pe.json")
# mbw: memcpy of a 128 MiB array, MiB/s counting the copied bytes once.
mbw_copy=$(mbw -q -n 5 -t 0 128 | awk '/^AVG/ {print $(NF-1) * 1.048576}')

ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", a / b}'; }
echo "machine: $(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $n CPUs; arrays 128 MiB"
printf '%-46s %12s  %s\n' "figure (MB/s = 10^6 B/s)" "MB/s" "ratio"
printf '%-46s %12s  %s\n' "C triad, 1 thread (gcc -O3 -march=native)" "$c1" ""
printf '%-46s %12s  %s\n' "truebench triad, 1 thread" "$t1" "$(ratio "$t1" "$c1") of C"
printf '%-46s %12s  %s\n' "C triad, $n threads" "$cn" ""
printf '%-46s %12s  %s\n' "truebench triad, $n threads" "$tn" "$(ratio "$tn" "$cn") of C"
printf '%-46s %12s  %s\n' "sysbench memory, 1 KiB block (default)" "$sb_small" "$(ratio "$sb_small" "$pe") of truebench per-event"
printf '%-46s %12s  %s\n' "truebench memory.per-event, per-event timing" "$pe" ""
printf '%-46s %12s  %s\n' "truebench memory.per-event, batch timing" "$pb" "$(ratio "$pb" "$pe") of per-event"
printf '%-46s %12s  %s\n' "sysbench memory, 256 MiB block (write-only)" "$sb_big" "$(ratio "$sb_big" "$fill1") of truebench fill 1T"
printf '%-46s %12s  %s\n' "truebench fill, 1 thread (write-only)" "$fill1" ""
printf '%-46s %12s  %s\n' "mbw memcpy, 128 MiB (bytes copied once)" "$mbw_copy" "$(ratio "$mbw_copy" "$copy1") of truebench copy 1T (counted twice)"
printf '%-46s %12s  %s\n' "truebench copy, 1 thread (STREAM counting)" "$copy1" ""
