package dhcp

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/prometheus/client_golang/prometheus"

	"anvil.dev/anvil/pxe"
	"anvil.dev/anvil/test/netnstest"
)

// realEnv is a DHCP server running in a server namespace and a client
// namespace for dhclient/udhcpc.
type realEnv struct {
	pair    *netnstest.Pair
	backend *pxe.StaticBackend
	dir     string
	runs    int     // distinct file names per client run
	srv     *Server // the last one started
}

var (
	realStaticMAC = "02:aa:00:00:00:01" // static reservation .50
	realDynMAC    = "02:aa:00:00:00:02" // dynamic
	realDyn2MAC   = "02:aa:00:00:00:03" // dynamic
	realUnknMAC   = "02:aa:00:00:00:99"
)

func newRealEnv(t *testing.T) *realEnv {
	netnstest.RequireRoot(t)
	p := netnstest.NewPair(t, netnstest.PairOptions{})
	e := &realEnv{pair: p, dir: t.TempDir()}
	e.backend = pxe.NewStaticBackend(
		pxe.HostRecord{Name: "static", MAC: mac(t, realStaticMAC), Hostname: "node-static", IP: netip.PrefixFrom(e.addr(50), 24), PXE: true, Accepted: true},
		pxe.HostRecord{Name: "dyn", MAC: mac(t, realDynMAC), PXE: true, Accepted: true},
		pxe.HostRecord{Name: "dyn2", MAC: mac(t, realDyn2MAC), PXE: true, Accepted: true},
	)
	return e
}

// addr returns the subnet's address with the given last octet.
func (e *realEnv) addr(last byte) netip.Addr {
	b := e.pair.Subnet.Addr().As4()
	b[3] = last
	return netip.AddrFrom4(b)
}

func (e *realEnv) options(t *testing.T, leases LeaseStore) Options {
	return Options{
		Interface: e.pair.SrvIf,
		Backend:   e.backend,
		Subnets: []Subnet{{
			Prefix: e.pair.Subnet,
			Router: e.pair.SrvIP,
			DNS:    []netip.Addr{e.pair.SrvIP},
			Range:  Range{Start: e.addr(100), End: e.addr(120)},
		}},
		Leases:     leases,
		Registerer: prometheus.NewRegistry(),
		Logger:     testr.NewWithOptions(t, testr.Options{Verbosity: 1}),
	}
}

// start runs a server in the server namespace until the returned stop
// function (also registered with t.Cleanup) is called.
func (e *realEnv) start(t *testing.T, opts Options) (stop func()) {
	t.Helper()
	var srv *Server
	if err := e.pair.Srv.Do(func() (err error) { srv, err = NewServer(opts); return err }); err != nil {
		t.Fatal(err)
	}
	e.srv = srv
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Serve: %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Errorf("Serve did not return after cancel")
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// udhcpc runs busybox udhcpc once in the client namespace and returns the
// variables its script saw on "bound", or an error if it got no lease.
func (e *realEnv) udhcpc(t *testing.T, m string, args ...string) (map[string]string, error) {
	t.Helper()
	e.pair.SetCliMAC(t, mac(t, m))
	e.runs++
	out := filepath.Join(e.dir, fmt.Sprintf("udhcpc-%s-%d.env", strings.ReplaceAll(m, ":", ""), e.runs))
	script := filepath.Join(e.dir, "udhcpc.sh")
	// The script only records; it never configures the interface or
	// touches /etc/resolv.conf.
	body := fmt.Sprintf("#!/bin/sh\nif [ \"$1\" = bound ]; then env > %q; fi\nexit 0\n", out)
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	argv := append([]string{"udhcpc", "-i", e.pair.CliIf, "-f", "-n", "-q", "-t", "3", "-T", "1", "-s", script}, args...)
	log, err := e.pair.Cli.Output(30*time.Second, "busybox", argv...)
	t.Logf("udhcpc %s:\n%s", m, log)
	if err != nil {
		return nil, fmt.Errorf("udhcpc: %w", err)
	}
	return readEnv(t, out), nil
}

// dhclient runs ISC dhclient in the foreground with its own config, hook
// script, lease and pid files, waits for BOUND, then kills it by PID.
func (e *realEnv) dhclient(t *testing.T, m string, conf string, wantBound bool) map[string]string {
	t.Helper()
	e.pair.SetCliMAC(t, mac(t, m))
	e.runs++
	tag := fmt.Sprintf("%s-%d", strings.ReplaceAll(m, ":", ""), e.runs)
	out := filepath.Join(e.dir, "dhclient-"+tag+".env")
	hook := filepath.Join(e.dir, "dhclient-hook-"+tag+".sh")
	body := fmt.Sprintf("#!/bin/sh\nif [ \"$reason\" = BOUND ]; then env > %q.tmp && mv %q.tmp %q; fi\nexit 0\n", out, out, out)
	must(t, os.WriteFile(hook, []byte(body), 0o755))
	cf := filepath.Join(e.dir, "dhclient-"+tag+".conf")
	must(t, os.WriteFile(cf, []byte("timeout 12;\nretry 1;\ninitial-interval 1;\n"+conf), 0o644))
	var stdout, stderr netnstest.SyncBuffer
	cmd := e.pair.Cli.Start(t, &stdout, &stderr, "dhclient", "-4", "-d", "-1", "-v",
		"-cf", cf, "-sf", hook,
		"-lf", filepath.Join(e.dir, "dhclient-"+tag+".leases"),
		"-pf", filepath.Join(e.dir, "dhclient-"+tag+".pid"),
		e.pair.CliIf)
	defer func() {
		_ = cmd.Process.Kill()
		t.Logf("dhclient %s:\n%s%s", m, stdout.String(), stderr.String())
	}()
	timeout := 20 * time.Second
	if !wantBound {
		timeout = 8 * time.Second
	}
	bound := netnstest.WaitFor(timeout, func() bool { _, err := os.Stat(out); return err == nil })
	if bound != wantBound {
		t.Fatalf("dhclient %s: bound=%v, want %v", m, bound, wantBound)
	}
	if !bound {
		return nil
	}
	return readEnv(t, out)
}

func readEnv(t *testing.T, path string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("client script output: %v", err)
	}
	env := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			env[k] = v
		}
	}
	return env
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestRealClientsFullMode(t *testing.T) {
	netnstest.RequireCommands(t, "busybox", "dhclient", "ip")
	e := newRealEnv(t)
	var disc discovered
	opts := e.options(t, nil)
	opts.Discovery.OnDiscover = disc.fn
	e.start(t, opts)
	srv := e.pair.SrvIP.String()
	base := "http://" + srv

	t.Run("udhcpc", func(t *testing.T) {
		tests := []struct {
			name     string
			mac      string
			args     []string
			wantIP   string
			wantFile string
		}{
			{"bios", realStaticMAC, []string{"-V", "PXEClient:Arch:00000:UNDI:002001", "-x", "0x5d:0000"}, e.addr(50).String(), "undionly.kpxe"},
			{"uefi x86-64", realStaticMAC, []string{"-V", "PXEClient:Arch:00007:UNDI:003016", "-x", "0x5d:0007"}, e.addr(50).String(), "snponly.efi"},
			{"ipxe", realStaticMAC, []string{"-V", "PXEClient:Arch:00000:UNDI:002001", "-x", "0x5d:0000", "-x", "0x4d:69505845"},
				e.addr(50).String(), base + "/boot/" + realStaticMAC + ".ipxe"},
			{"plain os client", realStaticMAC, nil, e.addr(50).String(), ""},
			{"dynamic bios", realDynMAC, []string{"-V", "PXEClient:Arch:00000:UNDI:002001", "-x", "0x5d:0000"}, e.addr(100).String(), "undionly.kpxe"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				env, err := e.udhcpc(t, tt.mac, tt.args...)
				if err != nil {
					t.Fatal(err)
				}
				if env["ip"] != tt.wantIP {
					t.Errorf("ip = %q, want %q", env["ip"], tt.wantIP)
				}
				if env["boot_file"] != tt.wantFile {
					t.Errorf("boot_file = %q, want %q", env["boot_file"], tt.wantFile)
				}
				wantSiaddr := srv
				if tt.wantFile == "" {
					wantSiaddr = "" // udhcpc omits a zero siaddr
				}
				if env["siaddr"] != wantSiaddr {
					t.Errorf("siaddr = %q, want %q", env["siaddr"], wantSiaddr)
				}
				if env["subnet"] != "255.255.255.0" || env["router"] != srv || env["serverid"] != srv {
					t.Errorf("subnet=%q router=%q serverid=%q", env["subnet"], env["router"], env["serverid"])
				}
			})
		}
		t.Run("unknown mac gets nothing", func(t *testing.T) {
			if env, err := e.udhcpc(t, realUnknMAC, "-V", "PXEClient:Arch:00000:UNDI:002001", "-x", "0x5d:0000"); err == nil {
				t.Fatalf("unknown MAC got a lease: %v", env)
			}
			if !netnstest.WaitFor(2*time.Second, func() bool { return disc.count() > 0 }) || disc.first() != realUnknMAC {
				t.Errorf("unknown MAC not reported to discovery: %q", disc.first())
			}
		})
	})

	t.Run("dhclient", func(t *testing.T) {
		tests := []struct {
			name     string
			conf     string
			wantFile string
		}{
			{"bios", "send vendor-class-identifier \"PXEClient:Arch:00000:UNDI:002001\";\nsend pxe-system-type 0;\n", "undionly.kpxe"},
			{"uefi x86-64", "send vendor-class-identifier \"PXEClient:Arch:00007:UNDI:003016\";\nsend pxe-system-type 7;\n", "snponly.efi"},
			{"ipxe", "send pxe-system-type 7;\nsend user-class \"iPXE\";\n", base + "/boot/" + realStaticMAC + ".ipxe"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				env := e.dhclient(t, realStaticMAC, tt.conf, true)
				if env["new_ip_address"] != e.addr(50).String() {
					t.Errorf("new_ip_address = %q", env["new_ip_address"])
				}
				if got := strings.Trim(env["new_filename"], "'\""); got != tt.wantFile {
					t.Errorf("new_filename = %q, want %q", got, tt.wantFile)
				}
				if env["new_host_name"] != "node-static" {
					t.Errorf("new_host_name = %q", env["new_host_name"])
				}
			})
		}
		t.Run("unknown mac gets nothing", func(t *testing.T) {
			e.dhclient(t, realUnknMAC, "send pxe-system-type 0;\n", false)
		})
	})
}

// TestLeaseDurabilityAcrossRestart restarts the server on the same lease
// file; the second MAC asks for the first MAC's address and must not get it.
func TestLeaseDurabilityAcrossRestart(t *testing.T) {
	netnstest.RequireCommands(t, "busybox", "ip")
	e := newRealEnv(t)
	path := filepath.Join(e.dir, "leases.json")
	open := func() LeaseStore {
		s, err := NewFileLeaseStore(path, LeaseStoreOptions{})
		must(t, err)
		return s
	}
	stop := e.start(t, e.options(t, open()))
	first, err := e.udhcpc(t, realDynMAC)
	if err != nil {
		t.Fatal(err)
	}
	stop()

	e.start(t, e.options(t, open()))
	second, err := e.udhcpc(t, realDyn2MAC, "-r", first["ip"])
	if err != nil {
		t.Fatal(err)
	}
	if first["ip"] == "" || second["ip"] == first["ip"] {
		t.Fatalf("after restart the second MAC got %q, the first holds %q", second["ip"], first["ip"])
	}
	again, err := e.udhcpc(t, realDynMAC)
	if err != nil {
		t.Fatal(err)
	}
	if again["ip"] != first["ip"] {
		t.Fatalf("first MAC got %q after restart, had %q", again["ip"], first["ip"])
	}
}
