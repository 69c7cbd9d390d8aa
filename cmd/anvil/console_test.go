package main

import (
	"strings"
	"testing"
	"time"
)

// The console refuses to take bearer tokens over plain HTTP on a network,
// and its errors name the flag to fix.
func TestConsoleConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  consoleConfig
		want string // "" valid; else a substring of the error
	}{
		{"off", consoleConfig{prefix: "console-"}, ""},
		{"loopback, plain HTTP", consoleConfig{Listen: "127.0.0.1:8443", Idle: time.Hour, prefix: "console-"}, ""},
		{"localhost, plain HTTP", consoleConfig{Listen: "localhost:8443", Idle: time.Hour}, ""},
		{"IPv6 loopback", consoleConfig{Listen: "[::1]:8443", Idle: time.Hour}, ""},
		{"network, plain HTTP", consoleConfig{Listen: "0.0.0.0:8443", Idle: time.Hour, prefix: "console-"}, "--console-tls-cert-file"},
		{"all interfaces, no host", consoleConfig{Listen: ":8443", Idle: time.Hour}, "--tls-cert-file"},
		{"network behind a TLS proxy", consoleConfig{Listen: "0.0.0.0:8443", BehindTLS: true, Idle: time.Hour}, ""},
		{"network with TLS", consoleConfig{Listen: "10.0.0.1:8443", TLSCert: "c.pem", TLSKey: "k.pem", Idle: time.Hour}, ""},
		{"cert without key", consoleConfig{Listen: "127.0.0.1:8443", TLSCert: "c.pem", Idle: time.Hour, prefix: "console-"}, "--console-tls-cert-file and --console-tls-key-file go together"},
		{"not host:port", consoleConfig{Listen: "8443", Idle: time.Hour}, "invalid --listen"},
		{"idle zero", consoleConfig{Listen: "127.0.0.1:8443", prefix: "console-"}, "--console-session-idle"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.validate()
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("unexpected error: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}
