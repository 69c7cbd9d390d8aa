package manual_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"anvil.dev/anvil/bmc"
	_ "anvil.dev/anvil/bmc/manual"
)

func TestManualDriver(t *testing.T) {
	d, err := bmc.Open(bmc.Options{Address: "manual://rack3-u12", Credentials: bmc.Credentials{Username: "x", Password: "secret-pw"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tests := []struct {
		name string
		call func() error
		want bmc.ManualAction
	}{
		{"power on", func() error { return d.SetPower(ctx, bmc.PowerOn) }, bmc.ManualAction{Power: bmc.PowerOn}},
		{"power off", func() error { return d.SetPower(ctx, bmc.PowerOff) }, bmc.ManualAction{Power: bmc.PowerOff}},
		{"graceful off", func() error { return d.SetPower(ctx, bmc.PowerGracefulOff) }, bmc.ManualAction{Power: bmc.PowerGracefulOff}},
		{"reset", func() error { return d.SetPower(ctx, bmc.PowerReset) }, bmc.ManualAction{Power: bmc.PowerReset}},
		{"boot pxe", func() error { return d.SetBootOnce(ctx, bmc.BootPXE) }, bmc.ManualAction{Boot: bmc.BootPXE}},
		{"boot disk", func() error { return d.SetBootOnce(ctx, bmc.BootDisk) }, bmc.ManualAction{Boot: bmc.BootDisk}},
		{"boot http", func() error { return d.SetBootOnce(ctx, bmc.BootHTTP) }, bmc.ManualAction{Boot: bmc.BootHTTP}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if !errors.Is(err, bmc.ErrManualActionRequired) || bmc.KindOf(err) != bmc.ErrManualActionRequired {
				t.Fatalf("err = %v, want ErrManualActionRequired", err)
			}
			got, ok := bmc.ManualActionOf(err)
			if !ok || got != tc.want {
				t.Fatalf("ManualActionOf = %+v, %t; want %+v", got, ok, tc.want)
			}
			if !strings.Contains(err.Error(), "manual://rack3-u12") || !strings.Contains(err.Error(), tc.want.String()) {
				t.Fatalf("message %q should name the host and the action", err)
			}
		})
	}
	if st, err := d.PowerState(ctx); err != nil || st != bmc.PowerStateUnknown {
		t.Fatalf("PowerState = %s, %v", st, err)
	}
	if f, err := d.Facts(ctx); err != nil || f.Manufacturer != "" || f.MACs != nil {
		t.Fatalf("Facts = %+v, %v", f, err)
	}
	if err := d.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := bmc.Open(bmc.Options{Address: "manual://"}); err != nil {
		t.Fatalf("manual:// without a label: %v", err)
	}
}
