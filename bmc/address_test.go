package bmc

import (
	"errors"
	"strings"
	"testing"
)

func TestParseAddress(t *testing.T) {
	tests := []struct {
		in       string
		want     Address
		hostPort string // HostPort(623)
		str      string // String()
	}{
		{in: "redfish+https://10.0.0.1", want: Address{Scheme: "redfish+https", Host: "10.0.0.1"}, hostPort: "10.0.0.1:623", str: "redfish+https://10.0.0.1"},
		{in: "redfish+http://bmc1.example.com:8000", want: Address{Scheme: "redfish+http", Host: "bmc1.example.com", Port: 8000}, hostPort: "bmc1.example.com:8000", str: "redfish+http://bmc1.example.com:8000"},
		{in: "REDFISH+HTTPS://10.0.0.1/redfish/v1/Systems/1/", want: Address{Scheme: "redfish+https", Host: "10.0.0.1", Path: "/redfish/v1/Systems/1"}, str: "redfish+https://10.0.0.1/redfish/v1/Systems/1"},
		{in: "  ipmi://10.0.0.2  ", want: Address{Scheme: "ipmi", Host: "10.0.0.2"}, hostPort: "10.0.0.2:623", str: "ipmi://10.0.0.2"},
		{in: "ipmi://10.0.0.2:6230", want: Address{Scheme: "ipmi", Host: "10.0.0.2", Port: 6230}, hostPort: "10.0.0.2:6230"},
		{in: "ipmi://[fd00::2]", want: Address{Scheme: "ipmi", Host: "fd00::2"}, hostPort: "[fd00::2]:623", str: "ipmi://[fd00::2]"},
		{in: "ipmi://[fd00::2]:624", want: Address{Scheme: "ipmi", Host: "fd00::2", Port: 624}, hostPort: "[fd00::2]:624", str: "ipmi://[fd00::2]:624"},
		{in: "manual://", want: Address{Scheme: "manual"}, str: "manual:"},
		{in: "manual://rack3-u12", want: Address{Scheme: "manual", Host: "rack3-u12"}, str: "manual://rack3-u12"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseAddress(tc.in)
			if err != nil {
				t.Fatalf("ParseAddress: %v", err)
			}
			if got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			if tc.hostPort != "" && got.HostPort(623) != tc.hostPort {
				t.Fatalf("HostPort(623) = %s, want %s", got.HostPort(623), tc.hostPort)
			}
			if tc.str != "" && got.String() != tc.str {
				t.Fatalf("String() = %s, want %s", got.String(), tc.str)
			}
		})
	}
}

func TestParseAddressRejects(t *testing.T) {
	const pw = "hunter2-Secret"
	tests := []struct {
		name, in, msg string
	}{
		{"empty", "", "empty"},
		{"no scheme", "10.0.0.1", "no scheme"},
		{"no host", "ipmi://", "no host"},
		{"no host with port", "redfish+https://:443", "no host"},
		{"port zero", "ipmi://h:0", "port"},
		{"port too big", "ipmi://h:70000", "port"},
		{"port not a number", "ipmi://h:abc", "port"},
		{"empty port", "ipmi://h:", "port"},
		{"user and password", "redfish+https://admin:" + pw + "@10.0.0.1", "credentials"},
		{"user only", "redfish+https://admin@10.0.0.1/redfish/v1", "credentials"},
		{"password with bad escapes", "redfish+https://admin:" + pw + "%zz@10.0.0.1", "credentials"},
		{"password with spaces", "ipmi://admin:" + pw + " x@10.0.0.1", "credentials"},
		{"query", "ipmi://h?cipher=3", "query"},
		{"fragment", "ipmi://h#x", "fragment"},
		{"opaque", "ipmi:h", "scheme"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseAddress(tc.in)
			if !errors.Is(err, ErrInvalidAddress) {
				t.Fatalf("err = %v, want ErrInvalidAddress", err)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("err = %q, want it to mention %q", err, tc.msg)
			}
			if strings.Contains(err.Error(), pw) {
				t.Fatalf("error leaks the password: %q", err)
			}
		})
	}
}

func TestOpenUnknownScheme(t *testing.T) {
	_, err := Open(Options{Address: "ftp://10.0.0.1"})
	if !errors.Is(err, ErrInvalidAddress) || !strings.Contains(err.Error(), `"ftp"`) {
		t.Fatalf("err = %v", err)
	}
}
