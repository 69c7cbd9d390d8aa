package media

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// Net is the static network plan of the boot NIC (the Host's
// spec.network), which the ISO's script and the kernel's ip= argument
// set up so that neither iPXE nor the booted OS needs DHCP.
type Net struct {
	MAC      net.HardwareAddr
	Address  netip.Prefix // required, IPv4
	Gateway  netip.Addr   // optional
	DNS      []netip.Addr // optional, at most two reach the kernel
	Hostname string       // optional
}

func (n Net) check() error {
	switch {
	case len(n.MAC) != 6:
		return errors.New("media: the boot MAC must be a 6-byte Ethernet address")
	case !n.Address.IsValid() || !n.Address.Addr().Is4():
		return errors.New("media: the Host's spec.network.address must be an IPv4 CIDR")
	case n.Gateway.IsValid() && !n.Gateway.Is4():
		return errors.New("media: the Host's spec.network gateway must be IPv4")
	}
	for _, d := range n.DNS {
		if !d.Is4() {
			return errors.New("media: the Host's spec.network DNS servers must be IPv4")
		}
	}
	return nil
}

func netmask(p netip.Prefix) string {
	m := net.CIDRMask(p.Bits(), 32)
	return net.IP(m).String()
}

// KernelIPArg is the kernel's static ip= argument for n
// (Documentation/admin-guide/nfs/nfsroot.rst, which initramfs tools and
// dracut read too): client, no server, gateway, netmask, hostname, any
// device, no autoconfiguration, up to two DNS servers.
func KernelIPArg(n Net) string {
	gw := ""
	if n.Gateway.IsValid() {
		gw = n.Gateway.String()
	}
	host := n.Hostname
	if strings.ContainsAny(host, ": \t#") {
		host = "" // not representable; the OS names itself from its config
	}
	f := []string{n.Address.Addr().String(), "", gw, netmask(n.Address), host, "", "off"}
	for i, d := range n.DNS {
		if i == 2 {
			break
		}
		f = append(f, d.String())
	}
	return "ip=" + strings.Join(f, ":")
}

// Script renders an autoexec.ipxe that sets up n (see preamble) and then
// runs boot (see Rewrite) in place. The ISO Handler serves carries
// ChainScript instead, so that boot is rendered when iPXE runs, not when
// the BMC fetches the ISO.
func Script(n Net, base string, boot []byte) ([]byte, error) {
	pre, err := preamble(n)
	if err != nil {
		return nil, err
	}
	rest, err := Rewrite(n, base, boot)
	if err != nil {
		return nil, err
	}
	return append(pre, bytes.TrimPrefix(rest, []byte("#!ipxe\n"))...), nil
}

// ChainScript is the ISO's autoexec.ipxe: set up n, then chain url (the
// per-boot script, fetched from the static address).
func ChainScript(n Net, url string) ([]byte, error) {
	pre, err := preamble(n)
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix(url, "http://") && !strings.HasPrefix(url, "https://") || strings.ContainsAny(url, " \t\n#$") {
		return nil, errors.New("media: the chained URL must be http(s) without spaces, # or $")
	}
	return append(pre, "chain --replace --autofree "+url+"\n"...), nil
}

// preamble finds the NIC whose MAC is n.MAC and configures it with n's
// static address, gateway and DNS.
func preamble(n Net) ([]byte, error) {
	if err := n.check(); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	mac := n.MAC.String() // lower-case hex with colons, as iPXE shows ${netX/mac}
	// iPXE numbers NICs in probe order; look for the one with the MAC.
	fmt.Fprintf(&b, "#!ipxe\necho Anvil: virtual media boot of %s\nset idx:int32 0\n", mac)
	b.WriteString(":nic\n")
	b.WriteString("isset ${net${idx}/mac} || goto nonic\n")
	fmt.Fprintf(&b, "iseq ${net${idx}/mac} %s && goto found ||\n", mac)
	b.WriteString("inc idx\ngoto nic\n")
	fmt.Fprintf(&b, ":nonic\necho Anvil: no NIC with MAC %s (the Host's spec.bootMACs[0])\nexit 1\n", mac)
	b.WriteString(":found\n")
	fmt.Fprintf(&b, "set net${idx}/ip %s\nset net${idx}/netmask %s\n", n.Address.Addr(), netmask(n.Address))
	if n.Gateway.IsValid() {
		fmt.Fprintf(&b, "set net${idx}/gateway %s\n", n.Gateway)
	}
	if len(n.DNS) > 0 {
		fmt.Fprintf(&b, "set dns %s\n", n.DNS[0])
	}
	b.WriteString("ifopen net${idx} || goto nonic\n")
	fmt.Fprintf(&b, "echo Anvil: net${idx} is %s\n", n.Address)
	return b.Bytes(), nil
}

// Rewrite adapts a script made by httpboot (BootScript, ExitScript or
// UnknownHostScript) to a boot without DHCP: server-relative URLs made
// absolute against base and KernelIPArg on the kernel line, so the OS
// configures the NIC statically too. Every value was checked by httpboot.
func Rewrite(n Net, base string, boot []byte) ([]byte, error) {
	if err := n.check(); err != nil {
		return nil, err
	}
	if !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://") || strings.ContainsAny(base, " \t\n#$") {
		return nil, fmt.Errorf("media: base URL %q: want an http(s) URL without spaces, # or $", base)
	}
	base = strings.TrimSuffix(base, "/")
	ipArg := KernelIPArg(n)
	lines := strings.Split(strings.TrimRight(string(boot), "\n"), "\n")
	if len(lines) == 0 || lines[0] != "#!ipxe" {
		return nil, errors.New("media: the boot script does not start with #!ipxe")
	}
	var b bytes.Buffer
	b.WriteString("#!ipxe\n")
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "kernel":
			f[1] = absolute(base, f[1])
			// BOOTIF (pxelinux's, which dracut and the lab image read too)
			// names the NIC ip= is for, on a host with several.
			f = append(f, ipArg, "BOOTIF=01-"+strings.ReplaceAll(n.MAC.String(), ":", "-"))
		case "initrd", "chain":
			f[len(f)-1] = absolute(base, f[len(f)-1])
		}
		b.WriteString(strings.Join(f, " ") + "\n")
	}
	return b.Bytes(), nil
}

// BootFiles are the EFI system image's files for a boot script: the iPXE
// EFI build whose embedded script chains autoexec.ipxe, and the script.
func BootFiles(ipxeEFI, script []byte) []File {
	return []File{{Path: "/EFI/BOOT/BOOTX64.EFI", Data: ipxeEFI}, {Path: "/autoexec.ipxe", Data: script}}
}

func absolute(base, u string) string {
	if strings.HasPrefix(u, "/") {
		return base + u
	}
	return u
}
