package lab

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"anvil.dev/anvil/test/pxetest"
	"anvil.dev/anvil/test/qemuaccel"
)

// Boot modes of a power-on.
const (
	// BootPXE puts the NIC first: the one-time PXE boot Anvil asks for.
	BootPXE = "pxe"
	// BootNormal puts the disk first with the NIC as fallback, the boot
	// order of a server with no override. A diskless VM network boots.
	BootNormal = "disk"
	// BootCD puts a VirtualMedia VM's CD first (the one-time Cd boot of a
	// virtual media boot), then the NIC and the disk; other VMs boot as
	// with BootNormal.
	BootCD = "cd"
	// BootHTTP puts the NIC first with OVMF's PXEv4 off, so the NIC's only
	// IPv4 boot entry is "UEFI HTTPv4": what a BMC's one-time UefiHttp
	// override makes real firmware do. A BIOS VM (no HTTP boot) boots as
	// with BootPXE.
	BootHTTP = "http"
)

// qemuArgs returns the qemu-system-x86_64 arguments for one boot of v,
// without -daemonize and -pidfile (the script adds them). The NIC is always
// bootable (bootindex), so iPXE's "exit" falls through to the disk and an
// empty disk falls back to the network.
func qemuArgs(v *vm, boot string) []string {
	nicIdx, diskIdx, cdIdx := 1, 2, 3
	switch {
	case boot == BootCD && v.VirtualMedia:
		cdIdx, nicIdx, diskIdx = 1, 2, 3
	case boot != BootPXE && boot != BootHTTP:
		nicIdx, diskIdx = 2, 1
	}
	accel := qemuaccel.Choose()
	args := []string{
		"-name", "anvil-lab-" + v.Name,
		"-nodefaults", "-display", "none", "-monitor", "none",
		"-accel", accel.Accel, "-cpu", accel.CPU, "-smp", "1", "-m", strconv.Itoa(v.MemoryMiB),
		"-chardev", "file,id=serial0,append=on,path=" + filepath.Join(v.dir, "serial.log"),
		"-serial", "chardev:serial0",
		"-netdev", "tap,id=n0,ifname=" + v.tap + ",script=no,downscript=no",
		// Guests (TLS, kubelet) need entropy early.
		"-device", "virtio-rng-pci",
	}
	nic := fmt.Sprintf("virtio-net-pci,netdev=n0,mac=%s,bootindex=%d", v.MAC, nicIdx)
	switch v.Firmware {
	case pxetest.UEFI:
		// No IPv6 network boot on an IPv4 segment: otherwise, after iPXE
		// exits to the firmware, OVMF tries PXE and HTTP over IPv6,
		// minutes of timeouts, before the disk. On an IPv6 segment
		// (Options.Subnet6) the reverse: PXEv4 off, so the NIC's only PXE
		// entry is "UEFI PXEv6".
		family := "name=opt/org.tianocore/IPv6Support,string=no"
		if v.ipv6 {
			family = "name=opt/org.tianocore/IPv4PXESupport,string=n"
		}
		args = append(args, "-machine", "q35",
			"-drive", "if=pflash,format=raw,unit=0,readonly=on,file=/usr/share/OVMF/OVMF_CODE_4M.fd",
			"-drive", "if=pflash,format=raw,unit=1,file="+filepath.Join(v.dir, "OVMF_VARS.fd"),
			"-fw_cfg", family,
			// romfile= disables the iPXE ROM: OVMF's own PXE client runs.
			"-device", nic+",romfile=")
		if boot == BootHTTP && !v.ipv6 { // on IPv6, family has PXEv4 off
			args = append(args, "-fw_cfg", "name=opt/org.tianocore/IPv4PXESupport,string=n")
		}
	default:
		args = append(args, "-machine", "pc",
			// SeaBIOS's debug port: which devices it tried, in order.
			"-chardev", "file,id=fw0,append=on,path="+filepath.Join(v.dir, "firmware.log"),
			"-device", "isa-debugcon,iobase=0x402,chardev=fw0",
			"-device", nic)
	}
	if v.DiskMiB > 0 {
		args = append(args, "-drive", "if=none,id=d0,format=raw,file="+filepath.Join(v.dir, "disk.raw"),
			"-device", fmt.Sprintf("virtio-blk-pci,drive=d0,bootindex=%d", diskIdx))
	}
	if v.VirtualMedia {
		// The drive itself (cdDrive, empty or with <dir>/media.iso) comes
		// from the power script, which knows at start whether a medium is in.
		args = append(args, "-device", fmt.Sprintf("ide-cd,drive=%s,id=%s,bus=ide.0,bootindex=%d", cdDrive, cdDevice, cdIdx),
			"-qmp", "unix:"+filepath.Join(v.dir, qmpSocket)+",server=on,wait=off")
	}
	// Only the devices with a bootindex; SeaBIOS retries them after 60 s.
	return append(args, "-boot", "strict=on")
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func quoteAll(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}

// powerScript is the one place that starts and stops VMs. Under a per-host
// flock it keeps <host dir>/power ("on" while a VM is meant to run), so the
// lab's watcher can tell a VM that stopped by itself from one that was
// powered off. Modes:
//
//	power on HOST [pxe|disk|cd|http]    start the VM (no-op when running)
//	power off HOST                kill it by PID (SIGTERM, then SIGKILL)
//	power reset HOST [pxe|disk|cd|http] off + on
//	power status HOST             print on or off
//	power ipmi HOST set PARAM V   ipmi_sim's chassis_control hook: make the
//	                              VM match ipmi_sim's recorded power state
//
// It is a bash script: closing inherited descriptors needs more than POSIX
// sh. The ipmi mode is level-triggered (it reads the state ipmi_sim answers
// from), because ipmi_sim runs hooks in the background and two of them may
// run in either order. The boot device ipmi_sim recorded is used and reset to
// "default" by the power-on it applies to (next boot only).
const powerScript = `#!/bin/bash
# Generated by anvil.dev/anvil/test/lab; rewritten on every lab start.
set -u
NS=%s
DIR=%s
QEMU=%s
usage() { echo "usage: $0 on|off|reset|status HOST [pxe|disk|cd|http] | ipmi HOST set PARAM VALUE" >&2; exit 2; }
[ $# -ge 2 ] || usage
mode=$1 host=$2
shift 2
case "$host" in
%s) ;;
*) echo "$0: unknown host $host" >&2; exit 2 ;;
esac
cddrive=""
case "$host" in
%s) cddrive=%s ;;
esac
d="$DIR/hosts/$host"
pidfile="$d/qemu.pid"

vm_pid() {
	pid=$(cat "$pidfile" 2>/dev/null) || return 1
	case "$pid" in ''|*[!0-9]*) return 1 ;; esac
	[ -r "/proc/$pid/cmdline" ] || return 1
	tr '\000' '\n' < "/proc/$pid/cmdline" | grep -qxF -- "$pidfile" || return 1
	echo "$pid"
}

start() {
	boot=$1
	vm_pid >/dev/null && return 0
	if [ -e "$DIR/stopped" ]; then echo "$0: the lab is stopped" >&2; return 1; fi
	rm -f "$pidfile"
	echo on > "$d/power"
	echo "=== anvil lab: power on $host, boot $boot, $(date -u +%%Y-%%m-%%dT%%H:%%M:%%SZ) ===" >> "$d/serial.log"
	case "$host/$boot" in
%s
	esac
	# A VirtualMedia VM's CD drive holds what its BMC inserted (media.go).
	if [ -n "$cddrive" ]; then
		if [ -s "$d/media.iso" ]; then
			f="$d/media.iso"
			set -- "$@" -drive "if=none,id=$cddrive,media=cdrom,readonly=on,format=raw,file=${f//,/,,}"
		else
			set -- "$@" -drive "if=none,id=$cddrive,media=cdrom"
		fi
	fi
	# The daemon must not keep the lock (fd 9) or the caller's pipes:
	# close every descriptor above 2 in the subshell that becomes qemu.
	(
		for fd in /proc/$BASHPID/fd/*; do
			fd=${fd##*/}
			[ "$fd" -gt 2 ] 2>/dev/null && eval "exec $fd>&-"
		done
		exec ip netns exec "$NS" "$QEMU" "$@" -daemonize -pidfile "$pidfile" </dev/null >>"$d/qemu.log" 2>&1
	) || { echo "$0: qemu for $host did not start; see $d/qemu.log" >&2; return 1; }
}

stop() {
	echo off > "$d/power"
	pid=$(vm_pid) || { rm -f "$pidfile"; return 0; }
	for sig in TERM KILL; do
		kill -s $sig "$pid" 2>/dev/null
		i=0
		while [ $i -lt 50 ] && vm_pid >/dev/null; do sleep 0.1; i=$((i+1)); done
		vm_pid >/dev/null || break
	done
	if vm_pid >/dev/null; then echo "$0: qemu $pid of $host did not exit" >&2; return 1; fi
	rm -f "$pidfile"
}

bootarg() {
	case "${1:-disk}" in
	pxe|disk|cd|http) echo "${1:-disk}" ;;
	*) usage ;;
	esac
}

lock() {
	exec 9>>"$d/lock"
	flock -w 60 9 || { echo "$0: $host is locked" >&2; exit 1; }
}

# ipmi_boot prints the boot mode ipmi_sim recorded and consumes it.
ipmi_boot() {
	st="$d/bmc/state"
	b=$(cat "$st/boot" 2>/dev/null || echo default)
	echo default > "$st/boot.tmp" && mv "$st/boot.tmp" "$st/boot"
	[ "$b" = pxe ] && echo pxe || echo disk
}

case "$mode" in
on) boot=$(bootarg "${1:-}") || exit 2; lock; start "$boot" ;;
off) lock; stop ;;
reset) boot=$(bootarg "${1:-}") || exit 2; lock; stop && start "$boot" ;;
status) if vm_pid >/dev/null; then echo on; else echo off; fi ;;
ipmi)
	[ "${1:-}" = set ] || exit 0
	case "${2:-}" in power|shutdown|reset) ;; *) exit 0 ;; esac
	lock
	want=$(cat "$d/bmc/state/power" 2>/dev/null || echo 0)
	if [ "$want" != 1 ]; then
		stop
	elif [ "$2" = reset ] && vm_pid >/dev/null; then
		stop && start "$(ipmi_boot)"
	elif ! vm_pid >/dev/null; then
		start "$(ipmi_boot)"
	fi
	;;
*) usage ;;
esac
`

// writePowerScript generates <Dir>/power for the configured hosts.
func writePowerScript(l *Lab) error {
	var names, cases []string
	cdHosts := []string{"''"} // matches no host name
	for _, v := range l.hosts {
		names = append(names, shellQuote(v.Name))
		if v.VirtualMedia {
			cdHosts = append(cdHosts, shellQuote(v.Name))
		}
		for _, boot := range []string{BootPXE, BootNormal, BootCD, BootHTTP} {
			cases = append(cases, fmt.Sprintf("\t%s) set -- %s ;;", shellQuote(v.Name+"/"+boot), quoteAll(qemuArgs(v, boot))))
		}
	}
	sort.Strings(names)
	body := fmt.Sprintf(powerScript, shellQuote(l.o.Name), shellQuote(l.o.Dir), shellQuote(l.o.QEMU),
		strings.Join(names, "|"), strings.Join(cdHosts, "|"), shellQuote(cdDrive), strings.Join(cases, "\n"))
	p := l.PowerScript()
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, []byte(body), 0o755); err != nil {
		return err
	}
	return os.Rename(tmp, p)
}

// Power does what a person at the rack does to a Manual host (any host,
// in fact): "on" or "reset" with boot BootPXE, BootNormal, BootCD or BootHTTP, or "off". It
// goes through the power script, like the BMCs.
func (l *Lab) Power(ctx context.Context, name, action, boot string) error {
	if l.vm(name) == nil {
		return fmt.Errorf("lab: no host %q", name)
	}
	args := []string{action, name}
	switch action {
	case "on", "reset":
		if boot != BootPXE && boot != BootNormal && boot != BootCD && boot != BootHTTP {
			return fmt.Errorf("lab: power %s %s: boot %q, want %q, %q, %q or %q", action, name, boot, BootPXE, BootNormal, BootCD, BootHTTP)
		}
		args = append(args, boot)
	case "off":
	default:
		return fmt.Errorf("lab: power %s: action %q, want on, off or reset", name, action)
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, l.PowerScript(), args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("lab: power %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
