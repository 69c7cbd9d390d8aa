#!/usr/bin/env bash
# Installs the Debian packages the QEMU lab needs, when it can (root, apt-get).
# Never fails: without them `anvil dev` runs without the lab and says why.
pkgs=(qemu-system-x86 ipxe-qemu ovmf openipmi ipmitool iproute2 util-linux busybox-static libblkid-dev gcc)
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "lab: not installing ${missing[*]} (needs root and apt-get); make run starts without the QEMU lab" >&2
  exit 0
fi
echo "lab: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
{ apt-get update -q && apt-get install -y -q --no-install-recommends "${missing[@]}"; } >&2 ||
  echo "lab: apt-get failed; make run starts without the QEMU lab" >&2
exit 0
