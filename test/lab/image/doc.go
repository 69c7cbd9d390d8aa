// Package image builds the OS the QEMU lab's hosts boot, and the lab
// MachineClass that makes such a host join a cluster as a Node with the real
// kubelet.
//
//	img, err := image.Build(ctx, image.Options{CacheDir: "bin/cache/lab"})
//	mc, err := image.MachineClass(image.ClassOptions{Image: img, KubeletSHA256: sum})
//
// Build writes a Debian kernel (test/pxetest.PrepareKernel) and a gzip'd newc
// initramfs holding busybox (busybox-static), the NIC, virtio_blk and ext4
// modules (with what their .modinfo says they need), anvil-agent (built static from ./cmd/anvil-agent), fake-cri and
// the real Ignition with its shared libraries (both from hack/tools, bin/).
// Images are cached under CacheDir by a key over all their contents.
//
// # Boot
//
// /init copies the initramfs into a tmpfs and switches into it (the
// kubelet's cadvisor understands a tmpfs root, not the initramfs rootfs).
// The second stage mounts proc, sys, dev, run and cgroup2 on
// /sys/fs/cgroup, loads the modules, configures the NIC (a static kernel
// ip=<client>::<gw>:<mask>:<hostname>:<dev>:off argument, as a virtual
// media boot passes, sets it without DHCP on <dev>, BOOTIF's NIC or the
// first one; otherwise udhcpc on the first NIC), then:
//
//   - with anvil.install= on the kernel command line (a provisioning boot
//     of a MachineClass with spec.image), runs `anvil-agent install`: the
//     plan's image goes onto the disk (StateDisk too: no state is saved),
//     the seed into its root partition, and the VM reboots
//     (MarkerInstallStarted, MarkerInstallWritten, MarkerInstallFailed);
//   - with ignition.config.url= on the kernel command line (Anvil's
//     provisioning boot), runs Ignition's fetch and files stages against /,
//     and saves the agent config to StateDisk when the VM has one;
//   - without it (Anvil's wipe boot carries no config), restores the agent
//     config from StateDisk, or idles (MarkerNothingToDo).
//
// Then it starts what is there: fake-cri when a kubelet is installed in
// /opt/anvil/kubelet/current, and anvil-agent when agent.json has a
// credential; the agent supervises the kubelet (manager "supervisor") and
// carries out wipe actions. Without a credential the init runs the kubelet
// itself and says so (FailPrefix). Every step prints a line starting with
// MarkerPrefix (FailPrefix when it fails) on ttyS0; query strings (Anvil's
// boot credential) are cut from Ignition's output.
//
// # Proof
//
// TestQEMULabJoin (ANVIL_QEMU_TEST=1, root, qemu) boots the image with
// configs rendered from MachineClass by render.Renderer against a real
// kube-apiserver and kube-controller-manager with Anvil's CSR approver,
// MachineClass controller and agent API: the Node becomes Ready with the
// rendered name, providerID and kubelet version; a second boot without a
// config wipes the disk through the agent's wipe action. TestQEMUInstall
// boots it with anvil.install= against a plan server and checks the disk
// the VM wrote: the image, and the seed in its ext4 root partition.
package image
