#!/usr/bin/env bash
# Installs what `make bench` and `make bench-smoke` need on Debian 12: the
# peers (Kea, dnsmasq, atftpd, tftpd-hpa, nginx), the load tools (perfdhcp,
# atftp), the iPXE binaries served over TFTP, gcc + libnetfilter-queue
# for the netem stand-in (internal/impair), and chromium for the console
# benchmark (internal/consolebench). Run as root.
#
# atftpd and tftpd-hpa conflict as Debian packages (both provide the TFTP
# service), so tftpd-hpa is unpacked, not installed, under /opt/anvil-bench.
# Installing does not start any service: the benchmarks start the peers
# themselves inside their own network namespaces.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
pkgs=(kea-dhcp4-server kea-admin dnsmasq-base atftpd atftp nginx-light ipxe iproute2 iptables util-linux gcc libc6-dev libnetfilter-queue-dev chromium)
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
if ! { in.tftpd -V 2>&1 | grep -q tftp-hpa; } && [ ! -x /opt/anvil-bench/tftpd-hpa/usr/sbin/in.tftpd ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && chmod 777 . && apt-get download tftpd-hpa)
  mkdir -p /opt/anvil-bench/tftpd-hpa
  dpkg-deb -x "$tmp"/tftpd-hpa_*.deb /opt/anvil-bench/tftpd-hpa
fi
echo "bench peers installed"
