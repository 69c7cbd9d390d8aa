package storm

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"anvil.dev/anvil/test/need"
)

// The test binary is also the load generator: the storm starts it again
// inside the load namespace with this variable set.
const loadEnv = "ANVIL_STORM_TEST_LOAD"

func TestMain(m *testing.M) {
	if os.Getenv(loadEnv) == "1" {
		if err := LoadMain(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr); err != nil {
			fmt.Fprintln(os.Stderr, "load storm:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestStorm boots a three-host rack end to end against the real
// kube-apiserver and both anvil processes, so the benchmark cannot rot.
// It checks outcomes only (every host got its config, Anvil counted it),
// never how fast.
func TestStorm(t *testing.T) {
	if os.Geteuid() != 0 {
		need.OrSkip(t, "the boot storm needs root (network namespaces)")
	}
	root, err := need.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(root, "bin", b)); err != nil {
			need.OrSkip(t, "bin/%s missing (make tools)", b)
		}
	}
	o := SmokeOptions()
	if _, err := os.Stat(filepath.Join(o.TFTPRoot, bootFile)); err != nil {
		need.OrSkip(t, "%s/%s missing (Debian package ipxe)", o.TFTPRoot, bootFile)
	}
	if _, err := exec.LookPath("ip"); err != nil {
		need.OrSkip(t, "ip (iproute2) missing")
	}
	o.Sizes, o.Runs = []int{3}, 1
	o.KernelBytes, o.InitrdBytes = 300<<10, 1<<20
	o.Dir, o.RepoRoot = t.TempDir(), root
	o.LoadCommand, o.LoadEnv = []string{os.Args[0]}, []string{loadEnv + "=1"}
	o.Logf = t.Logf
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	res := Run(ctx, o)
	if res.Error != "" {
		t.Fatalf("storm: %s", res.Error)
	}
	if len(res.Sizes) != 1 || len(res.Sizes[0].Runs) != 1 {
		t.Fatalf("want one size with one run, got %+v", res.Sizes)
	}
	r := res.Sizes[0].Runs[0]
	if r.Error != "" {
		t.Fatalf("run: %s", r.Error)
	}
	if r.Succeeded != 3 || len(r.TTLB) != 3 || len(r.Failures) != 0 {
		t.Fatalf("want 3 hosts booted, got %d (ttlb %v, failures %+v)", r.Succeeded, r.TTLB, r.Failures)
	}
	var names []string
	for _, s := range r.Stages {
		names = append(names, s.Name)
	}
	if !slices.Equal(names, StepNames) {
		t.Errorf("stages %v, want %v", names, StepNames)
	}
	// Anvil's own counters agree: three credentials issued, three configs
	// served, no config refused.
	for series, want := range map[string]float64{
		`anvil_boot_script_credentials_total{result="issued"}`: 3,
		`anvil_config_requests_served_total{kind="ignition"}`:  3,
		`anvil_tftp_requests_total{result="ok"}`:               3,
		`anvil_tftp_requests_total{result="size_probe"}`:       3,
	} {
		if got := r.Metrics[series]; got != want {
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}
	for series, v := range r.Metrics {
		if strings.HasPrefix(series, "anvil_config_requests_denied_total") && v != 0 {
			t.Errorf("%s = %v, want none", series, v)
		}
	}
	if r.Netboot.CPUSeconds <= 0 || r.Netboot.PeakRSS <= 0 || r.Controllers.PeakRSS <= 0 {
		t.Errorf("process usage not measured: netboot %+v, controllers %+v", r.Netboot, r.Controllers)
	}
}

func TestParseUDPCounters(t *testing.T) {
	snmp := "Ip: Forwarding DefaultTTL\nIp: 2 64\n" +
		"Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors\n" +
		"Udp: 43547 0 0 128914 3 1407 0 6538 0\n" +
		"UdpLite: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors\n" +
		"UdpLite: 0 0 0 0 0 0 0 0 0\n"
	got := parseUDPCounters(snmp)
	for name, want := range map[string]uint64{"InDatagrams": 43547, "OutDatagrams": 128914, "RcvbufErrors": 3, "SndbufErrors": 1407} {
		if got[name] != want {
			t.Errorf("%s = %d, want %d", name, got[name], want)
		}
	}
	if m := parseUDPCounters("Ip: Forwarding\nIp: 2\n"); m != nil {
		t.Errorf("no Udp lines: %v, want nil", m)
	}
}
