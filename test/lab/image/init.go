package image

import (
	"strings"

	"anvil.dev/anvil/agent"
)

// Console markers. Every step of the init prints one line starting with
// MarkerPrefix on ttyS0; a failed step prints FailPrefix instead, so a test
// or a person reading the serial log sees where a boot stopped.
const (
	MarkerPrefix = "ANVIL-LAB: "
	FailPrefix   = "ANVIL-LAB-FAIL: "

	// MarkerNetworkUp: DHCP or a static ip= configured the NIC.
	MarkerNetworkUp = MarkerPrefix + "network up"
	// MarkerStaticNetwork: a static ip= kernel argument names the address;
	// no DHCP runs (the line goes on with the NIC and the address).
	MarkerStaticNetwork = MarkerPrefix + "static ip= on "
	// MarkerDHCP: no static ip=, udhcpc runs (the line names the NIC).
	MarkerDHCP = MarkerPrefix + "dhcp on "
	// MarkerDHCP6: ip=dhcp6 (Anvil's boot script for a host that
	// network-booted over IPv6): dhclient -6 runs, no DHCPv4.
	MarkerDHCP6 = MarkerPrefix + "dhcp6 on "
	// MarkerConfigApplied: Ignition's fetch and files stages succeeded.
	MarkerConfigApplied = MarkerPrefix + "ignition config applied"
	// MarkerStateSaved: the agent config was saved to the state disk.
	MarkerStateSaved = MarkerPrefix + "agent config saved to the state disk"
	// MarkerStateRestored: a boot without config found the agent config
	// of the last provisioning on the state disk (a wipe boot).
	MarkerStateRestored = MarkerPrefix + "wipe boot: agent config restored from the state disk"
	// MarkerNothingToDo: no config and no saved state.
	MarkerNothingToDo = MarkerPrefix + "no ignition.config.url and no saved state: nothing to run"
	// MarkerAgentStarted: anvil-agent runs (and supervises the kubelet).
	MarkerAgentStarted = MarkerPrefix + "anvil-agent started"
	// MarkerKubeletHealthy: the kubelet's healthz answered ok.
	MarkerKubeletHealthy = MarkerPrefix + "kubelet healthz ok"
	// MarkerKubeletJoined: the kubelet holds a client certificate (its
	// bootstrap CSR was approved and signed).
	MarkerKubeletJoined = MarkerPrefix + "kubelet has its client certificate"

	// An install boot (agent.InstallArg on the kernel command line) runs
	// `anvil-agent install` instead of Ignition and the kubelet.
	// MarkerInstallStarted: the installer runs.
	MarkerInstallStarted = MarkerPrefix + "install: anvil-agent install started"
	// MarkerInstallWritten: the image is written, verified and seeded, and
	// the result reported; the VM reboots next.
	MarkerInstallWritten = MarkerPrefix + "install: image written and seeded; rebooting"
	// MarkerInstallFailed: the installer failed (and reported it).
	MarkerInstallFailed = FailPrefix + "install: anvil-agent install failed"
)

// StateDisk is the disk the lab image treats as its own "installed
// system": a provisioning boot saves the agent config at its start, so a
// later boot without config (Anvil's wipe boot) can run the agent, which
// then wipes the disk, state included. The first virtio disk; a VM without
// one simply keeps no state.
const StateDisk = "/dev/vda"

// StateMagic starts the state disk's first block.
const StateMagic = "ANVIL-LAB-STATE1"

// stage1 copies the initramfs into a tmpfs and switches into it: the
// initramfs's rootfs is no mount the kubelet's cadvisor understands, a
// tmpfs is (it stats the filesystem under /var/lib/kubelet).
const stage1 = `#!/bin/sh
export PATH=/bin
mount -t devtmpfs devtmpfs /dev 2>/dev/null
exec </dev/console >/dev/console 2>&1
echo "ANVIL-LAB: stage 1: copying the initramfs into a tmpfs root"
mkdir -p /newroot
if ! mount -t tmpfs -o size=85%,mode=0755 tmpfs /newroot; then
	echo "ANVIL-LAB-FAIL: stage 1: cannot mount a tmpfs"; exec sh
fi
for f in /*; do
	case "$f" in /newroot|/dev|/proc|/sys) continue ;; esac
	cp -a "$f" /newroot/ || echo "ANVIL-LAB-FAIL: stage 1: copying $f"
done
mkdir -p /newroot/dev /newroot/proc /newroot/sys
umount -l /dev # our console stays open on it
exec switch_root /newroot /sbin/lab-init
`

// stage2 is PID 1 in the tmpfs root. @MODULES@ is replaced with the
// module load order.
const stage2 = `#!/bin/sh
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
set -f # no globbing: the config URL may hold ? and *
mark() { echo "ANVIL-LAB: $*"; }
fail() { echo "ANVIL-LAB-FAIL: $*"; }
idle() { mark "idle (PID 1 stays)"; while :; do sleep 3600; done; }
arg() { for a in $(cat /proc/cmdline); do case "$a" in "$1="*) echo "${a#*=}"; return ;; esac; done; }

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
exec </dev/console >/dev/console 2>&1
mkdir -p /dev/pts /dev/shm /run /sys/fs/cgroup /tmp /var/log
mount -t devpts devpts /dev/pts
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
mount -t tmpfs -o mode=0755 tmpfs /run
mount -t cgroup2 cgroup2 /sys/fs/cgroup || fail "mounting cgroup2 on /sys/fs/cgroup"
mark "stage 2: mounts done (kernel $(uname -r), $(grep MemTotal /proc/meminfo | tr -s ' '))"
tr -d '-' </proc/sys/kernel/random/uuid >/etc/machine-id

for m in @MODULES@; do insmod "/lib/modules/$m.ko" || fail "insmod $m"; done
mark "modules loaded"

# A static ip=<client>:<server>:<gw>:<netmask>:<hostname>:<device>:off
# [:<dns0>[:<dns1>]] (the kernel's nfsroot.rst; Anvil's virtual media boot
# passes one) configures the NIC without DHCP: the segment may have none.
# Its device, else the NIC with BOOTIF's MAC (pxelinux's 01-aa-bb-...),
# else the first NIC, as the kernel takes the first device.
ipcfg=$(arg ip)
bootif=$(arg BOOTIF)
` + ipArgShell + `pick_nic() {
	if [ -n "$sdev" ]; then [ -e "/sys/class/net/$sdev" ] && echo "$sdev"; return; fi
	for n in $(ls /sys/class/net); do
		case "$n" in lo|sit*|tunl*) continue ;; esac
		if [ -z "$bootmac" ] || [ "$(cat /sys/class/net/$n/address)" = "$bootmac" ]; then echo "$n"; return; fi
	done
}
nic=""
i=0
while [ $i -lt 20 ] && [ -z "$nic" ]; do
	nic=$(pick_nic)
	[ -n "$nic" ] || sleep 1
	i=$((i+1))
done
ip link set lo up
if [ -z "$nic" ]; then fail "no network interface${sdev:+ named $sdev (ip=)}${bootmac:+ with MAC $bootmac (BOOTIF=)}"; idle; fi
ip link set "$nic" up
if [ "$ipcfg" = dhcp6 ]; then
	mark "dhcp6 on $nic ($(cat /sys/class/net/$nic/address))"
	# The DHCPv6 server vouches for the address: no DAD delay. The link-
	# local address (dhclient's source) is then usable at once too; the
	# router advertisements give the on-link prefix and the default route.
	echo 0 >/proc/sys/net/ipv6/conf/$nic/accept_dad
	ip link set "$nic" down; ip link set "$nic" up
	i=0
	while [ $i -lt 20 ] && ! ip -6 addr show dev "$nic" | grep -q 'inet6 fe80'; do sleep 1; i=$((i+1)); done
	# dhclient stays in the background after its lease and renews it.
	if ! dhclient -6 -1 -D LL -cf /etc/dhclient6.conf -sf /etc/dhclient6.script -lf /run/dhclient6.leases -pf /run/dhclient6.pid "$nic"; then
		fail "dhcp6: no lease on $nic"; idle
	fi
	i=0
	while [ $i -lt 20 ] && ! ip -6 route | grep -q '^default'; do sleep 1; i=$((i+1)); done
elif [ -n "$static" ]; then
	mark "static ip= on $nic ($(cat /sys/class/net/$nic/address)): $sip netmask $smask${sgw:+ gateway $sgw}, no DHCP"
	if [ -z "$sip" ] || [ -z "$smask" ] || ! ifconfig "$nic" "$sip" netmask "$smask"; then
		fail "static ip=: cannot set client address '$sip' netmask '$smask' on $nic"; idle
	fi
	if [ -n "$sgw" ] && ! ip route replace default via "$sgw" dev "$nic"; then fail "static ip=: default route via $sgw"; fi
	: >/etc/resolv.conf
	for d in $sdns; do echo "nameserver $d" >>/etc/resolv.conf; done
	[ -n "$shost" ] && [ ! -s /etc/hostname ] && hostname "$shost"
else
	mark "dhcp on $nic ($(cat /sys/class/net/$nic/address))"
	# After the lease udhcpc stays in the background and renews it.
	if ! udhcpc -i "$nic" -n -t 20 -T 3 -s /etc/udhcpc.script -p /run/udhcpc.pid; then
		fail "dhcp: no lease on $nic"; idle
	fi
fi
if [ "$ipcfg" = dhcp6 ]; then
	mark "network up: $(ip -6 -o addr show dev "$nic" scope global | awk '{print $4}'), default via $(ip -6 route | awk '/^default/ {print $3}')"
else
	mark "network up: $(ip -4 -o addr show dev "$nic" | awk '{print $4}'), default via $(ip route | awk '/^default/ {print $3}')"
fi

save_state() {
	[ -b ` + StateDisk + ` ] || { mark "no state disk (` + StateDisk + `): not saving the agent config"; return; }
	[ -f ` + AgentConfigPath + ` ] || return
	(cd / && tar -cf /run/state.tar etc/anvil) || { fail "saving state: tar"; return; }
	printf '` + StateMagic + ` %d\n' "$(wc -c </run/state.tar)" >/run/state.hdr
	if dd if=/run/state.hdr of=` + StateDisk + ` bs=4096 count=1 conv=sync,notrunc 2>/dev/null &&
		dd if=/run/state.tar of=` + StateDisk + ` bs=4096 seek=1 conv=notrunc,fsync 2>/dev/null; then
		mark "agent config saved to the state disk (` + StateDisk + `)"
	else
		fail "saving state to ` + StateDisk + `"
	fi
	rm -f /run/state.tar /run/state.hdr
}

restore_state() {
	[ -b ` + StateDisk + ` ] || return 1
	hdr=$(dd if=` + StateDisk + ` bs=4096 count=1 2>/dev/null | head -n 1 | tr -d '\000')
	case "$hdr" in "` + StateMagic + ` "*) ;; *) return 1 ;; esac
	size=${hdr#* }
	dd if=` + StateDisk + ` bs=4096 skip=1 count=$(( (size + 4095) / 4096 )) 2>/dev/null | tar -xf - -C / || { fail "restoring state from ` + StateDisk + `"; return 1; }
	mark "wipe boot: agent config restored from the state disk (` + StateDisk + `)"
}

# ignition STAGE: run one Ignition stage. Anvil's config URL carries the
# boot credential in its query, and Ignition logs the URLs it fetches:
# queries are cut from its output.
run_ignition() {
	{ ignition -platform metal -stage "$1" -root / -log-to-stdout 2>&1; echo $? >/run/ignition.rc; } |
		sed -e 's/?[^ "]*/?<query removed>/g'
	return "$(cat /run/ignition.rc)"
}

# An install boot writes the OS image over the whole disk (` + StateDisk + `
# included): nothing is saved to or restored from it, and neither Ignition
# nor the kubelet runs. The agent logs no URL query (the boot credential);
# queries are cut from its output all the same.
plan=$(arg ` + agent.InstallArg + `)
if [ -n "$plan" ]; then
	mark "install: anvil-agent install started"
	{ anvil-agent install --no-reboot --log-format text 2>&1; echo $? >/run/install.rc; } |
		sed -e 's/?[^ "]*/?<query removed>/g'
	rc=$(cat /run/install.rc)
	if [ "$rc" = 0 ]; then
		mark "install: image written and seeded; rebooting"
		sync
		reboot -f
	fi
	fail "install: anvil-agent install failed (exit $rc)"
	idle
fi

# An HTTPS boot's initrd brings the boot server's CA (Go reads every file
# in /etc/ssl/certs as a root).
[ -d /etc/ssl/certs ] && mark "TLS roots in /etc/ssl/certs: $(ls /etc/ssl/certs | tr '\n' ' ')"

url=$(arg ignition.config.url)
if [ -n "$url" ]; then
	mark "ignition: fetch stage"
	if ! run_ignition fetch; then fail "ignition fetch stage"; idle; fi
	mark "ignition: files stage"
	if ! run_ignition files; then fail "ignition files stage"; idle; fi
	mark "ignition config applied"
	save_state
elif ! restore_state; then
	mark "no ignition.config.url and no saved state: nothing to run"
	idle
fi
[ -s /etc/hostname ] && hostname -F /etc/hostname && mark "hostname $(hostname)"

# respawn NAME CMD...: keep CMD running, in the background.
respawn() {
	name=$1; shift
	( while :; do "$@"; mark "$name exited ($?); restarting in 5s"; sleep 5; done ) &
}

kubelet=` + KubeletDir + `/current/kubelet
if [ -x "$kubelet" ]; then
	mkdir -p ` + "$(dirname " + FakeCRISocket + ")" + `
	respawn fake-cri fake-cri --listen ` + FakeCRISocket + `
	i=0
	while [ ! -S ` + FakeCRISocket + ` ] && [ $i -lt 30 ]; do sleep 1; i=$((i+1)); done
	[ -S ` + FakeCRISocket + ` ] && mark "fake-cri serving on ` + FakeCRISocket + `" || fail "fake-cri did not start"
fi

if grep -q '"credential": *"[^"]' ` + AgentConfigPath + ` 2>/dev/null; then
	respawn anvil-agent anvil-agent --config ` + AgentConfigPath + ` --log-format text
	if [ -x "$kubelet" ]; then mark "anvil-agent started (supervising the kubelet)"; else mark "anvil-agent started (no kubelet installed)"; fi
elif grep -q '^ANVIL_CREDENTIAL=.' /etc/anvil/agent.env 2>/dev/null; then
	# A wipe boot: Anvil's config holds only the agent's endpoint and
	# credential; the agent fetches the wipe action.
	respawn anvil-agent anvil-agent --config /etc/anvil/agent.env --log-format text
	mark "anvil-agent started for $(cat /etc/anvil/purpose 2>/dev/null || echo 'a boot without a kubelet')"
elif [ -x "$kubelet" ]; then
	fail "no agent credential in ` + AgentConfigPath + `: running the kubelet without the agent (no upgrades, no wipe)"
	respawn kubelet sh -c "exec $kubelet $(cat ` + KubeletFlagsPath + ` | tr '\n' ' ') >>` + KubeletLogPath + ` 2>&1"
fi

# Watch the kubelet until it has joined and is healthy (or 15 minutes
# passed), printing its log now and then while it is not there yet.
if [ -x "$kubelet" ]; then
	healthy=""; joined=""; t=0
	while [ $t -lt 900 ]; do
		# Not wget -T: Debian's busybox-static wget crashes with it.
		if [ -z "$healthy" ] && timeout 5 wget -q -O - http://127.0.0.1:10248/healthz 2>/dev/null | grep -qx ok; then
			healthy=1; mark "kubelet healthz ok"
		fi
		if [ -z "$joined" ] && [ -s /var/lib/kubelet/pki/kubelet-client-current.pem ]; then
			joined=1; mark "kubelet has its client certificate"
		fi
		[ -n "$joined" ] && [ -n "$healthy" ] && break
		sleep 2; t=$((t+2))
		if [ $((t % 60)) -eq 0 ]; then
			mark "kubelet not joined and healthy after ${t}s; last lines of ` + KubeletLogPath + `:"
			tail -n 12 ` + KubeletLogPath + ` 2>/dev/null | cut -c1-400
		fi
	done
	mark "memory: $(free -m | awk '/^Mem:/ {print $2-$7 " MiB in use of " $2 " (processes " $3 ", tmpfs " $5 ")"}')"
fi
idle
`

// ipArgShell parses $ipcfg (the ip= argument) and $bootif (BOOTIF=):
// static is 1 for a static configuration (autoconf off or none), with
// sip, sgw, smask, shost, sdev and sdns (space-separated) from its fields;
// bootmac is BOOTIF's MAC, lower case with colons. set -f is on.
const ipArgShell = `static=""
case "$ipcfg" in *:*:*:*:*:*:off|*:*:*:*:*:*:off:*|*:*:*:*:*:*:none|*:*:*:*:*:*:none:*) static=1 ;; esac
sip="" sgw="" smask="" shost="" sdev="" sdns=""
if [ -n "$static" ]; then
	oldifs=$IFS; IFS=:
	set -- $ipcfg
	IFS=$oldifs
	sip=$1 sgw=$3 smask=$4 shost=$5 sdev=$6 sdns=$(echo ${8:-} ${9:-})
fi
bootmac=$(echo "$bootif" | sed -e 's/^01-//' | tr '[:upper:]-' '[:lower:]:')
`

// udhcpcScript configures the NIC from udhcpc's environment.
const udhcpcScript = `#!/bin/sh
case "$1" in
deconfig)
	ip -4 addr flush dev "$interface"
	ip link set "$interface" up
	;;
bound|renew)
	ifconfig "$interface" "$ip" netmask "$subnet"
	[ -n "$router" ] && ip route replace default via "${router%% *}" dev "$interface"
	if [ -n "$dns" ]; then
		: >/etc/resolv.conf
		for d in $dns; do echo "nameserver $d" >>/etc/resolv.conf; done
	fi
	[ -n "$hostname" ] && [ ! -s /etc/hostname ] && hostname "$hostname"
	;;
esac
exit 0
`

// dhclient6Conf: a firmware-like DHCPv6 exchange, quickly retried, given
// up after 30 s.
const dhclient6Conf = `timeout 30;
initial-interval 1;
`

// dhclient6Script configures the NIC from dhclient -6's environment (the
// address only: the prefix and the default route come from the router
// advertisements). Busybox's ip has no lifetimes or nodad: the init turned
// DAD off.
const dhclient6Script = `#!/bin/sh
case "$reason" in
PREINIT6)
	ip link set "$interface" up
	;;
BOUND6|RENEW6|REBIND6|REBOOT6)
	if [ -n "$old_ip6_address" ] && [ "$old_ip6_address" != "$new_ip6_address" ]; then
		ip -6 addr del "$old_ip6_address/${old_ip6_prefixlen:-128}" dev "$interface"
	fi
	ip -6 addr show dev "$interface" | grep -q "inet6 $new_ip6_address/" ||
		ip -6 addr add "$new_ip6_address/${new_ip6_prefixlen:-128}" dev "$interface"
	if [ -n "$new_dhcp6_name_servers" ]; then
		: >/etc/resolv.conf
		for d in $new_dhcp6_name_servers; do echo "nameserver $d" >>/etc/resolv.conf; done
	fi
	;;
EXPIRE6|RELEASE6|STOP6)
	[ -n "$old_ip6_address" ] && ip -6 addr del "$old_ip6_address/${old_ip6_prefixlen:-128}" dev "$interface"
	;;
esac
exit 0
`

func stage2Script(modules []string) string {
	return strings.ReplaceAll(stage2, "@MODULES@", strings.Join(modules, " "))
}
