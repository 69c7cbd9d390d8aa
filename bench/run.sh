#!/usr/bin/env bash
# `make bench` (full: every benchmark, 3 runs, rewrites bench/RESULTS.md,
# bench/results.json and the PNGs) and `make bench-smoke` (a few seconds per
# benchmark, for CI: everything is exercised, nothing in bench/ changes).
# Needs root (network namespaces) and the peers: bash bench/install-peers.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-full}
GO=${GO:-go}
if [ "$(id -u)" != 0 ]; then
  echo "bench: needs root (it creates network namespaces)" >&2
  exit 1
fi
bash bench/install-peers.sh >/dev/null
mkdir -p bin
"$GO" build -o bin/anvil-bench ./bench/cmd/anvil-bench
CGO_ENABLED=0 "$GO" build -trimpath -o bin/anvil ./cmd/anvil # the boot storm runs it (as `make build` does)
case "$mode" in
smoke)
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
  bin/anvil-bench run --smoke --anvil bin/anvil --out "$out/results.json"
  (cd bench/plot && "$GO" run . -in "$out/results.json" -out "$out")
  bin/anvil-bench report --in "$out/results.json" --out "$out/RESULTS.md"
  echo "bench-smoke: every benchmark ran; report rendered to a scratch directory"
  ;;
full)
  # A subject that fails is recorded in the results and the report; the
  # report is written either way, and the exit status says it happened.
  status=0
  bin/anvil-bench run --anvil bin/anvil --out bench/results.json || status=$?
  if [ -s bench/results.json ]; then
    (cd bench/plot && "$GO" run . -in ../results.json -out ..)
    bin/anvil-bench report --in bench/results.json --out bench/RESULTS.md
    echo "bench: wrote bench/RESULTS.md"
  fi
  exit "$status"
  ;;
*)
  echo "usage: bench/run.sh [full|smoke]" >&2
  exit 2
  ;;
esac
