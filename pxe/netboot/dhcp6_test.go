package netboot_test

import (
	"strings"
	"testing"
)

func TestDHCP6Flags(t *testing.T) {
	o, err := parse(t, "--dhcp6-interface=br0", "--dhcp6-range=fd00::100-fd00::1ff", "--dhcp6-server-addr=fd00::1")
	if err != nil {
		t.Fatal(err)
	}
	if !o.Enabled() || o.DHCP6Interface != "br0" || o.DHCP6Range.Start.String() != "fd00::100" || o.DHCP6Range.End.String() != "fd00::1ff" ||
		o.DHCP6ServerAddr.String() != "fd00::1" {
		t.Fatalf("parsed %+v", o)
	}
	for _, arg := range []string{"--dhcp6-range=10.0.0.1-10.0.0.9", "--dhcp6-server-addr=10.0.0.1"} {
		if _, err := parse(t, arg); err == nil || !strings.Contains(err.Error(), strings.Split(arg, "=")[0]) {
			t.Errorf("%s: %v", arg, err)
		}
	}
}

// Every error names the flag to fix.
func TestDHCP6Validate(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // in the error; "" for none of ours
	}{
		{[]string{"--dhcp6-interface=br0"}, "--dhcp6-interface needs --dhcp6-range"},
		{[]string{"--dhcp6-range=fd00::1-fd00::9"}, "need --dhcp6-interface"},
		{[]string{"--dhcp6-interface=br0", "--dhcp6-range=fd00::1-fd00::9"}, ""},
	} {
		o, err := parse(t, tc.args...)
		if err != nil {
			t.Fatal(err)
		}
		err = o.Validate() // also complains that Cache is unset: not ours
		got := ""
		if err != nil {
			got = err.Error()
		}
		if tc.want == "" && strings.Contains(got, "dhcp6") {
			t.Errorf("%v: unexpected %q", tc.args, got)
		}
		if tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("%v: error %q, want %q in it", tc.args, got, tc.want)
		}
	}
}
