#!/usr/bin/env bash
# Builds the real control-plane binaries (kube-apiserver, kube-controller-manager,
# etcd), controller-gen, staticcheck, and what the QEMU lab's host image runs (kubelet, kubeadm,
# fake-cri, and Ignition when libblkid-dev is installed), and Cluster API's
# managers and clusterctl (bin/capi, hack/tools/capi) into bin/, once. A
# stamp keyed on these modules' go.mod, go.sum and sources makes a second run
# a no-op; the Go build cache makes a rebuild after a bump fast.
#
# The tool modules and Anvil's own require the same version of every
# third-party module they compile (the newest any of them needs), and Anvil's
# k8s.io modules are the tools' v0.37.2: a package is compiled once for all
# of them only if it and everything under it are the same versions. A cold
# Go cache pays for that. Exceptions, where the older Kubernetes needs its
# own: kubelet v1.36's CSI spec (v1.9.0) and k8s.io/sigs.k8s.io modules; and
# go-ipmi's tablewriter in Anvil. After a bump, compare the versions the
# builds use (go list -deps -f '{{.Module}}' in each module).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/../../bin}
mkdir -p "$out"
out=$(cd "$out" && pwd)
# Ignition links libblkid with cgo (its disks stage); without the headers it
# is skipped, and the key records that, so installing them triggers a build.
blkid=no
if [ -f /usr/include/blkid/blkid.h ] && command -v gcc >/dev/null; then blkid=yes; fi
# staticcheck (`make lint`) has a module and a stamp of its own, so bumping it
# rebuilds only it and never changes what the control plane is built with.
lint_key=$(cat "$here"/staticcheck/go.mod "$here"/staticcheck/go.sum | sha256sum | cut -c1-16)
if [ ! -f "$out/.staticcheck-$lint_key" ] || [ ! -x "$out/staticcheck" ]; then
  t0=$SECONDS
  env -C "$here/staticcheck" CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$out/staticcheck" honnef.co/go/tools/cmd/staticcheck
  rm -f "$out"/.staticcheck-*
  touch "$out/.staticcheck-$lint_key"
  echo "hack/tools: staticcheck built in $((SECONDS - t0))s" >&2
fi
# Cluster API's managers and clusterctl (test/capitest, deploy/clusterctl)
# have a module and a stamp of their own too: CAPI is on older k8s.io and
# controller-runtime than Anvil. TOOLS_ONLY=capi builds just this section.
capi_layout=1 # bump when what this section puts in $out/capi changes
capi_key=$( (cat "$here"/capi/go.mod "$here"/capi/go.sum; echo "layout=$capi_layout") | sha256sum | cut -c1-16)
capi_out=(cluster-api-manager kubeadm-bootstrap-manager kubeadm-control-plane-manager clusterctl)
capi_have_all() {
  for o in "${capi_out[@]}"; do [ -x "$out/capi/$o" ] || return 1; done
  [ -f "$out/capi/VERSION" ]
}
if [ ! -f "$out/capi/.capi-$capi_key" ] || ! capi_have_all; then
  capi_start=$SECONDS
  capi_ver=$(go -C "$here/capi" list -m -f '{{.Version}}' sigs.k8s.io/cluster-api)
  echo "hack/tools: building Cluster API $capi_ver (managers, clusterctl) into $out/capi (first time: about 10 minutes)" >&2
  mkdir -p "$out/capi"
  rm -f "$out"/capi/.capi-*
  capi_mm=${capi_ver#v}
  capi_x="-X sigs.k8s.io/cluster-api/version.gitVersion=$capi_ver -X sigs.k8s.io/cluster-api/version.gitMajor=${capi_mm%%.*} -X sigs.k8s.io/cluster-api/version.gitMinor=$(echo "$capi_mm" | cut -d. -f2) -X sigs.k8s.io/cluster-api/version.gitTreeState=clean -X sigs.k8s.io/cluster-api/version.buildDate=1970-01-01T00:00:00Z"
  capi_build() { # capi_build NAME PACKAGE
    local t0=$SECONDS
    env -C "$here/capi" CGO_ENABLED=0 go build -trimpath -ldflags "-s -w $capi_x" -o "$out/capi/$1" "$2"
    echo "hack/tools: capi/$1 built in $((SECONDS - t0))s" >&2
  }
  capi_build cluster-api-manager sigs.k8s.io/cluster-api/core
  capi_build kubeadm-bootstrap-manager sigs.k8s.io/cluster-api/bootstrap/kubeadm
  capi_build kubeadm-control-plane-manager sigs.k8s.io/cluster-api/controlplane/kubeadm
  capi_build clusterctl sigs.k8s.io/cluster-api/cmd/clusterctl
  # Each provider's config/crd kustomization (bases, the contract labels,
  # the conversion webhook patches) and its webhook configurations, which
  # test/capitest points at the managers it runs. The module cache is
  # read-only: the copies are made writable so the next run can replace them.
  # Asked only now: with a cold module cache, go list -m names no Dir
  # until a build has downloaded the module.
  capi_dir=$(go -C "$here/capi" list -m -f '{{.Dir}}' sigs.k8s.io/cluster-api)
  if [ -z "$capi_dir" ] || [ ! -d "$capi_dir/core/config/crd" ]; then
    echo "hack/tools: sigs.k8s.io/cluster-api $capi_ver is not in the module cache after building it (go list -m gave '$capi_dir')" >&2
    exit 1
  fi
  rm -rf "$out/capi/crds" "$out/capi/webhooks"
  mkdir -p "$out/capi/crds" "$out/capi/webhooks"
  for p in core:core bootstrap-kubeadm:bootstrap/kubeadm controlplane-kubeadm:controlplane/kubeadm; do
    cp -R "$capi_dir/${p#*:}/config/crd" "$out/capi/crds/${p%%:*}"
    cp "$capi_dir/${p#*:}/config/webhook/manifests.yaml" "$out/capi/webhooks/${p%%:*}.yaml"
  done
  cp "$capi_dir/LICENSE" "$out/capi/LICENSE"
  chmod -R u+w "$out/capi/crds" "$out/capi/webhooks" "$out/capi/LICENSE"
  echo "$capi_ver" >"$out/capi/VERSION"
  touch "$out/capi/.capi-$capi_key"
  echo "hack/tools: Cluster API $capi_ver done in $((SECONDS - capi_start))s" >&2
fi
if [ "${TOOLS_ONLY:-}" = capi ]; then exit 0; fi
key=$( (cat "$here"/go.mod "$here"/go.sum "$here"/build.sh "$here"/*/main.go "$here"/ignition/go.mod "$here"/ignition/go.sum "$here"/kubelet136/go.mod "$here"/kubelet136/go.sum "$here"/kubelet1361/go.mod "$here"/kubelet1361/go.sum; echo "blkid=$blkid") | sha256sum | cut -c1-16)
stamp="$out/.tools-$key"
# kubelet-v1.36.3: the older kubelet the lab's in-place upgrade starts from.
kv_old=v1.36.3 # keep equal to the requirement in kubelet136/go.mod
# kubelet-v1.36.1: the patch release before it, for the lab's patch upgrade
# (no drain, running containers kept) on real hosts.
kv_patch=v1.36.1 # keep equal to the requirement in kubelet1361/go.mod
outputs=(kube-apiserver kube-controller-manager etcd controller-gen kubelet kubeadm "kubelet-$kv_old" "kubelet-$kv_patch" fake-cri)
if [ "$blkid" = yes ]; then outputs+=(ignition); fi
have_all() {
  for o in "${outputs[@]}"; do [ -x "$out/$o" ] || return 1; done
}
if [ -f "$stamp" ] && have_all; then
  exit 0
fi
cd "$here"
kv=v1.37.2
ver="-X k8s.io/component-base/version.gitVersion=$kv -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=37 -X k8s.io/component-base/version.gitTreeState=clean -X k8s.io/component-base/version.buildDate=1970-01-01T00:00:00Z"
ignv=v2.26.0 # keep equal to the requirement in ignition/go.mod
echo "hack/tools: building etcd, controller-gen, kube-apiserver, kube-controller-manager, kubelet and kubeadm $kv, kubelet $kv_old and $kv_patch, fake-cri and ignition $ignv into $out (first time: about 30 minutes)" >&2
start=$(date +%s)
step() { # step NAME: time one build
  local t0=$SECONDS
  "${@:2}"
  echo "hack/tools: $1 built in $((SECONDS - t0))s" >&2
}
step etcd env CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$out/etcd" ./etcd
step controller-gen env CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$out/controller-gen" sigs.k8s.io/controller-tools/cmd/controller-gen
step kube-apiserver env CGO_ENABLED=0 go build -trimpath -ldflags "-s -w $ver" -o "$out/kube-apiserver" ./kube-apiserver
step kube-controller-manager env CGO_ENABLED=0 go build -trimpath -ldflags "-s -w $ver" -o "$out/kube-controller-manager" ./kube-controller-manager
step kubelet env CGO_ENABLED=0 go build -trimpath -ldflags "-s -w $ver" -o "$out/kubelet" ./kubelet
# kubeadm, beside the kubelet in the host image: Cluster API's kubeadm
# bootstrap provider joins hosts with it (shares most of the kubelet's
# packages, so it costs little more).
step kubeadm env CGO_ENABLED=0 go build -trimpath -ldflags "-s -w $ver" -o "$out/kubeadm" ./kubeadm
verold="-X k8s.io/component-base/version.gitVersion=$kv_old -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=36 -X k8s.io/component-base/version.gitTreeState=clean -X k8s.io/component-base/version.buildDate=1970-01-01T00:00:00Z"
step "kubelet $kv_old" env -C kubelet136 CGO_ENABLED=0 go build -trimpath -ldflags "-s -w $verold" -o "$out/kubelet-$kv_old" .
verpatch=${verold//$kv_old/$kv_patch}
step "kubelet $kv_patch" env -C kubelet1361 CGO_ENABLED=0 go build -trimpath -ldflags "-s -w $verpatch" -o "$out/kubelet-$kv_patch" .
step fake-cri env CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$out/fake-cri" ./fake-cri
if [ "$blkid" = yes ]; then
  # Upstream's main is the package "internal"; dynamically linked (libblkid,
  # libc): test/lab/image copies the libraries ldd lists into the initramfs.
  # No SELinux relabeling (as distributions without SELinux build it): the
  # files stage would fail on a missing /etc/selinux/config.
  ignx="-X github.com/coreos/ignition/v2/internal/version.Raw=$ignv -X github.com/coreos/ignition/v2/internal/distro.selinuxRelabel=false"
  step ignition env -C ignition CGO_ENABLED=1 go build -trimpath -ldflags "-s -w $ignx" -o "$out/ignition" github.com/coreos/ignition/v2/internal
else
  echo "hack/tools: skipping ignition: it needs cgo and libblkid (apt-get install gcc libblkid-dev)" >&2
fi
rm -f "$out"/.tools-*
touch "$stamp"
echo "hack/tools: done in $(( $(date +%s) - start ))s" >&2
