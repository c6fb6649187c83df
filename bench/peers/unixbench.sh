# Sourced by the scripts that run UnixBench beside truebench (classic_vs_unixbench.sh,
# classic_whetstone_vs_unixbench.sh): the one place that finds a UnixBench checkout and
# builds it. It never downloads: the checkout is byte-unixbench's (or its UnixBench/
# directory), copied and built elsewhere so it is not written to.
#
#   unixbench_find DIR    sets ub_src to DIR or DIR/UnixBench, whichever holds Run and
#                         Makefile; else one `error:` line and exit 2
#   unixbench_build DEST  copies ub_src to DEST and, unless its programs are built already,
#                         builds them there with UnixBench's own Makefile (whetstone-double
#                         with -O3 -ffast-math -march=native -mtune=native -DDP -DGTODay
#                         -DUNIXBENCH); a failed build prints the end of make's log, exit 1

unixbench_find() { # DIR
  ub_src=""
  local c
  for c in "$1" "$1/UnixBench"; do
    [ -f "$c/Run" ] && [ -f "$c/Makefile" ] && ub_src=$(realpath "$c") && break
  done
  [ -n "$ub_src" ] || { echo "error: no UnixBench Run and Makefile in '$1' or '$1/UnixBench'" >&2; exit 2; }
}

unixbench_build() { # DEST
  local p
  cp -r "$ub_src" "$1"
  for p in dhry2reg whetstone-double spawn context1; do
    [ -x "$1/pgms/$p" ] && continue
    echo "building UnixBench with its Makefile..." >&2
    make -C "$1" >"$1/make.log" 2>&1 || { tail -5 "$1/make.log" >&2; echo "error: UnixBench did not build" >&2; exit 1; }
    break
  done
}
