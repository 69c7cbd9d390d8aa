package pxe_test

import (
	"testing"

	"anvil.dev/anvil/pxe"
)

func TestBootMethodServes(t *testing.T) {
	tests := []struct {
		method pxe.BootMethod
		client pxe.BootClient
		want   bool
	}{
		{pxe.BootMethodPXE, pxe.ClientPXE, true},
		{pxe.BootMethodPXE, pxe.ClientHTTP, false}, // its firmware moves on to PXE
		{pxe.BootMethodPXE, pxe.ClientIPXE, true},
		{pxe.BootMethodPXE, pxe.ClientNone, false},
		{pxe.BootMethodHTTP, pxe.ClientPXE, true}, // the BMC's one-time override is still PXE
		{pxe.BootMethodHTTP, pxe.ClientHTTP, true},
		{pxe.BootMethodHTTP, pxe.ClientIPXE, true}, // the iPXE it fetched by HTTP
		{pxe.BootMethodHTTP, pxe.ClientNone, false},
		{pxe.BootMethod(9), pxe.ClientPXE, false},
		{pxe.BootMethod(9), pxe.ClientHTTP, false},
		{pxe.BootMethod(9), pxe.ClientIPXE, false},
	}
	for _, tt := range tests {
		if got := tt.method.Serves(tt.client); got != tt.want {
			t.Errorf("%v.Serves(%v) = %v, want %v", tt.method, tt.client, got, tt.want)
		}
	}
}
