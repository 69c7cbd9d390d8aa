package ipmi_test

import (
	"anvil.dev/anvil/test/need"
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha1"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"anvil.dev/anvil/bmc"
	"anvil.dev/anvil/bmc/ipmi"
	"anvil.dev/anvil/internal/netguard"
	"anvil.dev/anvil/test/bmctest"
)

// A password that would be easy to spot in an error string (ipmi_sim takes
// at most 16 bytes).
const secret = "S3cr3t-IPMIpw-16"

func startSim(t *testing.T, opts bmctest.IPMISimOptions) *bmctest.IPMISim {
	t.Helper()
	if _, err := bmctest.FindIPMISim(""); err != nil {
		need.OrSkip(t, "%v", err)
	}
	if opts.Password == "" {
		opts.Password = secret
	}
	return bmctest.StartIPMISim(t, opts)
}

func options(s *bmctest.IPMISim) bmc.Options {
	return bmc.Options{
		Address:     s.Address(),
		Credentials: bmc.Credentials{Username: s.Username(), Password: s.Password()},
		Timeout:     30 * time.Second,
		Guard:       lab,
	}
}

// lab lets drivers dial ipmi_sim on loopback.
var lab = netguard.Guard{AllowLoopback: true}

func open(t *testing.T, opts bmc.Options) bmc.Driver {
	t.Helper()
	d, err := bmc.Open(opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = d.Close(context.Background()) })
	return d
}

func noSecret(t *testing.T, err error) {
	t.Helper()
	if err != nil && strings.Contains(fmt.Sprintf("%v %+v %#v", err, err, err), secret) {
		t.Fatalf("error contains the password: %v", err)
	}
}

func setCalls(t *testing.T, s *bmctest.IPMISim) []string {
	t.Helper()
	calls, err := s.SetCalls()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range calls {
		out = append(out, c.String())
	}
	return out
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestPowerActions(t *testing.T) {
	tests := []struct {
		name      string
		from      bool
		action    bmc.PowerAction
		wantCalls []string // set requests ipmi_sim passed to chassis_control
		wantOn    bool
	}{
		{"on", false, bmc.PowerOn, []string{"set power 1"}, true},
		{"off", true, bmc.PowerOff, []string{"set power 0"}, false},
		{"graceful off", true, bmc.PowerGracefulOff, []string{"set shutdown 1"}, false},
		// ipmi_sim implements a cycle as power off now, power on a second later.
		{"reset cycles a running server", true, bmc.PowerReset, []string{"set power 0", "set power 1"}, true},
		{"reset powers on a server that is off", false, bmc.PowerReset, []string{"set power 1"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := startSim(t, bmctest.IPMISimOptions{PowerOn: tc.from})
			d := open(t, options(s))
			ctx := context.Background()
			want := bmc.PowerStateOff
			if tc.from {
				want = bmc.PowerStateOn
			}
			if st, err := d.PowerState(ctx); err != nil || st != want {
				t.Fatalf("PowerState = %s, %v; want %s", st, err, want)
			}
			if err := d.SetPower(ctx, tc.action); err != nil {
				t.Fatalf("SetPower(%s): %v", tc.action, err)
			}
			waitFor(t, fmt.Sprintf("chassis_control calls %v", tc.wantCalls), func() bool {
				return strings.Join(setCalls(t, s), ",") == strings.Join(tc.wantCalls, ",")
			})
			if on, err := s.PowerOn(); err != nil || on != tc.wantOn {
				t.Fatalf("chassis power %t, %v; want %t", on, err, tc.wantOn)
			}
			want = bmc.PowerStateOff
			if tc.wantOn {
				want = bmc.PowerStateOn
			}
			if st, err := d.PowerState(ctx); err != nil || st != want {
				t.Fatalf("PowerState after = %s, %v; want %s", st, err, want)
			}
		})
	}
}

func TestBootOnce(t *testing.T) {
	tests := []struct {
		dev     bmc.BootDevice
		uefi    bool
		want    string // what ipmi_sim passed to chassis_control
		wantSel byte   // boot device selector on the wire
	}{
		{bmc.BootPXE, false, "pxe", 0x1},
		{bmc.BootPXE, true, "pxe", 0x1},
		{bmc.BootDisk, false, "default", 0x2},
		{bmc.BootDisk, true, "default", 0x2},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s uefi=%t", tc.dev, tc.uefi), func(t *testing.T) {
			s := startSim(t, bmctest.IPMISimOptions{})
			// ipmi_sim hands only the device to chassis_control, not the
			// EFI or persistence bits, so the sniffer reads those off the
			// wire (decrypting with keys it derives from the password and
			// the RAKP exchange, as the BMC does).
			p := startSniffer(t, s.HostPort(), s.Password())
			opts := options(s)
			opts.Address = "ipmi://" + p.addr()
			opts.UEFI = tc.uefi
			d := open(t, opts)
			if err := d.SetBootOnce(context.Background(), tc.dev); err != nil {
				t.Fatalf("SetBootOnce: %v", err)
			}
			if dev, err := s.BootDevice(); err != nil || dev != tc.want {
				t.Fatalf("chassis_control boot device %q, %v; want %q", dev, err, tc.want)
			}
			if got := setCalls(t, s); len(got) != 1 || got[0] != "set boot "+tc.want {
				t.Fatalf("set calls %v", got)
			}
			flags := p.bootFlags()
			if len(flags) != 1 {
				t.Fatalf("saw %d Set System Boot Options (boot flags) requests, want 1", len(flags))
			}
			f := flags[0]
			if f.valid != true || f.persistent || f.efi != tc.uefi || f.device != tc.wantSel {
				t.Fatalf("boot flags on the wire %+v; want valid, next boot only, efi=%t, device %#x", f, tc.uefi, tc.wantSel)
			}
		})
	}
}

// IPMI has no UEFI HTTP boot selector: ErrUnsupported, and nothing is set.
func TestBootOnceHTTPUnsupported(t *testing.T) {
	s := startSim(t, bmctest.IPMISimOptions{})
	err := open(t, options(s)).SetBootOnce(context.Background(), bmc.BootHTTP)
	if !errors.Is(err, bmc.ErrUnsupported) || !strings.Contains(err.Error(), "HTTP") {
		t.Fatalf("error %v: want ErrUnsupported naming HTTP boot", err)
	}
	if got := setCalls(t, s); len(got) != 0 {
		t.Fatalf("set calls %v, want none", got)
	}
}

func TestSessionReuse(t *testing.T) {
	s := startSim(t, bmctest.IPMISimOptions{})
	p := startSniffer(t, s.HostPort(), s.Password())
	opts := options(s)
	opts.Address = "ipmi://" + p.addr()
	d := open(t, opts)
	ctx := context.Background()
	for i := range 20 {
		if _, err := d.PowerState(ctx); err != nil {
			t.Fatalf("PowerState #%d: %v", i, err)
		}
	}
	if err := d.SetPower(ctx, bmc.PowerOn); err != nil {
		t.Fatal(err)
	}
	if n := p.openSessions(); n != 1 {
		t.Fatalf("%d RMCP+ Open Session requests for 21 calls, want 1", n)
	}
}

func TestWrongPassword(t *testing.T) {
	for _, user := range []string{"admin", "nobody"} {
		t.Run(user, func(t *testing.T) {
			s := startSim(t, bmctest.IPMISimOptions{Password: "the-right-one"})
			p := startSniffer(t, s.HostPort(), s.Password())
			opts := options(s)
			opts.Address = "ipmi://" + p.addr()
			opts.Credentials = bmc.Credentials{Username: user, Password: secret}
			d := open(t, opts)
			ctx := context.Background()
			for i, call := range []func() error{
				func() error { _, err := d.PowerState(ctx); return err },
				func() error { return d.SetPower(ctx, bmc.PowerOn) },
				func() error { return d.SetBootOnce(ctx, bmc.BootPXE) },
				func() error { _, err := d.Facts(ctx); return err },
			} {
				err := call()
				if !errors.Is(err, bmc.ErrAuthFailed) {
					t.Fatalf("call %d: %v, want ErrAuthFailed", i, err)
				}
				noSecret(t, err)
			}
			if n := p.openSessions(); n < 1 || n > 2 {
				t.Fatalf("%d session attempts for 4 calls with a wrong password, want 1 or 2", n)
			}
			if got := setCalls(t, s); len(got) != 0 {
				t.Fatalf("actions performed with a wrong password: %v", got)
			}
		})
	}
}

func TestFacts(t *testing.T) {
	s := startSim(t, bmctest.IPMISimOptions{FRU: &bmctest.FRU{
		BoardManufacturer: "Board Co", BoardProduct: "B-1", BoardSerial: "BSN-1",
		Manufacturer: "Anvil Systems", Product: "Forge 9000", SerialNumber: "SN-42",
	}})
	f, err := open(t, options(s)).Facts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// bmctest.DefaultGUID's bytes a1 23 45 67 89 ab cd ef a1 23 45 67 89 ab
	// cd ef read as an SMBIOS UUID (first three fields little-endian).
	want := bmc.Facts{Manufacturer: "Anvil Systems", Model: "Forge 9000", SerialNumber: "SN-42", UUID: "674523a1-ab89-efcd-a123-456789abcdef"}
	if fmt.Sprint(f) != fmt.Sprint(want) {
		t.Fatalf("facts\n got %+v\nwant %+v", f, want)
	}

	// Board info fills in when there is no product area data; no FRU at all
	// still gives the GUID.
	s2 := startSim(t, bmctest.IPMISimOptions{FRU: &bmctest.FRU{BoardManufacturer: "Board Co", BoardProduct: "B-1", BoardSerial: "BSN-1"}})
	f2, err := open(t, options(s2)).Facts(context.Background())
	if err != nil || f2.Manufacturer != "Board Co" || f2.Model != "B-1" || f2.SerialNumber != "BSN-1" {
		t.Fatalf("board facts %+v, %v", f2, err)
	}
	s3 := startSim(t, bmctest.IPMISimOptions{})
	f3, err := open(t, options(s3)).Facts(context.Background())
	if err != nil || f3.UUID != want.UUID || f3.Manufacturer != "" {
		t.Fatalf("facts without FRU %+v, %v", f3, err)
	}
}

func TestUnreachable(t *testing.T) {
	c, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := c.LocalAddr().String()
	_ = c.Close() // nothing answers there now
	opts := bmc.Options{Address: "ipmi://" + addr, Credentials: bmc.Credentials{Username: "admin", Password: secret}, Timeout: 20 * time.Second, Guard: lab}
	_, err = open(t, opts).PowerState(context.Background())
	if !errors.Is(err, bmc.ErrUnreachable) {
		t.Fatalf("err = %v, want ErrUnreachable", err)
	}
	noSecret(t, err)
}

func TestReconnectsAfterBMCRestart(t *testing.T) {
	s := startSim(t, bmctest.IPMISimOptions{PowerOn: true})
	port := s.Port()
	opts := options(s)
	opts.Timeout = 10 * time.Second // detect the dead session sooner
	d := open(t, opts)
	ctx := context.Background()
	if _, err := d.PowerState(ctx); err != nil {
		t.Fatal(err)
	}
	// The BMC reboots: its sessions are gone.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := startSim(t, bmctest.IPMISimOptions{Port: port})
	if err := d.SetPower(ctx, bmc.PowerOn); err != nil {
		t.Fatalf("SetPower after BMC restart: %v", err)
	}
	if got := setCalls(t, s2); len(got) != 1 || got[0] != "set power 1" {
		t.Fatalf("set calls %v", got)
	}
}

func TestOpenValidation(t *testing.T) {
	tests := []struct {
		opts bmc.Options
		kind error
	}{
		{bmc.Options{Address: "ipmi://10.0.0.1/path"}, bmc.ErrInvalidAddress},
		{bmc.Options{Address: "ipmi://10.0.0.1", IPMICipherSuite: 99}, bmc.ErrUnsupported},
		{bmc.Options{Address: "ipmi://10.0.0.1", IPMICipherSuite: 300}, bmc.ErrInvalidAddress},
		{bmc.Options{Address: "ipmi://admin:" + secret + "@10.0.0.1"}, bmc.ErrInvalidAddress},
	}
	for _, tc := range tests {
		_, err := bmc.Open(tc.opts)
		if !errors.Is(err, tc.kind) {
			t.Errorf("Open(%s, suite %d) = %v, want %v", strings.ReplaceAll(tc.opts.Address, secret, "***"), tc.opts.IPMICipherSuite, err, tc.kind)
		}
		noSecret(t, err)
	}
	d, err := bmc.Open(bmc.Options{Address: "ipmi://10.0.0.1", IPMICipherSuite: 17})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := d.(*ipmi.Driver); !ok {
		t.Fatalf("driver %T", d)
	}
}

// sniffer is a UDP relay between the driver and ipmi_sim that decodes what
// the driver sends. It follows the RAKP exchange and derives the session's
// AES key from the password (IPMI v2.0 §13.31-13.32), so it can read the
// encrypted requests of cipher suite 3 — an implementation of the spec
// independent of go-ipmi's.
type sniffer struct {
	conn     net.PacketConn
	upstream *net.UDPAddr
	password string
	mu       sync.Mutex
	opens    int
	rakp1    []byte // payload of the last RAKP message 1
	aesKey   []byte
	flags    []bootFlags
}

type bootFlags struct {
	valid, persistent, efi bool
	device                 byte
}

func startSniffer(t *testing.T, upstream, password string) *sniffer {
	t.Helper()
	up, err := net.ResolveUDPAddr("udp4", upstream)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &sniffer{conn: conn, upstream: up, password: password}
	t.Cleanup(func() { _ = conn.Close() })
	go s.run()
	return s
}

func (s *sniffer) addr() string { return s.conn.LocalAddr().String() }

func (s *sniffer) run() {
	// One upstream socket per client address, relaying replies back.
	ups := map[string]*net.UDPConn{}
	buf := make([]byte, 2048)
	for {
		n, from, err := s.conn.ReadFrom(buf)
		if err != nil {
			for _, u := range ups {
				_ = u.Close()
			}
			return
		}
		pkt := append([]byte(nil), buf[:n]...)
		s.inspect(pkt)
		u := ups[from.String()]
		if u == nil {
			if u, err = net.DialUDP("udp4", nil, s.upstream); err != nil {
				continue
			}
			ups[from.String()] = u
			go func(u *net.UDPConn, to net.Addr) {
				rb := make([]byte, 2048)
				for {
					m, err := u.Read(rb)
					if err != nil {
						return
					}
					s.inspect(rb[:m])
					if _, err := s.conn.WriteTo(rb[:m], to); err != nil {
						return
					}
				}
			}(u, from)
		}
		_, _ = u.Write(pkt)
	}
}

func hmacSHA1(key []byte, parts ...[]byte) []byte {
	h := hmac.New(sha1.New, key)
	for _, p := range parts {
		h.Write(p)
	}
	return h.Sum(nil)
}

// inspect decodes RMCP+ packets: Open Session requests, RAKP 1 and 2 (for
// the keys) and Set System Boot Options (boot flags) requests.
func (s *sniffer) inspect(p []byte) {
	if len(p) < 16 || p[0] != 0x06 || p[3] != 0x07 || p[4] != 0x06 {
		return // not IPMI over RMCP+
	}
	ptype := p[5] & 0x3f
	encrypted := p[5]&0x80 != 0
	plen := int(p[14]) | int(p[15])<<8
	if len(p) < 16+plen {
		return
	}
	payload := p[16 : 16+plen]
	s.mu.Lock()
	defer s.mu.Unlock()
	switch ptype {
	case 0x10: // RMCP+ Open Session Request
		s.opens++
	case 0x12: // RAKP Message 1
		s.rakp1 = append([]byte(nil), payload...)
	case 0x13: // RAKP Message 2
		if len(s.rakp1) < 28 || len(payload) < 24 || payload[1] != 0 {
			return
		}
		// SIK = HMAC(Kuid, Rm | Rc | RoleM | ULengthM | UNameM); K2 =
		// HMAC(SIK, 20 x 0x02); the AES-128 key is K2's first 16 bytes.
		kuid := make([]byte, 20)
		copy(kuid, s.password)
		ulen := int(s.rakp1[27])
		if len(s.rakp1) < 28+ulen {
			return
		}
		sik := hmacSHA1(kuid, s.rakp1[8:24], payload[8:24], s.rakp1[24:25], s.rakp1[27:28], s.rakp1[28:28+ulen])
		s.aesKey = hmacSHA1(sik, bytes.Repeat([]byte{0x02}, 20))[:16]
	case 0x00: // IPMI message
		msg := payload
		if encrypted {
			if s.aesKey == nil || len(payload) < 32 || (len(payload)-16)%aes.BlockSize != 0 {
				return
			}
			block, err := aes.NewCipher(s.aesKey)
			if err != nil {
				return
			}
			plain := make([]byte, len(payload)-16)
			cipher.NewCBCDecrypter(block, payload[:16]).CryptBlocks(plain, payload[16:])
			pad := int(plain[len(plain)-1])
			if pad+1 > len(plain) {
				return
			}
			msg = plain[:len(plain)-1-pad]
		}
		if len(msg) < 10 {
			return
		}
		// rsAddr, netFn/rsLUN, chk, rqAddr, rqSeq/rqLUN, cmd, data..., chk
		netFn, cmd, data := msg[1]>>2, msg[5], msg[6:len(msg)-1]
		if netFn == 0x00 && cmd == 0x08 && len(data) >= 3 && data[0]&0x7f == 5 {
			s.flags = append(s.flags, bootFlags{
				valid:      data[1]&0x80 != 0,
				persistent: data[1]&0x40 != 0,
				efi:        data[1]&0x20 != 0,
				device:     (data[2] >> 2) & 0x0f,
			})
		}
	}
}

func (s *sniffer) openSessions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.opens
}

func (s *sniffer) bootFlags() []bootFlags {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]bootFlags(nil), s.flags...)
}
