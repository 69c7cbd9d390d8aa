package redfish_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"anvil.dev/anvil/bmc"
	"anvil.dev/anvil/test/redfishsim"
)

// The one-time URL a later Machine flow hands the BMC; its token must not
// appear in errors.
const (
	isoToken = "one-time-t0ken-5ecret"
	isoURL   = "https://anvil.example:8443/boot/" + isoToken + "/boot.iso"
)

func virtualMedia(t *testing.T, s *redfishsim.Server) (bmc.Driver, bmc.VirtualMedia) {
	t.Helper()
	opts := options(s)
	d := open(t, opts)
	vm, err := bmc.VirtualMediaOf(d, opts.Address)
	if err != nil {
		t.Fatalf("VirtualMediaOf(redfish): %v", err)
	}
	return d, vm
}

// cd returns the simulator's state of the CD device.
func cd(t *testing.T, s *redfishsim.Server) redfishsim.MediaState {
	t.Helper()
	for _, m := range s.VirtualMedia(sysID) {
		if m.Device == "CD1" {
			return m
		}
	}
	t.Fatalf("the simulator has no CD1: %+v", s.VirtualMedia(sysID))
	return redfishsim.MediaState{}
}

func TestVirtualMedia(t *testing.T) {
	for _, tc := range []struct {
		name       string
		vm         redfishsim.VirtualMediaOptions
		wantDevice string
		wantMethod string // TransferMethod the BMC received
		wantPatch  bool   // inserted and ejected by PATCH
	}{
		{"under the system", redfishsim.VirtualMediaOptions{}, "/redfish/v1/Systems/" + sysID + "/VirtualMedia/CD1", "Stream", false},
		{"under the manager", redfishsim.VirtualMediaOptions{UnderManager: true}, "/redfish/v1/Managers/BMC/VirtualMedia/CD1", "Stream", false},
		{"without TransferMethod", redfishsim.VirtualMediaOptions{NoTransferMethod: true}, "/redfish/v1/Systems/" + sysID + "/VirtualMedia/CD1", "", false},
		{"PATCH without actions", redfishsim.VirtualMediaOptions{NoActions: true}, "/redfish/v1/Systems/" + sysID + "/VirtualMedia/CD1", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startSim(t, redfishsim.Options{VirtualMedia: tc.vm})
			_, vm := virtualMedia(t, s)
			ctx := context.Background()

			st, err := vm.MediaState(ctx)
			if err != nil || st.Device != tc.wantDevice || st.Inserted || st.Image != "" {
				t.Fatalf("MediaState = %+v, %v; want an empty %s", st, err, tc.wantDevice)
			}
			if err := vm.InsertMedia(ctx, isoURL); err != nil {
				t.Fatalf("InsertMedia: %v", err)
			}
			if got := cd(t, s); !got.Inserted || got.Image != isoURL || !got.WriteProtected || got.TransferMethod != tc.wantMethod {
				t.Fatalf("simulator CD %+v; want %s inserted write-protected, TransferMethod %q", got, isoURL, tc.wantMethod)
			}
			if st, err := vm.MediaState(ctx); err != nil || !st.Inserted || st.Image != isoURL || !st.WriteProtected {
				t.Fatalf("MediaState after insert = %+v, %v", st, err)
			}
			// Inserting the same image again is a no-op (a retried call).
			if err := vm.InsertMedia(ctx, isoURL); err != nil {
				t.Fatalf("InsertMedia again: %v", err)
			}
			// Another image is refused until the CD is ejected.
			err = vm.InsertMedia(ctx, "http://other.example/other.iso")
			if !errors.Is(err, bmc.ErrMediaInserted) || !strings.Contains(err.Error(), tc.wantDevice) || strings.Contains(err.Error(), isoToken) {
				t.Fatalf("InsertMedia of another image: %v; want ErrMediaInserted naming %s, without the image URL", err, tc.wantDevice)
			}
			if st := s.Stats(); st.MediaInserts != 1 || (st.Patches > 0) != tc.wantPatch {
				t.Fatalf("simulator saw %d inserts and %d PATCHes", st.MediaInserts, st.Patches)
			}

			if err := vm.EjectMedia(ctx); err != nil {
				t.Fatalf("EjectMedia: %v", err)
			}
			if got := cd(t, s); got.Inserted || got.Image != "" {
				t.Fatalf("simulator CD after eject %+v", got)
			}
			if err := vm.EjectMedia(ctx); err != nil {
				t.Fatalf("EjectMedia of an empty CD: %v", err)
			}
			if st := s.Stats(); st.MediaEjects != 1 {
				t.Fatalf("simulator saw %d ejects, want 1", st.MediaEjects)
			}
			// The hook and the events saw one insert and one eject.
			if evs := s.MediaEvents(); len(evs) != 2 || !evs[0].Inserted || evs[1].Inserted {
				t.Fatalf("media events %+v", evs)
			}
		})
	}
}

func TestNoVirtualMedia(t *testing.T) {
	s := startSim(t, redfishsim.Options{VirtualMedia: redfishsim.VirtualMediaOptions{Disabled: true}})
	d, vm := virtualMedia(t, s)
	ctx := context.Background()
	_, stateErr := vm.MediaState(ctx)
	insertErr := vm.InsertMedia(ctx, isoURL)
	ejectErr := vm.EjectMedia(ctx)
	for _, err := range []error{stateErr, insertErr, ejectErr} {
		noSecret(t, err)
		if !errors.Is(err, bmc.ErrNoVirtualMedia) || !errors.Is(err, bmc.ErrUnsupported) ||
			!strings.Contains(err.Error(), s.BMCAddress()) || !strings.Contains(err.Error(), "VirtualMedia collection") ||
			strings.Contains(err.Error(), isoToken) {
			t.Errorf("%v; want ErrNoVirtualMedia (ErrUnsupported) naming the BMC and what is missing", err)
		}
	}
	// Power and boot still work on such a BMC.
	if _, err := d.PowerState(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestInsertMediaRefusesBadURLs(t *testing.T) {
	s := startSim(t, redfishsim.Options{})
	_, vm := virtualMedia(t, s)
	for _, u := range []string{"", "nfs://10.0.0.1/" + isoToken + ".iso", "/boot/" + isoToken + ".iso", "https://user:" + isoToken + "@anvil.example/boot.iso"} {
		err := vm.InsertMedia(context.Background(), u)
		if err == nil || strings.Contains(err.Error(), isoToken) || !strings.Contains(err.Error(), "image URL") {
			t.Errorf("InsertMedia(%q) = %v; want an error about the image URL that does not repeat it", u, err)
		}
	}
	if st := s.Stats(); st.MediaInserts != 0 || st.Requests != 0 {
		t.Fatalf("bad URLs reached the BMC: %+v", st)
	}
}

// A CD boot: insert, one-time boot from Cd, power on; the simulated
// server boots the image.
func TestBootFromVirtualMedia(t *testing.T) {
	s := startSim(t, redfishsim.Options{})
	d, vm := virtualMedia(t, s)
	ctx := context.Background()
	if err := vm.InsertMedia(ctx, isoURL); err != nil {
		t.Fatal(err)
	}
	if err := d.SetBootOnce(ctx, bmc.BootCD); err != nil {
		t.Fatal(err)
	}
	if err := d.SetPower(ctx, bmc.PowerOn); err != nil {
		t.Fatal(err)
	}
	if ev := s.Events(); len(ev) != 1 || ev[0].BootTarget != "Cd" || ev[0].CDImage != isoURL {
		t.Fatalf("boots %+v: want one from Cd with the image", ev)
	}
}
