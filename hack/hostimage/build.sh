#!/usr/bin/env bash
# Builds the Debian 12 host OS disk image that Anvil installs to hosts:
# <out>/debian-12-amd64.raw (GPT, sparse, boots under BIOS and UEFI), its
# .sha256 and manifest.json. Root only (mmdebstrap's root mode, file
# ownership), but no loop devices and no mounts: each filesystem is made in
# a file of its partition's size (mkfs.ext4 -d, mkfs.vfat + mtools) and
# copied into the disk file.
#
# Two cached stages, each keyed on a hash of its inputs:
#   1. rootfs.sh: mmdebstrap of packages.txt (minutes), <out>/cache/rootfs-KEY.tar
#   2. this file: files/, the kubelet, kubeadm, anvil-agent, the pod images, GRUB and
#      the disk (seconds to a minute), keyed on stage 1's key and those inputs.
# An unchanged key does nothing. Stage 1's key does not see the mirror:
# for Debian's newer point release or security fixes, delete
# <out>/cache/rootfs-*.tar.
#
# Usage: build.sh OUT_DIR   (env: KUBELET, KUBEADM, AGENT: the binaries to
#   install; GO;
#   ROOTFS_ONLY=1: stage 1 only, which needs none of the binaries, so
#   `make test` runs it beside the tools' build;
#   ANVIL_IMAGE: optional, an OCI archive of the anvil controller image that
#   boot imports into containerd beside the pod images, so `kubectl apply -k
#   deploy/` runs on these hosts without a registry)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=${1:?usage: build.sh OUT_DIR}
rootfs_only=${ROOTFS_ONLY:-}
if [ -z "$rootfs_only" ]; then
  kubelet=${KUBELET:?KUBELET= the kubelet binary to install (make host-image sets it)}
  kubeadm=${KUBEADM:?KUBEADM= the kubeadm binary to install (make host-image sets it)}
  agent=${AGENT:?AGENT= the static anvil-agent binary to install (make host-image sets it)}
  for f in "$kubelet" "$kubeadm" "$agent"; do
    [ -x "$f" ] || { echo "hostimage: $f is not an executable (KUBELET=, KUBEADM=, AGENT=)" >&2; exit 1; }
  done
fi
GO=${GO:-go}
anvil_image=${ANVIL_IMAGE:-}
name=debian-12-amd64
# Virtual size: what every install transfers, hashes and writes (about 14
# MiB/s in a TCG VM, 8 with two VMs on two cores), so about 250 MiB over
# what the files use (0.97 GiB); cloud-init's growpart takes the rest of a
# real disk at first boot, before containerd starts.
disk_mib=1248
bios_part=(1 2048 4095)   # 1 MiB BIOS boot partition (GRUB's core.img)
esp_part=(2 4096 135167)  # 64 MiB EFI system partition
root_start=135168         # 66 MiB; the root partition runs to the disk's end

if [ "$(id -u)" != 0 ]; then
  echo "hostimage: needs root (mmdebstrap --mode=root, file ownership in the image)" >&2
  exit 1
fi
need=(mmdebstrap:mmdebstrap sgdisk:gdisk mkfs.ext4:e2fsprogs dumpe2fs:e2fsprogs mkfs.vfat:dosfstools mcopy:mtools systemctl:systemd sha256sum:coreutils)
missing=()
for n in "${need[@]}"; do command -v "${n%%:*}" >/dev/null || missing+=("${n##*:}"); done
if [ ${#missing[@]} -gt 0 ]; then
  echo "hostimage: installing ${missing[*]}" >&2
  { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"; } >&2
fi
if [ -n "$anvil_image" ] && [ ! -s "$anvil_image" ]; then
  echo "hostimage: ANVIL_IMAGE=$anvil_image is not a file (make images writes anvil-VERSION.oci.tar)" >&2
  exit 1
fi
mkdir -p "$out/cache"
out=$(cd "$out" && pwd)
t_start=$SECONDS

# Stage 1: the Debian packages.
key1=$(cat "$here/rootfs.sh" "$here/packages.txt" | sha256sum | cut -c1-16)
rootfs_tar="$out/cache/rootfs-$key1.tar"
if [ ! -s "$rootfs_tar" ]; then
  echo "hostimage: stage 1: mmdebstrap bookworm (packages.txt; a few minutes)" >&2
  t0=$SECONDS
  "$here/rootfs.sh" "$rootfs_tar.tmp"
  find "$out/cache" -maxdepth 1 -name 'rootfs-*.tar' -delete
  mv "$rootfs_tar.tmp" "$rootfs_tar"
  echo "hostimage: stage 1 done in $((SECONDS - t0))s" >&2
fi
if [ -n "$rootfs_only" ]; then
  echo "hostimage: stage 1 ready: $rootfs_tar" >&2
  exit 0
fi

# The pod images (pause, web): reproducible (fixed timestamps), so their
# bytes only change with their sources or the Go toolchain.
pods="$out/cache/pod-images"
(cd "$repo/hack/images" && "$GO" run . pod-images -go "$GO" -out "$pods" >/dev/null)

# Stage 2's key: everything that goes into the disk besides stage 1.
key2=$( (echo "$key1"; cat "$here/build.sh"; sha256sum "$kubelet" "$kubeadm" "$agent" "$pods"/*.oci.tar $anvil_image | cut -d' ' -f1
  cd "$here/files" && find . -print0 | LC_ALL=C sort -z | xargs -0 stat -c '%n %a' && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) |
  sha256sum | cut -c1-16)
if [ -f "$out/.image-$key2" ] && [ -s "$out/$name.raw" ] && [ -s "$out/$name.raw.sha256" ] && [ -s "$out/manifest.json" ]; then
  echo "hostimage: $out/$name.raw is up to date (key $key2)" >&2
  exit 0
fi
echo "hostimage: stage 2: assembling $name.raw (key $key2)" >&2
t2=$SECONDS

# uuid N: a UUID derived from the key, so one set of inputs gives one image.
uuid() {
  local h
  h=$(echo "$key2 $1" | sha256sum)
  echo "${h:0:8}-${h:8:4}-4${h:13:3}-a${h:17:3}-${h:20:12}"
}
disk_guid=$(uuid disk)
root_partuuid=$(uuid root-part)
root_fsuuid=$(uuid root-fs)
esp_partuuid=$(uuid esp-part)
esp_volid=$(echo "$key2" | cut -c1-8)

work=$(mktemp -d "$out/.work-XXXXXX")
trap 'rm -rf "$work"' EXIT
root="$work/root"
mkdir "$root"
tar -xpf "$rootfs_tar" -C "$root" --numeric-owner --xattrs --xattrs-include='*'

# Configuration and binaries.
cp -a --no-preserve=ownership "$here/files/." "$root/"
# The kubelet and kubeadm where Debian's and Cluster API's image-builder's
# packages put them (a kubeadm bootstrap config expects them there).
install -m 0755 "$kubelet" "$root/usr/bin/kubelet"
install -m 0755 "$kubeadm" "$root/usr/bin/kubeadm"
install -m 0755 "$agent" "$root/usr/local/bin/anvil-agent"
install -d -m 0755 "$root/usr/lib/anvil/images"
install -m 0644 "$pods"/*.oci.tar "$root/usr/lib/anvil/images/"
if [ -n "$anvil_image" ]; then
  install -m 0644 "$anvil_image" "$root/usr/lib/anvil/images/anvil.oci.tar"
fi
systemctl --root="$root" --quiet enable systemd-networkd.service systemd-resolved.service anvil-import-images.service
# wait-online, so cloud-init fetches the seed once a NIC has its DHCP lease
# (by hand: systemctl --root refuses this unit with "Channel number out of
# range", and enabling networkd does not pull it in).
install -d "$root/etc/systemd/system/network-online.target.wants"
ln -sf /lib/systemd/system/systemd-networkd-wait-online.service "$root/etc/systemd/system/network-online.target.wants/"
ln -sf ../run/systemd/resolve/stub-resolv.conf "$root/etc/resolv.conf"
printf 'anvil-host\n' >"$root/etc/hostname"
printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' >"$root/etc/hosts"
: >"$root/etc/machine-id" # empty: systemd makes a new one at first boot
rm -f "$root/var/lib/dbus/machine-id"
cat >"$root/etc/fstab" <<EOF
# Anvil host image. No swap: the kubelet wants none.
PARTUUID=$root_partuuid / ext4 errors=remount-ro 0 1
PARTUUID=$esp_partuuid /boot/efi vfat umask=0077,nofail 0 2
EOF
install -d -m 0700 "$root/boot/efi"

# GRUB from the image's own packages (grub-pc-bin, grub-efi-amd64-bin), run
# with the image's own libraries, so the build machine's GRUB never matters.
inroot() {
  "$root/lib64/ld-linux-x86-64.so.2" --library-path "$root/lib/x86_64-linux-gnu:$root/usr/lib/x86_64-linux-gnu" "$@"
}
cmdline="root=PARTUUID=$root_partuuid ro console=tty0 console=ttyS0,115200n8"
install -d "$root/boot/grub"
cat >"$root/boot/grub/grub.cfg" <<EOF
# Anvil host image. /vmlinuz and /initrd.img are Debian's symlinks to the
# newest kernel, so a kernel upgrade needs no change here.
serial --unit=0 --speed=115200
terminal_input console serial
terminal_output console serial
set timeout=1
set default=0
menuentry 'Debian 12 (Anvil host)' {
  linux /vmlinuz $cmdline
  initrd /initrd.img
}
EOF
# The config built into both GRUB images: find the root filesystem by its
# UUID, whatever the disk's number, and read the config above from it.
cat >"$work/early.cfg" <<EOF
search --no-floppy --fs-uuid --set=root $root_fsuuid
set prefix=(\$root)/boot/grub
configfile (\$root)/boot/grub/grub.cfg
EOF
mods="part_gpt ext2 search search_fs_uuid configfile normal linux echo test serial terminal"
inroot "$root/usr/bin/grub-mkimage" -d "$root/usr/lib/grub/i386-pc" -O i386-pc -o "$work/core.img" \
  -c "$work/early.cfg" -p /boot/grub biosdisk $mods
inroot "$root/usr/bin/grub-mkimage" -d "$root/usr/lib/grub/x86_64-efi" -O x86_64-efi -o "$work/BOOTX64.EFI" \
  -c "$work/early.cfg" -p /boot/grub $mods fat efi_gop all_video
cp "$root/usr/lib/grub/i386-pc/boot.img" "$work/boot.img"

# The disk: GPT with the names the installer relies on.
disk="$work/$name.raw"
truncate -s "${disk_mib}M" "$disk"
sgdisk --clear --disk-guid="$disk_guid" \
  -n "${bios_part[0]}:${bios_part[1]}:${bios_part[2]}" -t 1:EF02 -c 1:anvil-bios \
  -n "${esp_part[0]}:${esp_part[1]}:${esp_part[2]}" -t 2:EF00 -c 2:anvil-esp -u "2:$esp_partuuid" \
  -n "3:$root_start:0" -t 3:8300 -c 3:anvil-root -u "3:$root_partuuid" \
  "$disk" >/dev/null
root_end=$(sgdisk -i 3 "$disk" | sed -n 's/^Last sector: \([0-9]*\).*/\1/p')
root_sectors=$((root_end - root_start + 1))

# The ESP: FAT with GRUB at the removable-media path, so UEFI boots it
# without an NVRAM entry.
esp_sectors=$((esp_part[2] - esp_part[1] + 1))
mkfs.vfat -C -F 32 -n ANVIL-ESP -i "$esp_volid" "$work/esp.img" $((esp_sectors / 2)) >/dev/null
mmd -i "$work/esp.img" ::/EFI ::/EFI/BOOT
mcopy -i "$work/esp.img" "$work/BOOTX64.EFI" ::/EFI/BOOT/BOOTX64.EFI

# The root filesystem, from the directory. No metadata_csum_seed or
# orphan_file: GRUB 2.06 cannot read filesystems with them.
truncate -s $((root_sectors * 512)) "$work/root.img"
mkfs.ext4 -q -F -L anvil-root -U "$root_fsuuid" -O ^metadata_csum_seed,^orphan_file \
  -E root_owner=0:0 -d "$root" "$work/root.img"
used_kib=$(dumpe2fs -h "$work/root.img" 2>/dev/null | awk -F: '/^Block count/{b=$2} /^Free blocks/{f=$2} /^Block size/{s=$2} END{printf "%d", (b-f)*s/1024}')
# A booted image writes before growpart has run (logs, the machine ID,
# cloud-init's state): keep 128 MiB free at least.
if [ $(((root_sectors / 2 - used_kib) / 1024)) -lt 128 ]; then
  echo "hostimage: the root filesystem has $(((root_sectors / 2 - used_kib) / 1024)) MiB free of $((root_sectors / 2048)) MiB; raise disk_mib in $0" >&2
  exit 1
fi
dd if="$work/esp.img" of="$disk" bs=512 seek="${esp_part[1]}" conv=notrunc,sparse status=none
dd if="$work/root.img" of="$disk" bs=1M seek=$((root_start * 512)) oflag=seek_bytes conv=notrunc,sparse status=none
rm -f "$work/esp.img" "$work/root.img"

# BIOS: what grub-bios-setup does for a GPT disk with a BIOS boot
# partition, done here because grub-bios-setup (2.06) insists on finding the
# disk that holds its GRUB directory, i.e. a mounted image. boot.img's code
# (not the partition table) goes into the MBR and points at the partition's
# first sector; core.img goes into the partition, its first sector's
# blocklist pointing at the rest. No Reed-Solomon codes (as --no-rs-codes).
le() { # le VALUE BYTES: little-endian bytes of VALUE
  local i
  for ((i = 0; i < $2; i++)); do printf "\\x$(printf %02x $((($1 >> (8 * i)) & 255)))"; done
}
core_sectors=$((($(stat -c %s "$work/core.img") + 511) / 512))
if [ "$core_sectors" -gt $((bios_part[2] - bios_part[1] + 1)) ]; then
  echo "hostimage: core.img ($core_sectors sectors) does not fit the BIOS boot partition" >&2
  exit 1
fi
le "${bios_part[1]}" 8 | dd of="$work/boot.img" bs=1 seek=$((0x5c)) conv=notrunc status=none # kernel sector
printf '\x90\x90' | dd of="$work/boot.img" bs=1 seek=$((0x66)) conv=notrunc status=none   # trust the BIOS's boot drive
le $((bios_part[1] + 1)) 8 | dd of="$work/core.img" bs=1 seek=$((512 - 12)) conv=notrunc status=none
le $((core_sectors - 1)) 2 | dd of="$work/core.img" bs=1 seek=$((512 - 4)) conv=notrunc status=none
dd if="$work/boot.img" of="$disk" bs=440 count=1 conv=notrunc status=none
dd if="$work/core.img" of="$disk" bs=512 seek="${bios_part[1]}" conv=notrunc status=none

# Manifest: what went in.
pkgver() { awk -v p="$1" -F'\t' '$1 == p {print $2}' "$root/usr/share/anvil-packages.tsv"; }
kernel=$(basename "$(readlink "$root/vmlinuz")")
kubelet_version=$("$kubelet" --version | awk '{print $2}')
agent_version=$("$agent" --version 2>/dev/null | head -1 || true)
sha=$(sha256sum "$disk" | cut -d' ' -f1)
cat >"$work/manifest.json" <<EOF
{
  "name": "$name",
  "file": "$name.raw",
  "sha256": "$sha",
  "virtualSizeBytes": $(stat -c %s "$disk"),
  "allocatedBytes": $(($(stat -c %b "$disk") * 512)),
  "rootUsedBytes": $((used_kib * 1024)),
  "key": "$key2",
  "rootfsKey": "$key1",
  "partitions": {
    "anvil-bios": {"number": 1, "type": "EF02"},
    "anvil-esp": {"number": 2, "type": "EF00", "partuuid": "$esp_partuuid"},
    "anvil-root": {"number": 3, "type": "8300", "partuuid": "$root_partuuid", "fsuuid": "$root_fsuuid"}
  },
  "kernelCmdline": "$cmdline",
  "kernel": "$kernel",
  "packages": {
    "linux-image-amd64": "$(pkgver linux-image-amd64)",
    "containerd": "$(pkgver containerd)",
    "runc": "$(pkgver runc)",
    "cloud-init": "$(pkgver cloud-init)",
    "containernetworking-plugins": "$(pkgver containernetworking-plugins)",
    "systemd": "$(pkgver systemd)",
    "grub-pc-bin": "$(pkgver grub-pc-bin)",
    "grub-efi-amd64-bin": "$(pkgver grub-efi-amd64-bin)"
  },
  "kubelet": {"version": "$kubelet_version", "sha256": "$(sha256sum "$kubelet" | cut -d' ' -f1)"},
  "kubeadm": {"version": "$("$kubeadm" version -o short)", "sha256": "$(sha256sum "$kubeadm" | cut -d' ' -f1)"},
  "anvilAgent": {"version": "$agent_version", "sha256": "$(sha256sum "$agent" | cut -d' ' -f1)"},
  "anvilImage": $(if [ -n "$anvil_image" ]; then echo "\"$(sha256sum "$anvil_image" | cut -d' ' -f1)\""; else echo null; fi),
  "podImages": {
    "anvil.local/pause:1": "$(sha256sum "$pods/pause.oci.tar" | cut -d' ' -f1)",
    "anvil.local/web:1": "$(sha256sum "$pods/web.oci.tar" | cut -d' ' -f1)"
  },
  "inputs": ["hack/hostimage/packages.txt", "hack/hostimage/rootfs.sh", "hack/hostimage/build.sh", "hack/hostimage/files/", "hack/images/pod/"]
}
EOF

# Publish: the image, then its checksum and manifest, then the stamp.
rm -f "$out"/.image-*
mv "$disk" "$out/$name.raw"
echo "$sha  $name.raw" >"$out/$name.raw.sha256"
mv "$work/manifest.json" "$out/manifest.json"
touch "$out/.image-$key2"
echo "hostimage: $out/$name.raw: ${disk_mib} MiB virtual, $(($(stat -c %b "$out/$name.raw") / 2048)) MiB allocated, root fs $((used_kib / 1024)) MiB used; stage 2 in $((SECONDS - t2))s, total $((SECONDS - t_start))s" >&2
