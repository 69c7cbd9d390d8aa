#!/usr/bin/env bash
# Stage 1 of the host image (slow, minutes): mmdebstrap the Debian 12
# packages of packages.txt into a tarball. Only this file and packages.txt
# key it, so changing a binary or a config file never reruns it.
# Usage: rootfs.sh OUT.tar
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$1
mapfile -t pkgs < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$here/packages.txt")
include=$(IFS=,; echo "${pkgs[*]}")
# The build machine's apt sources (mmdebstrap copies a .sources or .list
# file it is given), so the build uses the machine's mirror.
mirrors=()
for f in /etc/apt/sources.list.d/debian.sources /etc/apt/sources.list; do
  if [ -s "$f" ] && grep -q bookworm "$f"; then mirrors=("$f"); break; fi
done
# Kernel modules for hardware a server has not got (sound, cameras and TV
# cards, desktop GPUs, Wi-Fi, Bluetooth, sensors, staging drivers: 150 of
# the kernel's 384 MiB) are left out, as Debian's cloud images leave them:
# every install transfers, hashes and writes every byte of the image. The
# BMC's VGA (ast, mgag200), every NIC, HBA, RAID and InfiniBand driver and
# all filesystems stay. dpkg keeps these excludes in the image
# (/etc/dpkg/dpkg.cfg.d), so a kernel upgrade on the host leaves them out
# too, and the kernel's own postinst runs depmod and update-initramfs on
# what is there.
# (Bookworm's kernel package ships /lib/modules; later ones /usr/lib/modules.)
drop_modules=()
for mods in '/lib/modules/*/kernel' '/usr/lib/modules/*/kernel'; do # quoted: dpkg's globs
  for d in sound drivers/media drivers/gpu/drm/amd drivers/gpu/drm/i915 drivers/gpu/drm/nouveau \
    drivers/gpu/drm/radeon drivers/net/wireless net/wireless net/mac80211 drivers/bluetooth \
    net/bluetooth drivers/iio drivers/staging drivers/comedi drivers/isdn; do
    drop_modules+=(--dpkgopt="path-exclude=$mods/$d/*")
  done
  drop_modules+=(--dpkgopt="path-exclude=$mods/lib/test_*")
done
mmdebstrap --mode=root --variant=essential --format=tar \
  --aptopt='APT::Install-Recommends "false"' \
  --aptopt='APT::Install-Suggests "false"' \
  --dpkgopt='path-exclude=/usr/share/man/*' \
  --dpkgopt='path-exclude=/usr/share/locale/*' \
  --dpkgopt='path-include=/usr/share/locale/locale.alias' \
  --dpkgopt='path-exclude=/usr/share/doc/*' \
  --dpkgopt='path-include=/usr/share/doc/*/copyright' \
  --dpkgopt='path-exclude=/usr/share/info/*' \
  "${drop_modules[@]}" \
  --include="$include" \
  --customize-hook='chroot "$1" dpkg-query -W -f="\${Package}\t\${Version}\n" > "$1/usr/share/anvil-packages.tsv"' \
  --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin "$1"/var/log/*.log' \
  bookworm "$out" "${mirrors[@]}"
