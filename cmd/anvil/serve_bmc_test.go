package main

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// --bmc-allow-cidrs: parsed into the pool's guard, bad values named; none
// by default (loopback, link-local and metadata BMCs refused).
func TestServeBMCAllowCIDRs(t *testing.T) {
	parse := func(args ...string) (serveConfig, error) {
		var c serveConfig
		fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
		c.bind(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		return c, c.validate()
	}
	c, err := parse()
	if err != nil || len(c.bmcAllow) != 0 {
		t.Fatalf("default: %v, allowed %v (want none)", err, c.bmcAllow)
	}
	c, err = parse("--bmc-allow-cidrs", "127.0.0.1/32, 169.254.0.0/16")
	if err != nil || len(c.bmcAllow) != 2 || c.bmcAllow[0] != netip.MustParsePrefix("127.0.0.1/32") {
		t.Fatalf("two CIDRs: %v, %v", err, c.bmcAllow)
	}
	if _, err := parse("--bmc-allow-cidrs", "127.0.0.1/33"); err == nil || !strings.Contains(err.Error(), "--bmc-allow-cidrs") {
		t.Fatalf("bad CIDR: %v, want an error naming --bmc-allow-cidrs", err)
	}
}
