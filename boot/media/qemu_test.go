package media

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"anvil.dev/anvil/pxe/ipxebin"
	"anvil.dev/anvil/test/netnstest"
	"anvil.dev/anvil/test/pxetest"
)

// TestQEMUBootsISO boots the Handler's ISO as a CD in OVMF on a segment
// with no DHCP server at all: iPXE runs the ISO's autoexec.ipxe (through
// the patched embedded script), sets the static address on the NIC with
// the boot MAC, chains the boot's script from the Handler and fetches the
// URL in it from the test's HTTP server, both from that address. Runs only with ANVIL_QEMU_TEST=1.
func TestQEMUBootsISO(t *testing.T) {
	pxetest.RequireOVMF(t)

	id := fmt.Sprintf("%06x", time.Now().UnixNano()&0xffffff)
	srvIP := netip.MustParseAddr("10.212.7.1")
	static := netip.MustParsePrefix("10.212.7.21/24")
	mac := net.HardwareAddr{0x52, 0x54, 0x00, 0xa7, 0x00, 0x21}
	ns := netnstest.NewVMSegment(t, id, "media", netip.PrefixFrom(srvIP, 24))

	type call struct{ path, remote string }
	called := make(chan call, 1)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /callback/{mac}", func(w http.ResponseWriter, r *http.Request) {
		select {
		case called <- call{r.URL.Path, r.RemoteAddr}:
		default:
		}
		fmt.Fprint(w, "#!ipxe\necho ANVIL-MEDIA-CALLBACK-DONE\n")
	})
	var ln net.Listener
	if err := ns.Do(func() (err error) { ln, err = net.Listen("tcp4", srvIP.String()+":80"); return err }); err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	var wg sync.WaitGroup
	wg.Go(func() { _ = srv.Serve(ln) })
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()); wg.Wait() })

	efi, err := ipxebin.Autoexec(ipxebin.EFI.Data)
	if err != nil {
		t.Fatal(err)
	}
	// The Handler serves the ISO and the script it chains; the boot's
	// script stands in for the PXE path's, with a relative URL.
	token, hash, err := NewToken()
	if err != nil {
		t.Fatal(err)
	}
	scriptFrom := make(chan netip.AddrPort, 1)
	src := &boots{m: map[string]Boot{hash: {Key: "test/vm", Net: Net{MAC: mac, Address: static, Gateway: srvIP},
		Script: func(_ context.Context, remote netip.AddrPort) ([]byte, error) {
			select {
			case scriptFrom <- remote:
			default:
			}
			return []byte("#!ipxe\nchain --autofree /callback/" + mac.String() + "\n"), nil
		}}}}
	h, err := NewHandler(HandlerOptions{Source: src, IPXE: efi}) // base URL: the request's local address
	if err != nil {
		t.Fatal(err)
	}
	mux.Handle(Pattern, h)
	// Fetched in-process (a dial from another goroutine would leave the
	// namespace), as if it came in on the bridge's address.
	req := httptest.NewRequest("GET", Path(token), nil)
	req = req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey, &net.TCPAddr{IP: srvIP.AsSlice(), Port: 80}))
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Fatalf("GET the ISO: %d %s", rec.Code, rec.Body)
	}
	iso := rec.Body.Bytes()
	dir := t.TempDir()
	isoPath := filepath.Join(dir, "boot.iso")
	if err := os.WriteFile(isoPath, iso, 0o644); err != nil {
		t.Fatal(err)
	}
	serial := filepath.Join(dir, "serial.log")
	args, err := pxetest.QEMUArgs(pxetest.QEMUOptions{Firmware: pxetest.UEFI, Tap: "tap0", MAC: mac, SerialLog: serial, CDROM: isoPath})
	if err != nil {
		t.Fatal(err)
	}
	var qout netnstest.SyncBuffer
	start := time.Now()
	qemu := ns.Start(t, &qout, &qout, "qemu-system-x86_64", args...)
	exited := make(chan struct{})
	go func() { _ = qemu.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = qemu.Process.Kill()
		<-exited
		if t.Failed() {
			data, _ := os.ReadFile(serial)
			s := string(data)
			if len(s) > 6000 {
				s = s[len(s)-6000:]
			}
			t.Logf("qemu output:\n%s\nserial console (end):\n%s", qout.String(), s)
		}
	})
	select {
	case c := <-called:
		host, _, _ := net.SplitHostPort(c.remote)
		if host != static.Addr().String() {
			t.Errorf("callback from %s, want the static address %s", host, static.Addr())
		}
		t.Logf("qemu start -> callback from %s in %v", host, time.Since(start).Round(100*time.Millisecond))
		if r := <-scriptFrom; r.Addr() != static.Addr() {
			t.Errorf("the boot's script was fetched from %s, want %s", r.Addr(), static.Addr())
		}
	case <-exited:
		t.Fatal("qemu exited before the callback")
	case <-time.After(300 * time.Second):
		t.Fatal("no callback within 300s")
	}
	data, _ := os.ReadFile(serial)
	if !strings.Contains(string(data), "file:/autoexec.ipxe") {
		t.Error("serial console does not show iPXE loading file:/autoexec.ipxe")
	}
}
