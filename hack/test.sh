#!/usr/bin/env bash
# `make test`: every step of the test suite in order, each timed. The table
# of step times is printed at the end, also when a step fails, so a CI log
# shows where the time went (the budget is 60 minutes from a cold Go cache).
#
# Three overlaps, where a core would be idle: the Debian host image's
# package stage (mmdebstrap: downloads and dpkg, little CPU) beside the
# tools' build, the rest of it beside go test (`make e2e` finds it cached);
# vet, lint, the images' tests and the fuzzers ("checks") beside go test
# ./...; the VM and dev tests and the benchmark smoke ("vm-tests") beside
# e2e.
set -uo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
MAKE=${MAKE:-make}
export GO
# One build configuration for everything: the tools, `make build`, the
# images and the binaries tests build are CGO_ENABLED=0 -trimpath, so vet
# and the tests use the same (else a cold Go cache compiles every
# dependency once more, for the default configuration).
export CGO_ENABLED=0
# One set of vet analyzers, all of them, for every go test (GOFLAGS) and
# go vet: a vet result, and the facts each package's vet leaves for its
# importers, are cached under the analyzer flags, so with one set every
# package (Kubernetes' included) is vetted once. go test's default set and
# go vet's implicit "all" are two other sets: on a cold cache each of them
# vetted every dependency again (vet's step took 313 s of CPU so).
vet_all=$("$GO" tool vet help | awk '/^Registered analyzers/{f=1; next} f && /^    [a-z]/{print $1}' | paste -sd, -)
if [ -z "$vet_all" ]; then echo "make test: found no vet analyzers in '$GO tool vet help'" >&2; exit 1; fi
vet_flags="-${vet_all//,/ -}"
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-trimpath -vet=$vet_all"

times=()
t_all=$SECONDS
failed=""
summary() {
  local rc=$?
  echo
  echo "make test: step times; CPU is the machine's busy time, $(nproc) cores = $(($(nproc) * 100))% (load average now: $(cut -d' ' -f1-3 /proc/loadavg))"
  for row in "${times[@]}"; do printf '  %s\n' "$row"; done
  printf '  %-22s %5ds\n' "total" $((SECONDS - t_all))
  if [ -n "$failed" ]; then echo "make test: FAILED in step $failed"; fi
  if [ -n "${bg_pid:-}" ] && kill -0 "$bg_pid" 2>/dev/null; then kill "$bg_pid" 2>/dev/null; fi
  if [ -n "${lane_pid:-}" ] && kill -0 "$lane_pid" 2>/dev/null; then kill -- "-$lane_pid" 2>/dev/null; fi
  exit "$rc"
}
trap summary EXIT

# cpu_ticks: the machine's busy CPU time so far (user, nice, system, irq,
# softirq, steal; clock ticks, all cores), from /proc/stat. Machine-wide
# rather than this shell's children, so the QEMU VMs that the BMC
# emulators start (not our children) count too; in CI nothing else runs.
cpu_ticks() {
  local cpu user nice system idle iowait irq softirq steal rest
  read -r cpu user nice system idle iowait irq softirq steal rest </proc/stat
  echo $((user + nice + system + irq + softirq + steal))
}
hz=$(getconf CLK_TCK)

# TEST_STEPS=go-test,e2e runs only the named steps (to rerun what failed).
only=${TEST_STEPS:-}

# step NAME CMD...: run CMD, record its wall and the machine's CPU time
# (CPU/wall says how much of the cores it used: room to overlap); stop at
# the first failure.
step() {
  local name=$1 t0=$SECONDS c0 rc=0 wall cpu
  shift
  # The tools run always: every other step needs them.
  if [ -n "$only" ] && [ "$name" != tools ] && [[ ",$only," != *",$name,"* ]]; then return 0; fi
  echo "=== make test: $name" >&2
  c0=$(cpu_ticks)
  "$@" || rc=$?
  wall=$((SECONDS - t0))
  cpu=$((($(cpu_ticks) - c0) / hz))
  times+=("$(printf '%-22s %5ds wall %6ds CPU (%3d%%)%s' "$name" "$wall" "$cpu" $((wall > 0 ? 100 * cpu / wall : 0)) "$([ $rc = 0 ] || echo "  (failed, exit $rc)")")")
  if [ $rc != 0 ]; then
    failed=$name
    exit "$rc"
  fi
}

# The host image in the background: its first stage (mmdebstrap: downloads
# and dpkg, little CPU, needs no tools) from the start, beside the tools'
# build; the rest (the agent, the images, the disk) once the tools are
# built. test/hostimage reads the image: it runs as its own step after
# go-test, which does not wait for the image.
bg_pid=""
want_image=""
if [ "$(id -u)" = 0 ] && { [ -z "$only" ] || [[ ",$only," == *,e2e,* ]] || [[ ",$only," == *,hostimage-test,* ]]; }; then
  want_image=1
  mkdir -p bin
  bg_log=bin/host-image.log
  bg_t0=$SECONDS
  ("$MAKE" --no-print-directory host-image-rootfs >"$bg_log" 2>&1; echo "exit $?" >>"$bg_log") &
  bg_pid=$!
fi
# host_image_rest: after the tools, the image's second stage (stage 1 is
# waited for first; a failure of it shows again here, with its output).
host_image_rest() {
  [ -n "$want_image" ] || return 0
  [ -z "$bg_pid" ] || wait "$bg_pid" || true
  ("$MAKE" --no-print-directory host-image >>"$bg_log" 2>&1; echo "exit $?" >>"$bg_log") &
  bg_pid=$!
}
wait_host_image() {
  [ -n "$bg_pid" ] || return 0
  wait "$bg_pid" || true
  bg_pid=""
  times+=("$(printf '%-22s %5ds  (in the background, from the start)' "host-image" $((SECONDS - bg_t0)))")
  # A failure here is reported again, with its output, by make e2e.
  tail -n 3 "$bg_log" >&2
}

# lane_start NAME CMD...: run one step in the background (output to
# bin/test-logs/NAME.log); lane_wait waits for it, records its time and
# fails the run, with the log's tail, if it failed.
lane_name="" lane_pid="" lane_t0=0
lane_start() {
  local name=$1
  shift
  if [ -n "$only" ] && [[ ",$only," != *",$name,"* ]]; then return 0; fi
  mkdir -p bin/test-logs
  echo "=== make test: $name (in the background, log: bin/test-logs/$name.log)" >&2
  lane_name=$name lane_t0=$SECONDS
  # Its own process group, so a failure elsewhere ends all of it.
  setsid "$@" >"bin/test-logs/$name.log" 2>&1 &
  lane_pid=$!
}
lane_wait() {
  [ -n "$lane_pid" ] || return 0
  local rc=0
  wait "$lane_pid" || rc=$?
  lane_pid=""
  times+=("$(printf '%-22s %5ds wall (in the background)%s' "$lane_name" $((SECONDS - lane_t0)) "$([ $rc = 0 ] || echo "  (failed, exit $rc)")")")
  if [ $rc != 0 ]; then
    tail -n 40 "bin/test-logs/$lane_name.log" >&2
    failed=$lane_name
    exit "$rc"
  fi
}

step tidy bash -c "$GO mod tidy -diff && cd hack/images && $GO mod tidy -diff"
step tools "$MAKE" --no-print-directory tools
host_image_rest
# go test ./... keeps about one and a half of the two cores busy (its
# envtest packages wait on their API servers; measured 2,630 s CPU in
# 1,530 s with the checks beside it): the images' tests and cross-compiles,
# the fuzzers, lint and vet (CPU only, nothing shared with the tests but
# the build cache) use the rest, one after another, as the step "checks"
# (its log: bin/test-logs/checks.log). Lint and vet come last: they load
# the module's export data, which go test has compiled by then (run at
# once, both compile every dependency side by side on a cold cache). vet
# covers the packages without tests, which go test does not vet, and the
# dev build. The fuzzers get counts, about 10 s each on a quiet machine,
# not durations (Makefile: fuzz).
lane_start checks bash -c "set -e; t0=\$SECONDS; took() { echo \"=== \$1 passed in \$((SECONDS - t0))s\"; t0=\$SECONDS; }
  echo '=== images-test'; (cd hack/images && $GO vet $vet_flags ./... && $GO test -count=1 -short -timeout 20m ./...); took images-test
  echo '=== fuzz'; $MAKE --no-print-directory fuzz FUZZTIME_DHCP=100000x FUZZTIME_TFTP=20000x FUZZTIME_HTTPBOOT=50000x FUZZFLAGS=-parallel=1; took fuzz
  echo '=== lint'; $MAKE --no-print-directory lint; took lint
  echo '=== vet'; $GO vet $vet_flags \$($GO list -f '{{if and (not .TestGoFiles) (not .XTestGoFiles)}}{{.ImportPath}}{{end}}' ./... | grep -v '/test/hostimage\$') && $GO vet $vet_flags -tags dev ./cmd/anvil; took vet"
# Every package but test/hostimage, which reads the image. Three packages
# at a time (-p; the default is one per core): with two, both are often
# envtest packages waiting on their API servers while the compiles queue.
step go-test bash -c "$GO test -p 3 -count=1 -timeout 30m \$($GO list ./... | grep -v '/test/hostimage\$')"
wait_host_image
step hostimage-test "$GO" test -count=1 -timeout 5m ./test/hostimage
lane_wait
# e2e uses about 1.3 of the two cores (the QEMU VMs wait on each other and
# on Anvil): the Cluster API lab test, the shorter VM and dev tests, the
# boot method lab tests and the benchmark smoke run one after another
# beside it, as the step "vm-tests"
# (its log, with each one's time: bin/test-logs/vm-tests.log). Their
# tests, like go test's, make their own network namespaces and ports, so
# they can run beside e2e's.
vm_tests=""
add_vm_test() { # add_vm_test NAME CMD: one part of vm-tests, unless TEST_STEPS leaves it out
  if [ -n "$only" ] && [[ ",$only," != *",$1,"* ]] && [[ ",$only," != *,vm-tests,* ]]; then return 0; fi
  vm_tests+="t0=\$SECONDS; echo '=== $1'; $2; echo \"=== $1 passed in \$((SECONDS - t0))s\";"
}
add_vm_test e2e-capi "$MAKE --no-print-directory e2e-capi"
add_vm_test dev-test "$GO test -count=1 -timeout 10m -tags dev -run TestDev ./cmd/anvil"
add_vm_test pxe-vm-test "$MAKE --no-print-directory pxe-vm-test"
add_vm_test lab-image-test "$MAKE --no-print-directory lab-image-test"
add_vm_test e2e-boot "$MAKE --no-print-directory e2e-boot"
add_vm_test bench-smoke "$MAKE --no-print-directory bench-smoke"
if [ -n "$vm_tests" ]; then
  # add_vm_test has applied TEST_STEPS part by part: the lane runs whatever
  # it kept, though "vm-tests" itself may not be named.
  only_saved=$only only=""
  lane_start vm-tests bash -c "set -e; $vm_tests"
  only=$only_saved
fi
step e2e "$MAKE" --no-print-directory e2e
lane_wait
