package delivery

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"

	"anvil.dev/anvil/boot/bootcred"
	"anvil.dev/anvil/pxe/httpboot"
)

func TestBaseURL(t *testing.T) {
	tests := []struct {
		name     string
		explicit string
		local    net.Addr
		want     string
		wantErr  bool
	}{
		{"explicit wins", "http://boot.example:8080/", &net.TCPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 80}, "http://boot.example:8080", false},
		{"port 80 is left out", "", &net.TCPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 80}, "http://10.0.0.1", false},
		{"other ports are kept", "", &net.TCPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 8080}, "http://10.0.0.1:8080", false},
		{"IPv6", "", &net.TCPAddr{IP: net.ParseIP("fd00::1"), Port: 80}, "http://[fd00::1]", false},
		{"IPv4-mapped IPv6 is IPv4", "", &net.TCPAddr{IP: net.ParseIP("::ffff:10.0.0.1"), Port: 81}, "http://10.0.0.1:81", false},
		{"no local address", "", nil, "", true},
		{"unspecified", "", &net.TCPAddr{IP: net.IPv4zero, Port: 80}, "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			if tc.local != nil {
				ctx = context.WithValue(ctx, http.LocalAddrContextKey, tc.local)
			}
			got, err := baseURL(ctx, tc.explicit)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Fatalf("baseURL = %q, %v; want %q (error %v)", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

// The config arguments survive iPXE's parser checks (BootScript refuses
// anything iPXE would not pass through verbatim).
func TestConfigArgsInScript(t *testing.T) {
	const cred = "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_AbCde"
	tests := []struct {
		format string
		want   []string
	}{
		{FormatButane, []string{" ignition.config.url=http://10.0.0.1/config/52:54:00:00:00:01/ignition?cred=" + cred + " ", " ignition.platform.id=metal\n"}},
		{FormatCloudInit, []string{" ds=nocloud-net;s=http://10.0.0.1/config/52:54:00:00:00:01/nocloud/" + cred + "/\n"}},
	}
	for _, tc := range tests {
		t.Run(tc.format, func(t *testing.T) {
			spec := httpboot.BootSpec{KernelURL: "/artifacts/k", InitrdURLs: []string{"/artifacts/i"}, Args: []string{"console=ttyS0"}}
			spec.Args = append(spec.Args, configArgs(tc.format, "http://10.0.0.1/config/", "52:54:00:00:00:01", cred)...)
			s, err := httpboot.BootScript(spec)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(s), w) {
					t.Fatalf("script lacks %q:\n%s", w, s)
				}
			}
		})
	}
}

func TestRedactNoCloud(t *testing.T) {
	const cred = "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_AbCde"
	tests := []struct {
		path, want string
		ok         bool
	}{
		{"/config/52:54:00:00:00:01/nocloud/" + cred + "/user-data", "/config/52:54:00:00:00:01/nocloud/cred-sha256-" + bootcred.HashCredential(cred)[:12] + "/user-data", true},
		{"/config/52:54:00:00:00:01/nocloud/not-a-credential/meta-data", "/config/52:54:00:00:00:01/nocloud/redacted/meta-data", true},
		{"/config/52:54:00:00:00:01/ignition", "", false},
		{"/boot/52:54:00:00:00:01.ipxe", "", false},
	}
	for _, tc := range tests {
		got, ok := redactNoCloud(tc.path)
		if got != tc.want || ok != tc.ok {
			t.Errorf("redactNoCloud(%q) = %q, %v; want %q, %v", tc.path, got, ok, tc.want, tc.ok)
		}
	}
}
