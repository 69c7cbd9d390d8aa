// Package lab runs Anvil's end-to-end lab: QEMU VMs (TCG is enough) that play
// bare-metal hosts, each behind an emulated BMC whose power control really
// starts and stops the VM.
//
// The lab lives in its own network namespace (default "anvil-lab") with a
// bridge (the hosts' L2 segment, first address of Options.Subnet) and one tap
// per VM. Anvil's network services (DHCP, TFTP, HTTP boot) run inside the
// namespace, bound to the bridge: start them with RunInNetns or open
// listeners with Do. Anvil's controllers stay in the host namespace and reach
// the BMCs on 127.0.0.1: ipmi_sim (OpenIPMI) for "ipmi" hosts and
// test/redfishsim for "redfish" hosts. The VMs reach the kube-apiserver
// through a forwarder that listens on <bridge IP>:6443 inside the namespace.
//
// Power goes through one generated script, <Dir>/power (see power.go): the
// BMCs' hooks call it, and so can a person (`<Dir>/power status vm-1`). A
// powered-on VM is a daemonized qemu-system-x86_64 in the namespace with its
// serial console in SerialLog and its firmware log (SeaBIOS) next to it. VMs
// network boot first when the one-time boot device is PXE (or when they
// have no disk), else they try their disk and fall back to the network, as
// a server with an empty disk does. A VirtualMedia VM boots its virtual CD
// first when the one-time boot device is Cd (media.go).
//
// The BMCs report the VM's real state: a power action through a BMC starts
// or kills the VM, and a VM that stops by itself (the guest powers off,
// qemu crashes or does not start) is noticed within a second and its BMC
// then reports Off. A graceful shutdown request is a hard power-off here.
// Powering a VM with the script directly bypasses the BMC (which then
// disagrees until the next BMC action).
//
// Inside the namespace, 127.0.0.1 is the namespace's own loopback: a process
// started with RunInNetns reaches the kube-apiserver at APIServerURL too.
//
// Everything the lab starts is recorded in Dir (pid files), so Start cleans
// up a lab whose process was killed, and Close kills by PID.
//
// Needs root, ip (iproute2), flock (util-linux), bash, qemu-system-x86_64 with
// ipxe-qemu (BIOS) or ovmf (UEFI), and ipmi_sim (openipmi) for IPMI hosts.
package lab

import (
	"context"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/go-logr/logr"

	"anvil.dev/anvil/bmc"
	"anvil.dev/anvil/test/bmctest"
	"anvil.dev/anvil/test/pxetest"
	"anvil.dev/anvil/test/redfishsim"
	"anvil.dev/anvil/test/tcprelay"
)

// Defaults.
const (
	DefaultName      = "anvil-lab"
	DefaultMemoryMiB = 1024
	// APIServerPort is where the forwarder listens on the bridge.
	APIServerPort = 6443
	// BridgeName is the bridge inside the namespace (Interface()).
	BridgeName = "labbr0"
)

// DefaultSubnet is the hosts' segment unless Options.Subnet says otherwise.
var DefaultSubnet = netip.MustParsePrefix("10.211.0.0/24")

// BMC kinds. A Manual host has no BMC: a person (or a test playing one)
// powers it with Power, as the ticket asks.
const (
	IPMI    = "ipmi"
	Redfish = "redfish"
	Manual  = "manual"
)

// Options configure a lab.
type Options struct {
	// Dir holds the lab's state: the power script, pid files, serial and
	// firmware logs, BMC configs, BMC passwords (0600) and disk images. It is
	// kept between runs (disks and passwords survive a restart). Required.
	Dir string
	// Name of the network namespace; default DefaultName. Start refuses to
	// use an existing namespace that an earlier lab with this Dir did not
	// create.
	Name string
	// Subnet of the hosts' segment; default DefaultSubnet. The bridge gets
	// its first address.
	Subnet netip.Prefix
	// Subnet6, if set, makes the segment IPv6 for the hosts: the bridge
	// gets its first address too, the router advertisements say
	// "addresses by DHCPv6" (M flag) with Subnet6 on-link and a default
	// route, the forwarder also listens on [<bridge IPv6>]:6443
	// (APIServerURL6), and UEFI VMs network-boot over IPv6 only (OVMF's
	// PXEv4 off). A /64 unique local prefix, e.g. fd00:a11::/64.
	Subnet6 netip.Prefix
	// Hosts are the VMs, at least one.
	Hosts []HostOptions
	// APIServer is the kube-apiserver in the host namespace, e.g.
	// "127.0.0.1:6443"; the VMs reach it at APIServerURL(). Empty: no
	// forwarder.
	APIServer string
	// BootCA is a PEM CA certificate that the lab's BMCs (downloading
	// virtual media) and HTTPClient trust besides the system's roots: the
	// boot server's, when it serves HTTPS.
	BootCA []byte
	// RedfishMockup is a DMTF mockup directory that the Redfish BMCs serve;
	// empty serves the embedded public-rackmount1.
	RedfishMockup string
	// QEMU is the emulator binary; default "qemu-system-x86_64".
	QEMU string
	// Logger gets lab events (power, VMs that stopped by themselves). It
	// never sees BMC passwords.
	Logger logr.Logger
}

// HostOptions describe one VM.
type HostOptions struct {
	// Name, a DNS label (also the Host name in the CSV).
	Name string
	// BMC is IPMI (default), Redfish or Manual.
	BMC string
	// BMCPort on 127.0.0.1 (UDP for IPMI, TCP for Redfish); 0 picks a free
	// port. Fixed ports keep Host objects valid across restarts.
	BMCPort int
	// MAC of the boot NIC; default derived from the subnet and the index.
	MAC net.HardwareAddr
	// Firmware is pxetest.BIOS (default: SeaBIOS + QEMU's iPXE ROM) or
	// pxetest.UEFI (OVMF's own PXE client, then TFTP).
	Firmware pxetest.Firmware
	// MemoryMiB of the VM; default DefaultMemoryMiB (a kubelet needs room).
	MemoryMiB int
	// DiskMiB is the size of a blank disk (raw, sparse, kept in Dir); 0 means
	// diskless.
	DiskMiB int
	// VirtualMedia gives the VM an empty SATA CD drive that its Redfish
	// BMC's virtual media fills (media.go) and a one-time Cd boot boots
	// first. Needs BMC Redfish and Firmware UEFI (q35's AHCI; Anvil's ISO
	// boots by UEFI only).
	VirtualMedia bool
}

// Host is a VM as Anvil sees it: what goes into a Host object.
type Host struct {
	Name string
	MAC  net.HardwareAddr
	// BMC is IPMI, Redfish or Manual; BMCAddress the driver URL
	// (ipmi://127.0.0.1:port,
	// redfish+https://127.0.0.1:port/redfish/v1/Systems/<id> or
	// manual://<name>).
	BMC, BMCAddress string
	// Credentials of the BMC; printing them hides the password.
	Credentials bmc.Credentials
	// CertPEM is the Redfish BMC's self-signed certificate (nil for IPMI).
	CertPEM []byte
	// Rack and FailureDomain spread the hosts over two racks/domains.
	Rack, FailureDomain string
	// BootMode is "Legacy" (BIOS) or "UEFI".
	BootMode string
}

// Lab is a running lab.
type Lab struct {
	o       Options
	log     logr.Logger
	bridge  netip.Prefix
	bridge6 netip.Prefix // invalid without Options.Subnet6
	ns      *netns
	hosts   []*vm
	lockF   *os.File
	runCtx  context.Context // ends with Close
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	fwd     *tcprelay.Relay
	fwd6    *tcprelay.Relay
	closeMu sync.Mutex
	closed  bool
	media   mediaLog
}

// vm is a host and its BMC.
type vm struct {
	HostOptions
	index  int
	dir    string
	tap    string
	host   Host
	ipmi   *bmctest.IPMISim
	rf     *redfishsim.Server
	rfID   string
	events chan redfishsim.PowerEvent // Redfish power events, in order
	ipv6   bool                       // the segment is IPv6 (Options.Subnet6)
}

var (
	nameRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	nsRE   = regexp.MustCompile(`^[A-Za-z0-9][-A-Za-z0-9_.]{0,62}$`)
)

func (o *Options) defaults() error {
	if o.Dir == "" {
		return errors.New("lab: Options.Dir is required (where pid files, logs and BMC state live)")
	}
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return err
	}
	o.Dir = dir
	if o.Name == "" {
		o.Name = DefaultName
	}
	if !nsRE.MatchString(o.Name) {
		return fmt.Errorf("lab: namespace name %q: use letters, digits, '-', '_' and '.'", o.Name)
	}
	if !o.Subnet.IsValid() {
		o.Subnet = DefaultSubnet
	}
	o.Subnet = o.Subnet.Masked()
	if !o.Subnet.Addr().Is4() || o.Subnet.Bits() > 28 || o.Subnet.Bits() < 8 {
		return fmt.Errorf("lab: subnet %s: need an IPv4 prefix between /8 and /28", o.Subnet)
	}
	if len(o.BootCA) > 0 && !x509.NewCertPool().AppendCertsFromPEM(o.BootCA) {
		return errors.New("lab: Options.BootCA holds no PEM certificate")
	}
	if o.Subnet6.IsValid() {
		o.Subnet6 = o.Subnet6.Masked()
		if !o.Subnet6.Addr().Is6() || o.Subnet6.Addr().Is4In6() || o.Subnet6.Bits() != 64 {
			return fmt.Errorf("lab: Options.Subnet6 %s: need an IPv6 /64 (router advertisements announce it)", o.Subnet6)
		}
	}
	if o.QEMU == "" {
		o.QEMU = "qemu-system-x86_64"
	}
	if len(o.Hosts) == 0 {
		return errors.New("lab: Options.Hosts is empty")
	}
	if len(o.Hosts) > 200 {
		return errors.New("lab: at most 200 hosts")
	}
	names, macs := map[string]bool{}, map[string]bool{}
	for i := range o.Hosts {
		h := &o.Hosts[i]
		if len(h.Name) > 40 || !nameRE.MatchString(h.Name) {
			return fmt.Errorf("lab: host %d: name %q must be a DNS label of at most 40 characters", i, h.Name)
		}
		if names[h.Name] {
			return fmt.Errorf("lab: host name %q used twice", h.Name)
		}
		names[h.Name] = true
		switch h.BMC {
		case "":
			h.BMC = IPMI
		case IPMI, Manual, Redfish:
		default:
			return fmt.Errorf("lab: host %s: BMC %q, want %q, %q or %q", h.Name, h.BMC, IPMI, Redfish, Manual)
		}
		if h.MAC == nil {
			a := o.Subnet.Addr().As4()
			h.MAC = net.HardwareAddr{0x52, 0x54, 0x00, a[1], a[2], byte(0x10 + i)}
		}
		if len(h.MAC) != 6 || h.MAC[0]&1 != 0 {
			return fmt.Errorf("lab: host %s: MAC %s is not a unicast Ethernet address", h.Name, h.MAC)
		}
		if macs[h.MAC.String()] {
			return fmt.Errorf("lab: host %s: MAC %s used twice", h.Name, h.MAC)
		}
		macs[h.MAC.String()] = true
		switch h.Firmware {
		case "":
			h.Firmware = pxetest.BIOS
		case pxetest.BIOS, pxetest.UEFI:
		default:
			return fmt.Errorf("lab: host %s: firmware %q, want %q or %q", h.Name, h.Firmware, pxetest.BIOS, pxetest.UEFI)
		}
		if h.MemoryMiB == 0 {
			h.MemoryMiB = DefaultMemoryMiB
		}
		if o.Subnet6.IsValid() && h.Firmware != pxetest.UEFI {
			// SeaBIOS's iPXE ROM (Debian's ipxe-qemu) has no IPv6.
			return fmt.Errorf("lab: host %s: an IPv6 segment (Options.Subnet6) needs firmware %q", h.Name, pxetest.UEFI)
		}
		if h.VirtualMedia && (h.BMC != Redfish || h.Firmware != pxetest.UEFI) {
			return fmt.Errorf("lab: host %s: VirtualMedia needs BMC %q and firmware %q", h.Name, Redfish, pxetest.UEFI)
		}
		if h.MemoryMiB < 128 || h.DiskMiB < 0 || h.BMCPort < 0 || h.BMCPort > 65535 {
			return fmt.Errorf("lab: host %s: memory (>= 128 MiB), disk (>= 0) or BMC port out of range", h.Name)
		}
	}
	return nil
}

// Start builds the namespace, bridge and taps, writes the power script,
// starts the BMCs (every VM off), the IPv6 router advertiser and the
// API server forwarder. It first cleans up what a killed earlier lab with
// the same Dir left behind. Close undoes everything.
func Start(ctx context.Context, o Options) (_ *Lab, err error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	if o.Logger.GetSink() == nil {
		o.Logger = logr.FromContextOrDiscard(ctx)
	}
	for _, c := range []string{"ip", "flock", "bash", o.QEMU} {
		if _, err := exec.LookPath(c); err != nil {
			return nil, fmt.Errorf("lab: %s not found (Debian packages iproute2, util-linux, bash, qemu-system-x86): %w", c, err)
		}
	}
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return nil, err
	}
	l := &Lab{o: o, log: o.Logger, bridge: netip.PrefixFrom(o.Subnet.Addr().Next(), o.Subnet.Bits())}
	if o.Subnet6.IsValid() {
		l.bridge6 = netip.PrefixFrom(o.Subnet6.Masked().Addr().Next(), o.Subnet6.Bits())
	}
	l.runCtx, l.cancel = context.WithCancel(context.Background())
	// One lab per Dir at a time; the kernel drops the lock if we are killed.
	if l.lockF, err = lockFile(filepath.Join(o.Dir, "lab.lock"), false); err != nil {
		return nil, fmt.Errorf("lab: %s is in use by another running lab (%v); stop it or use another Dir", o.Dir, err)
	}
	defer func() {
		if err != nil {
			_ = l.Close()
		}
	}()
	for i, h := range o.Hosts {
		v := &vm{HostOptions: h, index: i, dir: filepath.Join(o.Dir, "hosts", h.Name), tap: "tap" + strconv.Itoa(i), ipv6: o.Subnet6.IsValid()}
		if sock := filepath.Join(v.dir, qmpSocket); h.VirtualMedia && len(sock) > 107 {
			return nil, fmt.Errorf("lab: host %s: the QMP socket %s is longer than a unix socket path may be: use a shorter Options.Dir", h.Name, sock)
		}
		if err := os.MkdirAll(v.dir, 0o700); err != nil {
			return nil, err
		}
		l.hosts = append(l.hosts, v)
	}
	l.cleanStale()
	if l.ns, err = createNetns(ctx, o.Name, o.Dir, l.bridge, l.bridge6, len(l.hosts), l.log); err != nil {
		return nil, err
	}
	if err := l.prepareHosts(); err != nil {
		return nil, err
	}
	if err := writePowerScript(l); err != nil {
		return nil, err
	}
	if err := os.Remove(filepath.Join(o.Dir, "stopped")); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	var ra *pxetest.RouterAdvertiser
	if err := l.ns.Do(func() (err error) { ra, err = pxetest.NewRouterAdvertiser(BridgeName); return err }); err != nil {
		return nil, fmt.Errorf("lab: IPv6 router advertiser: %w", err)
	}
	ra.Managed = o.Subnet6
	l.wg.Go(func() { ra.Run(l.runCtx) })
	if o.APIServer != "" {
		addr := netip.AddrPortFrom(l.bridge.Addr(), APIServerPort).String()
		if l.fwd, err = newForwarder(l.ns, "tcp4", addr, o.APIServer, l.log.WithName("forwarder")); err != nil {
			return nil, err
		}
		if l.bridge6.IsValid() {
			addr6 := netip.AddrPortFrom(l.bridge6.Addr(), APIServerPort).String()
			if l.fwd6, err = newForwarder(l.ns, "tcp6", addr6, o.APIServer, l.log.WithName("forwarder6")); err != nil {
				return nil, err
			}
		}
	}
	for _, v := range l.hosts {
		if err := l.startBMC(v); err != nil {
			return nil, err
		}
	}
	l.wg.Go(func() { l.watch(l.runCtx) })
	l.log.Info("lab up", "namespace", o.Name, "bridge", BridgeName, "address", l.bridge, "hosts", len(l.hosts), "powerScript", l.PowerScript())
	return l, nil
}

// prepareHosts creates blank disks, OVMF variable stores and BMC passwords
// that an earlier run did not leave.
func (l *Lab) prepareHosts() error {
	for _, v := range l.hosts {
		pw, err := readOrCreateSecret(filepath.Join(v.dir, "bmc-password"))
		if err != nil {
			return err
		}
		v.host = Host{Name: v.Name, MAC: v.MAC, BMC: v.BMC, Credentials: bmc.Credentials{Username: "admin", Password: pw},
			Rack: fmt.Sprintf("lab-r%d", v.index%2+1), FailureDomain: fmt.Sprintf("fd-%c", 'a'+v.index%2), BootMode: "Legacy"}
		if v.BMC == Manual {
			v.host.Credentials = bmc.Credentials{}
		}
		if v.Firmware == pxetest.UEFI {
			v.host.BootMode = "UEFI"
			if err := copyIfMissing("/usr/share/OVMF/OVMF_VARS_4M.fd", filepath.Join(v.dir, "OVMF_VARS.fd")); err != nil {
				return fmt.Errorf("lab: host %s: OVMF variables (Debian package ovmf): %w", v.Name, err)
			}
		}
		if v.DiskMiB > 0 {
			p := filepath.Join(v.dir, "disk.raw")
			if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
				f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY, 0o600)
				if err != nil {
					return err
				}
				err = f.Truncate(int64(v.DiskMiB) << 20) // sparse: blank and free
				if cerr := f.Close(); err == nil {
					err = cerr
				}
				if err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// readOrCreateSecret returns a 16-character password kept in p (0600), so
// Host Secrets stay valid across restarts. 16 bytes is ipmi_sim's maximum.
func readOrCreateSecret(p string) (string, error) {
	if b, err := os.ReadFile(p); err == nil && len(b) == 16 {
		return string(b), nil
	}
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	pw := hex.EncodeToString(b)
	return pw, os.WriteFile(p, []byte(pw), 0o600)
}

func copyIfMissing(src, dst string) error {
	if _, err := os.Stat(dst); err == nil {
		return nil
	}
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, data, 0o600)
}

// Close stops the BMCs, kills the VMs (by PID), stops the forwarder and
// removes the taps, the bridge and the namespace. It is idempotent.
func (l *Lab) Close() error {
	l.closeMu.Lock()
	defer l.closeMu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	if l.cancel != nil {
		l.cancel()
	}
	var errs []error
	for _, v := range l.hosts {
		if v.rf != nil {
			errs = append(errs, v.rf.Close())
		}
		if v.ipmi != nil {
			errs = append(errs, v.ipmi.Close())
			_ = os.Remove(filepath.Join(v.dir, "ipmi_sim.pid"))
		}
	}
	l.wg.Wait() // the watcher and the Redfish power workers are done
	// Power scripts that ipmi_sim started before it died may still run:
	// stop further power-ons, wait for each host's lock, then kill.
	_ = os.WriteFile(filepath.Join(l.o.Dir, "stopped"), nil, 0o644)
	for _, v := range l.hosts {
		if f := waitLock(filepath.Join(v.dir, "lock"), time.Minute); f != nil {
			defer f.Close()
		}
		if err := killRecorded(filepath.Join(v.dir, "qemu.pid"), v.isQEMU); err != nil {
			errs = append(errs, fmt.Errorf("lab: host %s: %w", v.Name, err))
		}
		_ = os.WriteFile(filepath.Join(v.dir, "power"), []byte("off\n"), 0o644)
	}
	if l.fwd != nil {
		l.fwd.Close()
	}
	if l.fwd6 != nil {
		l.fwd6.Close()
	}
	if l.ns != nil {
		errs = append(errs, l.ns.destroy(len(l.hosts)))
	}
	if l.lockF != nil {
		_ = l.lockF.Close()
	}
	l.log.Info("lab stopped", "namespace", l.o.Name)
	return errors.Join(errs...)
}

// Namespace is the network namespace's name (for `ip netns exec`).
func (l *Lab) Namespace() string { return l.o.Name }

// Interface is the bridge inside the namespace, where Anvil's DHCP, TFTP and
// HTTP services bind (`anvil serve --interface`).
func (l *Lab) Interface() string { return BridgeName }

// BridgeIP is the bridge's address: the services' address and the hosts'
// gateway.
func (l *Lab) BridgeIP() netip.Addr { return l.bridge.Addr() }

// Subnet is the hosts' segment.
func (l *Lab) Subnet() netip.Prefix { return l.o.Subnet }

// APIServerURL is where the VMs reach the kube-apiserver (its serving
// certificate must cover BridgeIP: controlplane.Options.ExtraSANs).
func (l *Lab) APIServerURL() string {
	return "https://" + netip.AddrPortFrom(l.bridge.Addr(), APIServerPort).String()
}

// BridgeIP6 is the bridge's IPv6 address (Options.Subnet6; invalid
// without): the services' address and the hosts' router on IPv6.
func (l *Lab) BridgeIP6() netip.Addr { return l.bridge6.Addr() }

// Subnet6 is the hosts' IPv6 segment (invalid without Options.Subnet6).
func (l *Lab) Subnet6() netip.Prefix { return l.o.Subnet6 }

// APIServerURL6 is where IPv6 hosts reach the kube-apiserver ("" without
// Options.Subnet6; its certificate must cover BridgeIP6).
func (l *Lab) APIServerURL6() string {
	if !l.bridge6.IsValid() {
		return ""
	}
	return "https://" + netip.AddrPortFrom(l.bridge6.Addr(), APIServerPort).String()
}

// PowerScript is the path of the generated power script.
func (l *Lab) PowerScript() string { return filepath.Join(l.o.Dir, "power") }

// Hosts returns the VMs in Options order.
func (l *Lab) Hosts() []Host {
	out := make([]Host, len(l.hosts))
	for i, v := range l.hosts {
		out[i] = v.host
	}
	return out
}

func (l *Lab) vm(name string) *vm {
	for _, v := range l.hosts {
		if v.Name == name {
			return v
		}
	}
	return nil
}

// Running reports whether the VM's qemu process is alive.
func (l *Lab) Running(name string) bool {
	v := l.vm(name)
	return v != nil && v.running()
}

// PID of the VM's qemu process, 0 when it is not running.
func (l *Lab) PID(name string) int {
	if v := l.vm(name); v != nil {
		return recordedPID(filepath.Join(v.dir, "qemu.pid"), v.isQEMU)
	}
	return 0
}

// SerialLog is the path of the VM's serial console log (appended to on every
// power-on, with a marker line per boot).
func (l *Lab) SerialLog(name string) string {
	return filepath.Join(l.o.Dir, "hosts", name, "serial.log")
}

// DiskPath is the path of the VM's raw disk (a file on this machine, read
// it to check what an install or a wipe left there).
func (l *Lab) DiskPath(name string) string {
	return filepath.Join(l.o.Dir, "hosts", name, "disk.raw")
}

// FirmwareLog is the path of SeaBIOS's debug log (which boot devices it
// tried); OVMF release builds write nothing there.
func (l *Lab) FirmwareLog(name string) string {
	return filepath.Join(l.o.Dir, "hosts", name, "firmware.log")
}

// Do runs fn on an OS thread inside the namespace; sockets fn opens stay
// there (use it to open listeners on the bridge).
func (l *Lab) Do(fn func() error) error { return l.ns.Do(fn) }

// Go runs fn on a goroutine whose thread stays in the namespace until fn
// returns, for servers that open sockets later (pxe/tftp opens one per
// transfer). It returns once the thread is in the namespace.
func (l *Lab) Go(fn func()) error { return l.ns.Go(fn) }

// RunInNetns returns a command that runs name inside the namespace (through
// `ip netns exec`, which execs it, so cmd.Process is the program). The
// program gets SIGTERM when ctx ends and when this process dies (Pdeathsig:
// call Start from an ordinary goroutine, not one locked to a thread that
// exits).
func (l *Lab) RunInNetns(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", l.o.Name, name}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	return cmd
}
