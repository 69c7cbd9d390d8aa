package pxe

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"
)

func TestArchFromOption93(t *testing.T) {
	tests := []struct {
		code     uint16
		want     Arch
		uefi     bool
		httpBoot bool
		cpu      string
	}{
		{0, ArchX86BIOS, false, false, "amd64"},
		{6, ArchIA32UEFI, true, false, "386"},
		{7, ArchX8664UEFI, true, false, "amd64"},
		{9, ArchX8664UEFI, true, false, "amd64"},
		{10, ArchARM32UEFI, true, false, "arm"},
		{11, ArchARM64UEFI, true, false, "arm64"},
		{15, ArchIA32UEFIHTTP, true, true, "386"},
		{16, ArchX8664UEFIHTTP, true, true, "amd64"},
		{19, ArchARM64UEFIHTTP, true, true, "arm64"},
		{1, ArchUnknown, false, false, ""},
		{0xffff, ArchUnknown, false, false, ""},
	}
	for _, tt := range tests {
		got := ArchFromOption93(tt.code)
		if got != tt.want || got.UEFI() != tt.uefi || got.HTTPBoot() != tt.httpBoot || got.CPU() != tt.cpu {
			t.Errorf("code %d: got %q uefi=%v http=%v cpu=%q, want %q %v %v %q",
				tt.code, got, got.UEFI(), got.HTTPBoot(), got.CPU(), tt.want, tt.uefi, tt.httpBoot, tt.cpu)
		}
	}
}

func TestArchFromVendorClass(t *testing.T) {
	tests := []struct {
		vc   string
		want Arch
		ok   bool
	}{
		{"PXEClient:Arch:00000:UNDI:002001", ArchX86BIOS, true},
		{"PXEClient:Arch:00007:UNDI:003016", ArchX8664UEFI, true},
		{"HTTPClient:Arch:00016:UNDI:003001", ArchX8664UEFIHTTP, true},
		{"PXEClient:Arch:0001", ArchUnknown, false},
		{"PXEClient", ArchUnknown, false},
		{"PXEClient:Arch:abcde", ArchUnknown, false},
		{"", ArchUnknown, false},
	}
	for _, tt := range tests {
		got, ok := ArchFromVendorClass(tt.vc)
		if got != tt.want || ok != tt.ok {
			t.Errorf("%q: got %q,%v want %q,%v", tt.vc, got, ok, tt.want, tt.ok)
		}
	}
}

func TestStaticBackend(t *testing.T) {
	mac, _ := net.ParseMAC("52:54:00:AA:BB:CC")
	rec := HostRecord{Name: "h1", MAC: mac, IP: netip.MustParsePrefix("10.0.0.5/24"), DNS: []netip.Addr{netip.MustParseAddr("10.0.0.1")}, PXE: true, Accepted: true}
	b := NewStaticBackend(rec)
	ctx := context.Background()

	lower, _ := net.ParseMAC("52-54-00-aa-bb-cc")
	got, err := b.Lookup(ctx, lower)
	if err != nil || got.Name != "h1" || got.IP != rec.IP {
		t.Fatalf("Lookup = %+v, %v", got, err)
	}
	// The returned copy must not alias the stored record.
	got.DNS[0] = netip.MustParseAddr("1.1.1.1")
	again, _ := b.Lookup(ctx, mac)
	if again.DNS[0] != netip.MustParseAddr("10.0.0.1") {
		t.Fatalf("stored record was mutated through a returned copy")
	}

	other, _ := net.ParseMAC("52:54:00:00:00:01")
	if _, err := b.Lookup(ctx, other); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown MAC: err = %v, want ErrNotFound", err)
	}
	b.Delete(mac)
	if _, err := b.Lookup(ctx, mac); !errors.Is(err, ErrNotFound) {
		t.Fatalf("after Delete: err = %v, want ErrNotFound", err)
	}
}
