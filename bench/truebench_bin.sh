# Sourced by the bench scripts, from the repository's root: sets `tb` to the truebench binary
# to measure. TRUEBENCH_BIN=path runs that build (another version, or a copy made beforehand:
# under a wrapper that pauses other work while figures are taken, a paused cargo would hold
# the build lock and the script would wait for ever); else this tree is built in release.
if [ -n "${TRUEBENCH_BIN:-}" ]; then
  [ -x "$TRUEBENCH_BIN" ] || { echo "error: TRUEBENCH_BIN=$TRUEBENCH_BIN is not an executable file" >&2; exit 2; }
  tb=$(realpath "$TRUEBENCH_BIN")
else
  cargo build --release --quiet
  tb=$PWD/target/release/truebench
fi
