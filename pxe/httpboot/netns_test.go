package httpboot

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"anvil.dev/anvil/pxe"
	"anvil.dev/anvil/test/netnstest"
)

// TestRealClientsInNetns serves from a server namespace to curl and busybox
// wget in a client namespace: the script, a Range request and a full
// download compared byte for byte.
func TestRealClientsInNetns(t *testing.T) {
	netnstest.RequireRoot(t)
	netnstest.RequireCommands(t, "curl", "busybox", "ip")
	p := netnstest.NewPair(t, netnstest.PairOptions{CliAddress: true})
	e := newArtifactEnv(t, nil, func(o *Options) {
		backend := pxe.NewStaticBackend(pxe.HostRecord{Name: "n1", MAC: mustMAC(t, "52:54:00:00:00:01"), PXE: true, Accepted: true})
		scripts, err := NewScripts(ScriptOptions{Backend: backend, BootSpecs: BootSpecFunc(func(context.Context, pxe.HostRecord) (BootSpec, error) {
			return BootSpec{KernelURL: "/artifacts/os/vmlinuz", Args: []string{"console=ttyS0"}}, nil
		})})
		must(t, err)
		o.Scripts = scripts
	})
	var ln net.Listener
	must(t, p.Srv.Do(func() (err error) { ln, err = net.Listen("tcp4", p.SrvIP.String()+":80"); return err }))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			t.Error("Serve did not return")
		}
	})
	base := "http://" + p.SrvIP.String()

	out, err := p.Cli.Output(20*time.Second, "busybox", "wget", "-q", "-O", "-", base+"/boot/52:54:00:00:00:01.ipxe")
	if err != nil || !strings.HasPrefix(out, "#!ipxe\nkernel /artifacts/os/vmlinuz console=ttyS0\n") {
		t.Fatalf("busybox wget script: %v\n%s", err, out)
	}
	out, err = p.Cli.Output(20*time.Second, "curl", "-sS", "-f", "-r", "100-109", "-o", "/dev/null", "-w", "%{http_code} %{size_download}", base+"/artifacts/os/vmlinuz")
	if err != nil || out != "206 10" {
		t.Fatalf("curl range: %v %q", err, out)
	}
	local := filepath.Join(t.TempDir(), "vmlinuz")
	if out, err := p.Cli.Output(20*time.Second, "curl", "-sS", "-f", "-o", local, base+"/artifacts/os/vmlinuz"); err != nil {
		t.Fatalf("curl: %v %s", err, out)
	}
	got, err := os.ReadFile(local)
	must(t, err)
	if sum(got) != sum(e.kernel) {
		t.Fatal("downloaded artifact differs")
	}
	if out, err := p.Cli.Output(20*time.Second, "curl", "-sS", "-f", "-o", "/dev/null", base+"/artifacts/wrong"); err == nil {
		t.Fatalf("mismatching artifact downloaded: %s", out)
	}
}
