package bmc_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"anvil.dev/anvil/bmc"
	_ "anvil.dev/anvil/bmc/ipmi"
	_ "anvil.dev/anvil/bmc/manual"
	"anvil.dev/anvil/internal/netguard"
	"anvil.dev/anvil/test/redfishsim"
)

// IPMI and manual:// have no virtual media: the typed error names the BMC
// and what to do instead.
func TestVirtualMediaOf(t *testing.T) {
	for _, tc := range []struct {
		address, want string
	}{
		{"ipmi://192.0.2.10:623", "IPMI has no standard virtual media"},
		{"manual://rack4-slot2", "manual:// Host has no BMC"},
	} {
		t.Run(tc.address, func(t *testing.T) {
			d, err := bmc.Open(bmc.Options{Address: tc.address, Credentials: bmc.Credentials{Username: "u", Password: "Sup3r-S3cret"}})
			if err != nil {
				t.Fatal(err)
			}
			vm, err := bmc.VirtualMediaOf(d, tc.address)
			if vm != nil || !errors.Is(err, bmc.ErrNoVirtualMedia) || !errors.Is(err, bmc.ErrUnsupported) ||
				bmc.KindOf(err) != bmc.ErrUnsupported || !strings.Contains(err.Error(), tc.address) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("VirtualMediaOf = %v, %v; want ErrNoVirtualMedia naming %s and %q", vm, err, tc.address, tc.want)
			}
		})
	}
}

func TestCheckImageURL(t *testing.T) {
	for _, tc := range []struct {
		url, wantErr string
	}{
		{"https://10.0.0.1:8443/boot/tok/boot.iso", ""},
		{"http://anvil.example/boot.iso", ""},
		{"", "empty"},
		{"nfs://10.0.0.1/boot.iso", `not "nfs"`},
		{"boot.iso", `not ""`},
		{"https:///boot.iso", "no host"},
		{"https://user:pw@anvil.example/boot.iso", "user information"},
	} {
		err := bmc.CheckImageURL(tc.url)
		if (tc.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("CheckImageURL(%q) = %v, want %q", tc.url, err, tc.wantErr)
		}
	}
}

// The pool's virtual media calls reach the Redfish driver.
func TestPoolVirtualMedia(t *testing.T) {
	s := redfishsim.Start(t, redfishsim.Options{})
	p := bmc.NewPool(bmc.PoolOptions{Guard: netguard.Guard{AllowLoopback: true}})
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	opts := bmc.Options{Address: s.BMCAddress(), Credentials: bmc.Credentials{Username: s.Username(), Password: s.Password()},
		Timeout: 30 * time.Second, AllowPlainHTTP: true}
	ctx := context.Background()
	const image = "https://anvil.example/boot/t/boot.iso"
	if err := p.InsertMedia(ctx, opts, image); err != nil {
		t.Fatal(err)
	}
	if st, err := p.MediaState(ctx, opts); err != nil || !st.Inserted || st.Image != image {
		t.Fatalf("MediaState = %+v, %v", st, err)
	}
	if err := p.EjectMedia(ctx, opts); err != nil {
		t.Fatal(err)
	}
	if st, err := p.MediaState(ctx, opts); err != nil || st.Inserted {
		t.Fatalf("MediaState after eject = %+v, %v", st, err)
	}
	// A pool call on a manual:// Host gets the typed error.
	_, err := p.MediaState(ctx, bmc.Options{Address: "manual://x"})
	if !errors.Is(err, bmc.ErrNoVirtualMedia) {
		t.Fatalf("manual:// MediaState: %v", err)
	}
}
