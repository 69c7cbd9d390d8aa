package dhcp

import (
	"context"
	"fmt"
	"testing"

	"github.com/insomniacslk/dhcp/dhcpv4"
)

// TestBootMethod is the per-client boot decision: which firmware client
// (option 60, 77, 93, 175) of which Host (spec.bootMethod, as
// pxe.HostRecord.BootMethod) gets which boot file, in both modes. A client
// without a boot file gets its address (full mode) or silence (proxy mode).
func TestBootMethod(t *testing.T) {
	const (
		script = "http://10.0.0.1/boot/%s.ipxe"
		efiURL = "http://10.0.0.1/ipxe/snponly.efi"
	)
	var (
		pxeX64    = []dhcpv4.Modifier{withArch(7), withVendor("PXEClient:Arch:00007:UNDI:003016")}
		pxeBIOS   = []dhcpv4.Modifier{withArch(0), withVendor("PXEClient:Arch:00000:UNDI:002001")}
		httpX64   = []dhcpv4.Modifier{withArch(16), withVendor("HTTPClient:Arch:00016:UNDI:003000")} // OVMF's
		httpArch  = []dhcpv4.Modifier{withArch(16)}
		httpVC    = []dhcpv4.Modifier{withVendor("HTTPClient:Arch:00016")}
		httpVC7   = []dhcpv4.Modifier{withArch(7), withVendor("HTTPClient:Arch:00007")} // the class decides
		httpIA32  = []dhcpv4.Modifier{withArch(15), withVendor("HTTPClient:Arch:00015")}
		httpARM64 = []dhcpv4.Modifier{withArch(19), withVendor("HTTPClient:Arch:00019")}
		ipxe      = []dhcpv4.Modifier{withArch(7), withVendor("PXEClient:Arch:00007:UNDI:003010"),
			dhcpv4.WithOption(dhcpv4.OptUserClass("iPXE"))}
	)
	tests := []struct {
		name     string
		host     string
		mods     []dhcpv4.Modifier
		wantFile string // "%s": the MAC
		wantVC   string
	}{
		{"PXE host, PXE client", staticMAC, pxeX64, "snponly.efi", "PXEClient"},
		{"PXE host, BIOS PXE client", staticMAC, pxeBIOS, "undionly.kpxe", "PXEClient"},
		{"PXE host, HTTP client", staticMAC, httpX64, "", ""},
		{"PXE host, iPXE", staticMAC, ipxe, script, "PXEClient"},
		{"PXE host, OS", staticMAC, nil, "", ""},
		{"HTTP host, HTTP client", httpMAC, httpX64, efiURL, "HTTPClient"},
		{"HTTP host, HTTP arch without class", httpMAC, httpArch, efiURL, "HTTPClient"},
		{"HTTP host, HTTPClient without option 93", httpMAC, httpVC, efiURL, "HTTPClient"},
		{"HTTP host, HTTPClient with arch 7", httpMAC, httpVC7, efiURL, "HTTPClient"},
		{"HTTP host, ia32 HTTP client (no file)", httpMAC, httpIA32, "", ""},
		{"HTTP host, arm64 HTTP client", httpMAC, httpARM64, "http://10.0.0.1/ipxe/snp-arm64.efi", "HTTPClient"},
		// Until the BMC can set an HTTP boot override, PXE stays open.
		{"HTTP host, PXE client", httpMAC, pxeX64, "snponly.efi", "PXEClient"},
		{"HTTP host, BIOS PXE client", httpMAC, pxeBIOS, "undionly.kpxe", "PXEClient"},
		{"HTTP host, iPXE it fetched", httpMAC, ipxe, script, "PXEClient"},
		{"HTTP host, OS", httpMAC, nil, "", ""},
		{"HTTP host not booting now, HTTP client", diskMAC, httpX64, "", ""},
	}
	ctx := context.Background()
	for _, mode := range []Mode{ModeFull, ModeProxy} {
		s := testServer(t, mode, func(o *Options) {
			if mode == ModeProxy {
				o.Subnets = nil
			}
		})
		for _, tt := range tests {
			t.Run(string(mode)+"/"+tt.name, func(t *testing.T) {
				want := tt.wantFile
				if want == script {
					want = fmt.Sprintf(script, tt.host)
				}
				res := s.handle(ctx, request(t, tt.host, dhcpv4.MessageTypeDiscover, tt.mods...), clientPeer, listenDHCP)
				r := res.reply
				if mode == ModeProxy && want == "" {
					if r != nil {
						t.Fatalf("proxy answered without a boot file: %v", r.Summary())
					}
					return
				}
				if r == nil || r.MessageType() != dhcpv4.MessageTypeOffer {
					t.Fatalf("no OFFER (drop=%q)", res.drop)
				}
				if mode == ModeFull && !isSet(r.YourIPAddr) {
					t.Errorf("full-mode offer without yiaddr")
				}
				if mode == ModeProxy && isSet(r.YourIPAddr) {
					t.Errorf("proxy offer with yiaddr %v: EDK2 takes only an offer without one for a proxy offer", r.YourIPAddr)
				}
				if got := r.BootFileNameOption(); got != want {
					t.Errorf("option 67 = %q, want %q", got, want)
				}
				if r.BootFileName != want {
					t.Errorf("file field = %q, want %q", r.BootFileName, want)
				}
				if got := r.ClassIdentifier(); got != tt.wantVC {
					t.Errorf("option 60 = %q, want %q", got, tt.wantVC)
				}
				if tt.wantVC == "HTTPClient" && r.Options.Has(dhcpv4.OptionVendorSpecificInformation) {
					t.Errorf("PXE vendor options (43) in an HTTPClient offer")
				}
			})
		}
	}
}
