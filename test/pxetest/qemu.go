package pxetest

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"golang.org/x/net/icmp"
	"golang.org/x/net/ipv6"

	"anvil.dev/anvil/test/qemuaccel"
)

// Firmware selects how the VM network boots.
type Firmware string

const (
	// BIOS: SeaBIOS runs QEMU's iPXE option ROM (package ipxe-qemu), which
	// does DHCP itself and chains the HTTP script; no TFTP involved.
	BIOS Firmware = "bios"
	// UEFI: OVMF's own PXE client (the NIC's option ROM is disabled), so
	// DHCP with arch 7, TFTP of the iPXE EFI binary, then iPXE and HTTP.
	UEFI Firmware = "uefi"
	// UEFIHTTP: OVMF's own UEFI HTTP boot client (NetworkPkg/HttpBootDxe):
	// DHCP with vendor class HTTPClient and arch 16, the iPXE EFI binary
	// by HTTP from the offer's URL, then iPXE and HTTP. OVMF's PXE is
	// switched off through fw_cfg, so the NIC's "UEFI HTTPv4" entry is
	// the first boot option.
	UEFIHTTP Firmware = "uefi-http"
	// UEFIPXE6: OVMF's own PXE client over IPv6 (PXEv6: DHCPv6 with arch
	// 7, TFTP from the tftp://[addr]/file URL of option 59). Its PXEv4
	// is switched off through fw_cfg, so the NIC's "UEFI PXEv6" entry is
	// the first boot option instead of waiting out PXEv4 first.
	UEFIPXE6 Firmware = "uefi-pxe6"
)

// QEMUOptions describes one network-booting VM.
type QEMUOptions struct {
	Firmware Firmware
	Tap      string           // tap device (already created, in the VM's namespace)
	MAC      net.HardwareAddr // boot NIC
	NIC      string           // QEMU device model, default virtio-net-pci
	MemoryMB int              // default 512
	// SerialLog receives the serial console.
	SerialLog string
	// OVMFCode and OVMFVarsTemplate, default Debian's 4M builds; the vars
	// file is copied next to SerialLog.
	OVMFCode, OVMFVarsTemplate string
	// CDROM, if set, is an ISO in a SATA CD drive (q35's AHCI; UEFI only)
	// that boots before the NIC, as a BMC's virtual CD would.
	CDROM string
}

// QEMUArgs returns the qemu-system-x86_64 arguments (KVM where a probe
// guest showed it works, else TCG: test/qemuaccel).
func QEMUArgs(o QEMUOptions) ([]string, error) {
	if o.NIC == "" {
		o.NIC = "virtio-net-pci"
	}
	if o.MemoryMB == 0 {
		o.MemoryMB = 512
	}
	args := []string{
		"-nodefaults", "-display", "none", "-monitor", "none",
		"-m", strconv.Itoa(o.MemoryMB), "-smp", "1",
		"-serial", "file:" + o.SerialLog,
		"-netdev", "tap,id=n0,ifname=" + o.Tap + ",script=no,downscript=no",
	}
	args = append(args, "-accel", qemuaccel.Choose().Accel)
	dev := fmt.Sprintf("%s,netdev=n0,mac=%s,bootindex=1", o.NIC, o.MAC)
	switch o.Firmware {
	case BIOS:
		args = append(args, "-machine", "pc", "-device", dev)
	case UEFI, UEFIHTTP, UEFIPXE6:
		if o.OVMFCode == "" {
			o.OVMFCode = "/usr/share/OVMF/OVMF_CODE_4M.fd"
		}
		if o.OVMFVarsTemplate == "" {
			o.OVMFVarsTemplate = "/usr/share/OVMF/OVMF_VARS_4M.fd"
		}
		vars := o.SerialLog + ".vars.fd"
		data, err := os.ReadFile(o.OVMFVarsTemplate)
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(vars, data, 0o644); err != nil {
			return nil, err
		}
		args = append(args, "-machine", "q35",
			"-drive", "if=pflash,format=raw,unit=0,readonly=on,file="+o.OVMFCode,
			"-drive", "if=pflash,format=raw,unit=1,file="+filepath.Clean(vars),
			// romfile= disables the iPXE ROM: OVMF's own driver and PXE run.
			"-device", dev+",romfile=")
		if o.CDROM != "" {
			args = append(args, "-drive", "if=none,id=cd0,media=cdrom,readonly=on,format=raw,file="+filepath.Clean(o.CDROM),
				"-device", "ide-cd,drive=cd0,bus=ide.0,bootindex=0")
		}
		if o.Firmware == UEFIHTTP {
			// OvmfPkg's runtime knobs (OvmfPkg/RUNTIME_CONFIG.md, edk2
			// 2022.11 has them): no PXEv4/PXEv6 boot options, so the
			// boot manager starts with HTTPv4 instead of waiting out
			// PXE first.
			args = append(args,
				"-fw_cfg", "name=opt/org.tianocore/IPv4PXESupport,string=n",
				"-fw_cfg", "name=opt/org.tianocore/IPv6PXESupport,string=n")
		}
		if o.Firmware == UEFIPXE6 {
			args = append(args, "-fw_cfg", "name=opt/org.tianocore/IPv4PXESupport,string=n")
		}
	default:
		return nil, fmt.Errorf("pxetest: unknown firmware %q", o.Firmware)
	}
	return args, nil
}

// RouterAdvertiser multicasts an IPv6 router advertisement (no prefixes, no
// M/O flags, lifetime 0) every second, which ends iPXE's IPv6
// autoconfiguration at once instead of after its ~15 s timeout.
type RouterAdvertiser struct {
	conn *ipv6.PacketConn
	ifi  *net.Interface
	c    net.PacketConn
	// Managed, set before Run, advertises for an IPv6-only segment with
	// DHCPv6: the M flag (addresses by DHCPv6, which firmware PXEv6 and
	// iPXE need to start it), a router lifetime (EDK2's PXE waits 10 s for
	// a default route otherwise) and Managed itself as an on-link prefix
	// without SLAAC.
	Managed netip.Prefix
}

// NewRouterAdvertiser opens the ICMPv6 socket on iface; call it in the
// namespace that owns iface.
func NewRouterAdvertiser(iface string) (*RouterAdvertiser, error) {
	ifi, err := net.InterfaceByName(iface)
	if err != nil {
		return nil, err
	}
	c, err := net.ListenPacket("ip6:ipv6-icmp", "::")
	if err != nil {
		return nil, err
	}
	p := ipv6.NewPacketConn(c)
	if err := p.SetMulticastHopLimit(255); err != nil {
		c.Close()
		return nil, err
	}
	if err := p.SetMulticastInterface(ifi); err != nil {
		c.Close()
		return nil, err
	}
	return &RouterAdvertiser{conn: p, ifi: ifi, c: c}, nil
}

// Run sends advertisements until ctx is done, then closes the socket.
func (r *RouterAdvertiser) Run(ctx context.Context) {
	defer r.c.Close()
	// cur hop limit 64, flags 0, router lifetime 0, reachable 0, retrans 0
	data := []byte{64, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	if p := r.Managed; p.IsValid() {
		data[1] = 0x80                           // M
		data[2], data[3] = 0x07, 0x08            // router lifetime 1800 s
		pi := []byte{3, 4, byte(p.Bits()), 0x80, // prefix information, L (on-link), no A
			0, 0, 0x0e, 0x10, 0, 0, 0x0e, 0x10, 0, 0, 0, 0} // valid and preferred 3600 s, reserved
		a := p.Masked().Addr().As16()
		data = append(append(data, pi...), a[:]...)
	}
	msg := icmp.Message{Type: ipv6.ICMPTypeRouterAdvertisement, Body: &icmp.RawBody{Data: data}}
	b, err := msg.Marshal(nil) // the kernel fills in the checksum
	if err != nil {
		return
	}
	dst := &net.IPAddr{IP: net.ParseIP("ff02::1"), Zone: r.ifi.Name}
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		_, _ = r.conn.WriteTo(b, nil, dst)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
