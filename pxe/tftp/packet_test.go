package tftp

import (
	"slices"
	"testing"
)

func TestParseRequest(t *testing.T) {
	for _, tc := range []struct {
		name    string
		pkt     string
		ok      bool
		file    string
		mode    string
		options []string // name=value in order
	}{
		{"plain", "\x00\x01boot.bin\x00octet\x00", true, "boot.bin", "octet", nil},
		{"mode case", "\x00\x01boot.bin\x00OcTeT\x00", true, "boot.bin", "octet", nil},
		{"options", "\x00\x01f\x00octet\x00blksize\x001468\x00tsize\x000\x00windowsize\x004\x00", true, "f", "octet",
			[]string{"blksize=1468", "tsize=0", "windowsize=4"}},
		{"option names case-insensitive, first wins", "\x00\x01f\x00octet\x00BLKSIZE\x001024\x00blksize\x00512\x00", true, "f", "octet",
			[]string{"blksize=1024"}},
		{"write request", "\x00\x02up\x00octet\x00", true, "up", "octet", nil},
		{"too short", "\x00\x01", false, "", "", nil},
		{"DATA is no request", "\x00\x03\x00\x01abc", false, "", "", nil},
		{"no mode", "\x00\x01boot.bin\x00", false, "", "", nil},
		{"not NUL-terminated", "\x00\x01boot.bin\x00octet", false, "", "", nil},
		{"empty file name", "\x00\x01\x00octet\x00", false, "", "", nil},
		{"option without value", "\x00\x01f\x00octet\x00blksize\x00", false, "", "", nil},
		{"empty option name", "\x00\x01f\x00octet\x00\x00512\x00", false, "", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := parseRequest([]byte(tc.pkt))
			if (err == nil) != tc.ok {
				t.Fatalf("err = %v, want ok %v", err, tc.ok)
			}
			if !tc.ok {
				return
			}
			var got []string
			for _, n := range r.order {
				got = append(got, n+"="+r.options[n])
			}
			if r.filename != tc.file || r.mode != tc.mode || !slices.Equal(got, tc.options) {
				t.Fatalf("got file %q mode %q options %v", r.filename, r.mode, got)
			}
		})
	}
}

func TestNegotiate(t *testing.T) {
	req := func(opts ...string) request {
		r := request{op: opRRQ, filename: "f", mode: "octet", options: map[string]string{}}
		for i := 0; i < len(opts); i += 2 {
			r.options[opts[i]] = opts[i+1]
			r.order = append(r.order, opts[i])
		}
		return r
	}
	for _, tc := range []struct {
		name          string
		r             request
		block, window int
		oack          []option
	}{
		{"no options: RFC 1350", req(), 512, 1, nil},
		{"blksize within the cap", req("blksize", "1024"), 1024, 1, []option{{"blksize", "1024"}}},
		{"blksize capped", req("blksize", "9000"), 1468, 1, []option{{"blksize", "1468"}}},
		{"blksize too small is ignored", req("blksize", "7"), 512, 1, nil},
		{"blksize not a number is ignored", req("blksize", "big"), 512, 1, nil},
		{"tsize answered with the size", req("tsize", "0"), 512, 1, []option{{"tsize", "123456"}}},
		{"windowsize", req("windowsize", "4"), 512, 4, []option{{"windowsize", "4"}}},
		{"windowsize capped", req("windowsize", "1000"), 512, 64, []option{{"windowsize", "64"}}},
		{"windowsize 0 is ignored", req("windowsize", "0"), 512, 1, nil},
		{"unknown options are left out", req("timeout", "3", "multicast", "", "blksize", "1468"), 1468, 1, []option{{"blksize", "1468"}}},
		{"client's order", req("tsize", "0", "windowsize", "8", "blksize", "1400"), 1400, 8,
			[]option{{"tsize", "123456"}, {"windowsize", "8"}, {"blksize", "1400"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := negotiate(tc.r, 123456, 1468, 64)
			if n.blockSize != tc.block || n.windowSize != tc.window || !slices.Equal(n.oack, tc.oack) {
				t.Fatalf("got blksize %d windowsize %d oack %v, want %d %d %v", n.blockSize, n.windowSize, n.oack, tc.block, tc.window, tc.oack)
			}
		})
	}
}

func TestErrorAndAckPackets(t *testing.T) {
	p := appendError(nil, errCodeNotFound, "file not found")
	code, msg, ok := parseError(p)
	if !ok || code != errCodeNotFound || msg != "file not found" {
		t.Fatalf("parseError(%q) = %d %q %v", p, code, msg, ok)
	}
	if _, ok := parseAck(p); ok {
		t.Fatal("an ERROR parsed as an ACK")
	}
	if b, ok := parseAck([]byte{0, opACK, 0xff, 0xfe}); !ok || b != 0xfffe {
		t.Fatalf("parseAck = %d %v", b, ok)
	}
	if got := string(appendOACK(nil, []option{{"blksize", "1468"}, {"tsize", "42"}})); got != "\x00\x06blksize\x001468\x00tsize\x0042\x00" {
		t.Fatalf("OACK %q", got)
	}
}
