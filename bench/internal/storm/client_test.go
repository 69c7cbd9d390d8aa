package storm

import (
	"context"
	"crypto/rand"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"anvil.dev/anvil/bench/internal/results"
	"anvil.dev/anvil/pxe/httpboot"
	"anvil.dev/anvil/pxe/tftp"
)

// Scripts as Anvil's httpboot and delivery packages write them.
func TestParseScript(t *testing.T) {
	base, _ := url.Parse("http://198.18.0.1/boot/02:a5:70:00:00:01.ipxe")
	boot, err := httpboot.BootScript(httpboot.BootSpec{
		KernelURL:  "/artifacts/default/lab/kernel/vmlinuz",
		InitrdURLs: []string{"/artifacts/default/lab/initrd/0/initramfs.cpio.gz"},
		Args:       []string{"console=ttyS0", "ignition.config.url=http://198.18.0.1/config/02:a5:70:00:00:01/ignition?cred=abc", "ignition.platform.id=metal"},
	})
	if err != nil {
		t.Fatal(err)
	}
	withheld := append([]byte("#!ipxe\necho Anvil: no boot credential in this script (second_request), the OS will get no config\n"), boot[len("#!ipxe\n"):]...)
	for _, tc := range []struct {
		name   string
		script []byte
		check  func(t *testing.T, s ipxeScript)
	}{
		{"boot with credential", boot, func(t *testing.T, s ipxeScript) {
			if s.Kernel != "http://198.18.0.1/artifacts/default/lab/kernel/vmlinuz" {
				t.Errorf("kernel %q", s.Kernel)
			}
			if !slices.Equal(s.Initrds, []string{"http://198.18.0.1/artifacts/default/lab/initrd/0/initramfs.cpio.gz"}) {
				t.Errorf("initrds %q", s.Initrds)
			}
			if got := s.configURL(); got != "http://198.18.0.1/config/02:a5:70:00:00:01/ignition?cred=abc" {
				t.Errorf("config URL %q", got)
			}
		}},
		{"withheld", withheld, func(t *testing.T, s ipxeScript) {
			if len(s.Echo) != 1 || s.Kernel == "" {
				t.Errorf("echo %q kernel %q", s.Echo, s.Kernel)
			}
		}},
		{"exit", httpboot.ExitScript(), func(t *testing.T, s ipxeScript) {
			if !s.Exit || s.Kernel != "" {
				t.Errorf("%+v", s)
			}
		}},
		{"unknown host", httpboot.UnknownHostScript(hostMAC(1), 10*time.Second), func(t *testing.T, s ipxeScript) {
			if s.Chain != "http://198.18.0.1/boot/02:a5:70:00:00:01.ipxe" || s.Sleep != 10*time.Second {
				t.Errorf("chain %q sleep %v", s.Chain, s.Sleep)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := parseScript(tc.script, base)
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, s)
		})
	}
	if _, err := parseScript([]byte("kernel x\n"), base); err == nil {
		t.Error("a script without #!ipxe parsed")
	}
}

// The TFTP client against Anvil's own TFTP server on loopback: the EDK2
// size probe, then the whole file.
func TestTFTPClientAgainstAnvil(t *testing.T) {
	dir := t.TempDir()
	want := make([]byte, 100_000)
	_, _ = rand.Read(want)
	if err := os.WriteFile(filepath.Join(dir, "snponly.efi"), want, 0o644); err != nil {
		t.Fatal(err)
	}
	srv, err := tftp.NewServer(tftp.Options{Root: dir, ListenAddr: netip.MustParseAddrPort("127.0.0.1:0")})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	port := netip.MustParseAddrPort(srv.Addr().String()).Port()
	lo := netip.MustParseAddr("127.0.0.1")

	c := edk2TFTP()
	c.Port, c.Timeout = port, time.Second
	var st tftpStats
	n, err := c.fetch(lo, lo, "snponly.efi", &st)
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(len(want)) {
		t.Errorf("got %d bytes, want %d", n, len(want))
	}
	if _, err := c.fetch(lo, lo, "missing.efi", &st); err == nil {
		t.Error("fetching a missing file succeeded")
	}
}

func TestSummarize(t *testing.T) {
	ok := func(ttlb float64) HostResult {
		return HostResult{OK: true, TTLB: ttlb, Steps: []Step{{stepFirmwareDHCP, 4}, {stepConfig, ttlb - 4}},
			DHCP: dhcpStats{DiscoverRetries: 1}, ConfigRetries: 2}
	}
	lr := LoadResult{Seconds: 30, Hosts: []HostResult{
		ok(10), ok(20), ok(12),
		{Stage: StageTFTP, Reason: "TFTP: server sent ERROR 0 \"server busy, retry later\"", TFTP: tftpStats{Retries: 3}},
		{Stage: StageTFTP, Reason: "TFTP: server sent ERROR 0 \"server busy, retry later\""},
		{Stage: StageConfig, Reason: "config: HTTP 403 (Ignition does not retry it)"},
	}}
	var r results.StormRun
	summarize(&r, lr)
	if r.Succeeded != 3 || !slices.Equal(r.TTLB, []float64{10, 12, 20}) || r.P50 != 12 || r.Max != 20 {
		t.Errorf("succeeded %d ttlb %v p50 %v max %v", r.Succeeded, r.TTLB, r.P50, r.Max)
	}
	if len(r.Failures) != 2 || r.Failures[0].Stage != StageTFTP || r.Failures[0].Hosts != 2 || r.Failures[1].Stage != StageConfig {
		t.Errorf("failures %+v", r.Failures)
	}
	if r.Retries.DHCPDiscover != 3 || r.Retries.Config != 6 || r.Retries.TFTP != 3 {
		t.Errorf("retries %+v", r.Retries)
	}
	if len(r.Stages) != 2 || r.Stages[0].Name != stepFirmwareDHCP || r.Stages[1].Max != 16 {
		t.Errorf("stages %+v", r.Stages)
	}
}

func TestParseMetrics(t *testing.T) {
	text := `# HELP anvil_dhcp_packets_dropped_total x
# TYPE anvil_dhcp_packets_dropped_total counter
anvil_dhcp_packets_dropped_total{reason="queue_full"} 12
anvil_dhcp_packets_dropped_total{reason="lease_error"} 0
anvil_http_request_duration_seconds_bucket{endpoint="GET /config/",le="0.5"} 3
rest_client_requests_total{code="200",host="127.0.0.1:6443",method="GET"} 5
rest_client_requests_total{code="200",host="127.0.0.1:6443",method="PATCH"} 7
rest_client_rate_limiter_duration_seconds_sum{host="127.0.0.1:6443",verb="PATCH"} 1.5
go_goroutines 40
`
	got := parseMetrics(text)
	want := map[string]float64{
		`anvil_dhcp_packets_dropped_total{reason="queue_full"}`: 12,
		`rest_client_requests_total{code="200"}`:                12,
		`rest_client_rate_limiter_duration_seconds_sum`:         1.5,
	}
	if len(got) != len(want) {
		t.Errorf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
}

func TestAPIDelta(t *testing.T) {
	before := `apiserver_request_duration_seconds_sum{component="apiserver",group="metal.anvil.dev",resource="hosts",subresource="status",verb="PATCH"} 1
apiserver_request_duration_seconds_count{component="apiserver",group="metal.anvil.dev",resource="hosts",subresource="status",verb="PATCH"} 10
apiserver_request_duration_seconds_count{component="apiserver",resource="hosts",subresource="",verb="WATCH"} 2
`
	after := `apiserver_request_duration_seconds_sum{component="apiserver",group="metal.anvil.dev",resource="hosts",subresource="status",verb="PATCH"} 6
apiserver_request_duration_seconds_count{component="apiserver",group="metal.anvil.dev",resource="hosts",subresource="status",verb="PATCH"} 110
apiserver_request_total{code="429",resource="hosts",subresource="status",verb="PATCH"} 3
apiserver_request_total{code="200",resource="hosts",subresource="status",verb="PATCH"} 107
apiserver_request_duration_seconds_sum{component="apiserver",resource="secrets",subresource="",verb="LIST"} 2
apiserver_request_duration_seconds_count{component="apiserver",resource="secrets",subresource="",verb="LIST"} 4
apiserver_request_duration_seconds_count{component="apiserver",resource="hosts",subresource="",verb="WATCH"} 5
`
	got := apiDelta(before, after)
	want := []results.StormAPI{
		{Verb: "PATCH", Resource: "hosts/status", Requests: 100, MeanMs: 50, Rejected: 3},
		{Verb: "LIST", Resource: "secrets", Requests: 4, MeanMs: 500},
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}
