// Package bmctest runs real BMC simulators for tests and labs. IPMISim starts
// OpenIPMI's ipmi_sim (Debian package openipmi) on 127.0.0.1 with a generated
// LAN config, emulator commands and a chassis_control script that records
// every power and boot request in a state directory, so a test observes what
// the BMC was asked to do rather than what a driver claims it did. An
// optional hook command lets a lab start and stop a VM on power requests.
package bmctest

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// IPMISimOptions configure an ipmi_sim instance.
type IPMISimOptions struct {
	// Binary is the ipmi_sim executable; default "ipmi_sim" from PATH.
	Binary string
	// Dir holds config, state and logs; default a new temporary directory
	// (removed by Close).
	Dir string
	// Port on 127.0.0.1; 0 picks a free one.
	Port int
	// Username and Password of the admin user; defaults "admin" and
	// "password". ipmi_sim takes at most 16 bytes for each (longer
	// passwords silently fail every login).
	Username, Password string
	// PowerOn is the initial power state.
	PowerOn bool
	// GUID is the system GUID as 32 hex digits (the 16 bytes as ipmi_sim
	// sends them); default a fixed value.
	GUID string
	// FRU, when set, is served as FRU device 0.
	FRU *FRU
	// Hook is run in the background as Hook... set <param> <value> after
	// every set request (param: power, reset, shutdown, boot), e.g. a script
	// that starts or kills a QEMU VM. It must not block ipmi_sim: ipmi_sim
	// waits for the chassis_control script, and clients retransmit after
	// about a second.
	Hook []string
	// PowerDelay is how long after a power request the power changes, as
	// on a real BMC: the request is answered at once (and recorded in
	// Calls), the state follows later.
	PowerDelay time.Duration
}

// DefaultGUID is the GUID an IPMISim reports unless told otherwise.
const DefaultGUID = "a123456789abcdefa123456789abcdef"

// IPMISim is a running ipmi_sim.
type IPMISim struct {
	opts    IPMISimOptions
	port    int
	dir     string
	tempDir bool
	cmd     *exec.Cmd
	done    chan struct{}
	waitErr error
	once    sync.Once
}

// Call is one request ipmi_sim passed to the chassis_control script.
type Call struct {
	Op    string // "get" or "set"
	Param string // "power", "boot", "reset", "shutdown", ...
	Value string // for set
}

func (c Call) String() string { return strings.TrimSpace(c.Op + " " + c.Param + " " + c.Value) }

// FindIPMISim returns the path of ipmi_sim or an error saying how to get it.
func FindIPMISim(binary string) (string, error) {
	if binary == "" {
		binary = "ipmi_sim"
	}
	p, err := exec.LookPath(binary)
	if err != nil {
		return "", fmt.Errorf("ipmi_sim not found (Debian package openipmi): %w", err)
	}
	return p, nil
}

// StartIPMISim starts ipmi_sim for a test and stops it when the test ends.
// Callers that want to skip when ipmi_sim is missing check FindIPMISim first.
func StartIPMISim(t testing.TB, opts IPMISimOptions) *IPMISim {
	t.Helper()
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	s, err := NewIPMISim(opts)
	if err != nil {
		t.Fatalf("bmctest: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Logf("bmctest: stopping ipmi_sim: %v", err)
		}
	})
	return s
}

// NewIPMISim writes the configuration and starts ipmi_sim; it returns once
// the simulator answers an RMCP ping.
func NewIPMISim(opts IPMISimOptions) (*IPMISim, error) {
	bin, err := FindIPMISim(opts.Binary)
	if err != nil {
		return nil, err
	}
	if opts.Username == "" {
		opts.Username = "admin"
	}
	if opts.Password == "" {
		opts.Password = "password"
	}
	if opts.GUID == "" {
		opts.GUID = DefaultGUID
	}
	if err := validate(opts); err != nil {
		return nil, err
	}
	s := &IPMISim{opts: opts, dir: opts.Dir, done: make(chan struct{})}
	if s.dir == "" {
		if s.dir, err = os.MkdirTemp("", "bmctest-ipmisim-"); err != nil {
			return nil, err
		}
		s.tempDir = true
	}
	// A free port can be taken between probing and binding; try a few.
	for attempt := 0; ; attempt++ {
		s.port = opts.Port
		if s.port == 0 {
			if s.port, err = freeUDPPort(); err != nil {
				return nil, s.cleanupDir(err)
			}
		}
		err = s.start(bin)
		if err == nil || opts.Port != 0 || attempt == 2 {
			break
		}
	}
	if err != nil {
		return nil, s.cleanupDir(err)
	}
	return s, nil
}

func (s *IPMISim) cleanupDir(err error) error {
	if s.tempDir {
		_ = os.RemoveAll(s.dir)
	}
	return err
}

func validate(o IPMISimOptions) error {
	bad := func(v string) bool { return strings.ContainsAny(v, "\"\\\n\r\x00") }
	switch {
	case len(o.Username) > 16 || bad(o.Username):
		return errors.New("bmctest: username must be at most 16 bytes without quotes, backslashes or newlines")
	case len(o.Password) > 16 || bad(o.Password):
		return errors.New("bmctest: password must be at most 16 bytes (ipmi_sim's limit) without quotes, backslashes or newlines")
	}
	if b, err := hex.DecodeString(o.GUID); err != nil || len(b) != 16 {
		return errors.New("bmctest: GUID must be 32 hex digits")
	}
	for _, a := range o.Hook {
		if strings.ContainsAny(a, "\n\r\x00") {
			return errors.New("bmctest: hook arguments must not contain newlines")
		}
	}
	return nil
}

func freeUDPPort() (int, error) {
	c, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port, nil
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// chassisScript answers ipmi_sim's chassis_control calls
// (<script> <device> get <param>... | set <param> <value>...), keeping the
// state in files so that tests and hooks can read it. It must answer within
// about a second: clients retransmit after that and ipmi_sim runs it again.
const chassisScript = `#!/bin/sh
# Generated by anvil.dev/anvil/test/bmctest for ipmi_sim's chassis_control.
state=%s
delay=%s
setpower() {
	if [ "$delay" = 0 ]; then
		echo "$1" > "$state/power.tmp" && mv "$state/power.tmp" "$state/power"
		return
	fi
	( sleep "$delay"; echo "$1" > "$state/power.tmp.$$" && mv "$state/power.tmp.$$" "$state/power" ) >/dev/null 2>&1 </dev/null &
}
hook() {
%s
}
shift # the device (MC address) ipmi_sim passes first
call="$*"
op=$1
[ $# -gt 0 ] && shift
case "$op" in
get)
	echo "$call" >> "$state/calls"
	for p in "$@"; do
		case "$p" in
		power) echo "power:$(cat "$state/power" 2>/dev/null || echo 0)" ;;
		boot) echo "boot:$(cat "$state/boot" 2>/dev/null || echo default)" ;;
		*) echo "Invalid parameter: $p"; exit 1 ;;
		esac
	done
	;;
set)
	while [ $# -gt 0 ]; do
		p=$1; shift
		v=
		if [ $# -gt 0 ]; then v=$1; shift; fi
		case "$p" in
		power) setpower "$v" ;;
		# A graceful shutdown request: the simulated OS complies at once.
		shutdown) [ "$v" = 1 ] && echo 0 > "$state/power.tmp" && mv "$state/power.tmp" "$state/power" ;;
		# A reset pulse: the power stays on.
		reset) ;;
		boot) echo "$v" > "$state/boot.tmp" && mv "$state/boot.tmp" "$state/boot" ;;
		identify) [ $# -gt 0 ] && shift ;;
		*) echo "Invalid parameter: $p"; exit 1 ;;
		esac
		hook "$p" "$v"
	done
	# Recorded after the state changed, so a reader that sees the call also
	# sees its effect.
	echo "$call" >> "$state/calls"
	;;
*)
	echo "Unsupported operation: $op"
	exit 1
	;;
esac
exit 0
`

const lanConf = `# Generated by anvil.dev/anvil/bmc/bmctest.
name "anvil-bmctest"
set_working_mc 0x20
  startlan 1
    addr 127.0.0.1 %d
    priv_limit admin
    allowed_auths_callback none md2 md5 straight
    allowed_auths_user md2 md5 straight
    allowed_auths_operator md2 md5 straight
    allowed_auths_admin md2 md5 straight
    guid %s
  endlan
  chassis_control "%s 0x20"
  user 2 true "%s" "%s" admin 10 md5 md2 straight
`

func (s *IPMISim) start(bin string) error {
	stateDir := filepath.Join(s.dir, "state")
	simDir := filepath.Join(s.dir, "ipmi_sim")
	for _, d := range []string{stateDir, simDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	power := "0\n"
	if s.opts.PowerOn {
		power = "1\n"
	}
	hook := "\t:"
	if len(s.opts.Hook) > 0 {
		q := make([]string, len(s.opts.Hook))
		for i, a := range s.opts.Hook {
			q[i] = shellQuote(a)
		}
		// Backgrounded so that ipmi_sim gets its answer at once.
		hook = fmt.Sprintf("\t%s set \"$1\" \"$2\" >>\"$state/hook.log\" 2>&1 </dev/null &", strings.Join(q, " "))
	}
	script := filepath.Join(s.dir, "chassis_control.sh")
	emu := "mc_setbmc 0x20\n" +
		"mc_add 0x20 0 no-device-sdrs 0x23 9 8 0x9f 0x1291 0xf02 persist_sdr\n" +
		"sel_enable 0x20 1000 0x0a\n"
	if s.opts.FRU != nil {
		emu += fruCommand(0x20, 0, s.opts.FRU.Bytes())
	}
	emu += "mc_enable 0x20\n"
	files := map[string]struct {
		body string
		mode os.FileMode
	}{
		filepath.Join(stateDir, "power"): {power, 0o644},
		filepath.Join(stateDir, "boot"):  {"default\n", 0o644},
		filepath.Join(stateDir, "calls"): {"", 0o644},
		script:                           {fmt.Sprintf(chassisScript, shellQuote(stateDir), strconv.FormatFloat(s.opts.PowerDelay.Seconds(), 'f', -1, 64), hook), 0o755},
		filepath.Join(s.dir, "lan.conf"): {fmt.Sprintf(lanConf, s.port, s.opts.GUID, script, s.opts.Username, s.opts.Password), 0o600},
		filepath.Join(s.dir, "sim.emu"):  {emu, 0o644},
	}
	for name, f := range files {
		if err := os.WriteFile(name, []byte(f.body), f.mode); err != nil {
			return err
		}
	}
	logf, err := os.Create(filepath.Join(s.dir, "ipmi_sim.log"))
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(bin, "-c", filepath.Join(s.dir, "lan.conf"), "-f", filepath.Join(s.dir, "sim.emu"), "-s", simDir, "-n")
	cmd.Dir = s.dir
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return err
	}
	s.cmd = cmd
	s.done = make(chan struct{})
	go func() {
		s.waitErr = cmd.Wait()
		close(s.done)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.waitReady(ctx); err != nil {
		_ = s.stop()
		log, _ := os.ReadFile(filepath.Join(s.dir, "ipmi_sim.log"))
		return fmt.Errorf("ipmi_sim did not come up on 127.0.0.1:%d: %w; log: %s", s.port, err, strings.TrimSpace(string(log)))
	}
	return nil
}

// waitReady sends RMCP presence pings until ipmi_sim answers.
func (s *IPMISim) waitReady(ctx context.Context) error {
	ping := []byte{0x06, 0x00, 0xff, 0x06, 0x00, 0x00, 0x11, 0xbe, 0x80, 0x01, 0x00, 0x00}
	conn, err := net.Dial("udp4", s.HostPort())
	if err != nil {
		return err
	}
	defer conn.Close()
	buf := make([]byte, 64)
	for {
		select {
		case <-s.done:
			return fmt.Errorf("ipmi_sim exited: %v", s.waitErr)
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		if _, err := conn.Write(ping); err != nil {
			return err
		}
		_ = conn.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		if n, err := conn.Read(buf); err == nil && n >= 9 && buf[8] == 0x40 { // presence pong
			return nil
		}
	}
}

// Port is the UDP port on 127.0.0.1.
func (s *IPMISim) Port() int { return s.port }

// HostPort is "127.0.0.1:<port>".
func (s *IPMISim) HostPort() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// Address is the BMC address for the ipmi driver: "ipmi://127.0.0.1:<port>".
func (s *IPMISim) Address() string { return "ipmi://" + s.HostPort() }

// Username of the admin user.
func (s *IPMISim) Username() string { return s.opts.Username }

// Password of the admin user.
func (s *IPMISim) Password() string { return s.opts.Password }

// Dir is the directory with config, state and logs.
func (s *IPMISim) Dir() string { return s.dir }

// PID of the ipmi_sim process.
func (s *IPMISim) PID() int { return s.cmd.Process.Pid }

func (s *IPMISim) readState(name string) (string, error) {
	b, err := os.ReadFile(filepath.Join(s.dir, "state", name))
	return strings.TrimSpace(string(b)), err
}

// PowerOn reports the power state the chassis_control script holds.
func (s *IPMISim) PowerOn() (bool, error) {
	v, err := s.readState("power")
	return v == "1", err
}

// BootDevice reports the boot device ipmi_sim last set through the script:
// "pxe", "default" (hard disk), "cdrom", "bios" or "none".
func (s *IPMISim) BootDevice() (string, error) { return s.readState("boot") }

// Calls returns the chassis_control requests so far, oldest first.
func (s *IPMISim) Calls() ([]Call, error) {
	v, err := s.readState("calls")
	if err != nil {
		return nil, err
	}
	var out []Call
	for _, line := range strings.Split(v, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		c := Call{Op: f[0]}
		if len(f) > 1 {
			c.Param = f[1]
		}
		if len(f) > 2 {
			c.Value = strings.Join(f[2:], " ")
		}
		out = append(out, c)
	}
	return out, nil
}

// SetCalls filters Calls to the set requests.
func (s *IPMISim) SetCalls() ([]Call, error) {
	all, err := s.Calls()
	var out []Call
	for _, c := range all {
		if c.Op == "set" {
			out = append(out, c)
		}
	}
	return out, err
}

// ResetCalls forgets the recorded calls.
func (s *IPMISim) ResetCalls() error {
	return os.WriteFile(filepath.Join(s.dir, "state", "calls"), nil, 0o644)
}

// SetPowerOn changes the recorded power state, like someone pressing the
// power button.
func (s *IPMISim) SetPowerOn(on bool) error {
	v := "0\n"
	if on {
		v = "1\n"
	}
	return os.WriteFile(filepath.Join(s.dir, "state", "power"), []byte(v), 0o644)
}

// Log returns ipmi_sim's output.
func (s *IPMISim) Log() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "ipmi_sim.log"))
	return string(b)
}

func (s *IPMISim) stop() error {
	if s.cmd == nil || s.cmd.Process == nil {
		return nil
	}
	select {
	case <-s.done:
		return nil
	default:
	}
	_ = s.cmd.Process.Kill() // by PID; ipmi_sim has no graceful shutdown worth waiting for
	select {
	case <-s.done:
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("ipmi_sim (pid %d) did not exit", s.cmd.Process.Pid)
	}
}

// Close kills ipmi_sim (by PID) and removes a temporary directory.
func (s *IPMISim) Close() error {
	var err error
	s.once.Do(func() {
		err = s.stop()
		if s.tempDir {
			if rerr := os.RemoveAll(s.dir); err == nil {
				err = rerr
			}
		}
	})
	return err
}
