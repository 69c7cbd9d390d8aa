# Anvil. `make run` and `make test` are the two commands a newcomer needs.
SHELL := /bin/bash
GO ?= go
BIN := $(CURDIR)/bin
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)
export KUBEBUILDER_ASSETS := $(BIN)

.PHONY: all build tools clusterctl-repo generate run run-capi dev lab lab-deps lab-host-image host-image-test lab-image-test e2e e2e-capi e2e-boot bench bench-smoke test lint fuzz pxe-vm-test images host-image host-image-rootfs clean help

all: build

help:
	@echo "make run    - local control plane + anvil, with the QEMU lab when it can (data in .anvil/)"
	@echo "make lab    - the same, insisting on the QEMU lab (root, QEMU)"
	@echo "make run-capi - local control plane + Cluster API's managers + anvil --capi + simulated hosts (data in .anvil-capi/)"
	@echo "make e2e    - the QEMU lab end to end: PXE, real BMCs, a real kubelet joining"
	@echo "make e2e-capi - Cluster API on the lab's Debian hosts: kubeadm joins, in-place upgrade and rollback (part of make test)"
	@echo "make bench  - benchmarks beside dnsmasq, Kea, atftpd, tftpd-hpa, nginx (bench/RESULTS.md)"
	@echo "make test   - build tools once, then every test against a real kube-apiserver"
	@echo "make lint   - staticcheck over the module, anvil's dev build and hack/images (part of make test)"
	@echo "make tools  - build kube-apiserver, etcd, controller-gen, staticcheck into bin/ (cached)"
	@echo "make clusterctl-repo - Anvil as a clusterctl provider (infrastructure-anvil) in bin/clusterctl-repo/"
	@echo "make build  - bin/anvil, bin/anvil-agent (static) and bin/anvil-dev (anvil with the dev command: emulators and the QEMU lab)"
	@echo "make images - OCI images of anvil and anvil-agent (amd64+arm64) in bin/images/, no Docker needed"
	@echo "make host-image - the Debian 12 host OS disk image (BIOS+UEFI, containerd, kubelet) in bin/hostimage/ (root; cached)"

## tools: real kube-apiserver, etcd and controller-gen, built once and cached in bin/.
tools:
	@hack/tools/build.sh $(BIN)

## clusterctl-repo: Anvil as a clusterctl provider repository in
## bin/clusterctl-repo/ (capi/clusterctl/README.md).
CLUSTERCTL_VERSION ?= v0.1.0
clusterctl-repo:
	$(GO) run ./capi/clusterctl/genrepo -root $(CURDIR) -out $(BIN)/clusterctl-repo -version $(CLUSTERCTL_VERSION)

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN)/anvil ./cmd/anvil
	CGO_ENABLED=0 $(GO) build -trimpath -tags dev -ldflags "$(LDFLAGS)" -o $(BIN)/anvil-dev ./cmd/anvil
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS) -s -w" -o $(BIN)/anvil-agent ./cmd/anvil-agent

## images: OCI image layouts, tarred, of anvil and anvil-agent for linux/amd64
## and linux/arm64, built without a container daemon by hack/images (its own
## module). Always rebuilt: Go's build cache makes an unchanged tree cheap.
## Timestamps are the commit time, so the digests are reproducible.
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
images:
	cd hack/images && $(GO) run . -go $(GO) -repo-root $(CURDIR) -out $(BIN)/images -version $(VERSION) -source-date-epoch $(SOURCE_DATE_EPOCH)

## host-image: the Debian 12 disk image Anvil installs to hosts, with the
## kubelet, anvil-agent, our pause/web pod images and the anvil controller
## image (anvil.dev/anvil:dev, what deploy/ runs), in bin/hostimage/
## (hack/hostimage/build.sh; root, no loop devices or mounts). Two cached
## stages: the Debian packages (minutes) and the assembly (seconds).
## host-image-rootfs is the first alone: it needs no tools, so make test
## runs it beside their build.
host-image-rootfs:
	mkdir -p $(BIN)/hostimage
	ROOTFS_ONLY=1 hack/hostimage/build.sh $(BIN)/hostimage

host-image: tools
	mkdir -p $(BIN)/hostimage
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS) -s -w" -o $(BIN)/hostimage/anvil-agent ./cmd/anvil-agent
	cd hack/images && $(GO) run . -go $(GO) -repo-root $(CURDIR) -out $(BIN)/hostimage/images -image anvil -platform linux/amd64 -version dev -source-date-epoch $(SOURCE_DATE_EPOCH) >/dev/null
	KUBELET=$(BIN)/kubelet KUBEADM=$(BIN)/kubeadm AGENT=$(BIN)/hostimage/anvil-agent ANVIL_IMAGE=$(BIN)/hostimage/images/anvil-dev.oci.tar GO=$(GO) hack/hostimage/build.sh $(BIN)/hostimage

## generate: deepcopy and CRDs from api/ (a test checks they are up to date).
generate: tools
	$(BIN)/controller-gen object:headerFile=hack/boilerplate.go.txt paths=./api/...
	$(BIN)/controller-gen crd:maxDescLen=400 paths=./api/... output:crd:artifacts:config=deploy/crds
	$(BIN)/controller-gen rbac:roleName=anvil-manager paths=./... output:rbac:artifacts:config=deploy/rbac

## run: everything on an embedded local control plane, plus the QEMU lab
## (three VMs behind ipmi_sim and the Redfish emulator) when this machine can
## run it. Ctrl-C stops it.
run: tools build lab-deps lab-host-image
	$(BIN)/anvil-dev dev --data-dir .anvil --bin-dir $(BIN)

## run-capi: the same control plane with Cluster API v1.14's managers, Anvil
## as its infrastructure provider and in-place update extension, and simulated
## hosts (README, "With Cluster API"). Data in .anvil-capi/.
run-capi: tools build
	$(BIN)/anvil-dev dev --data-dir .anvil-capi --bin-dir $(BIN) --capi

lab: tools build lab-deps lab-host-image
	$(BIN)/anvil-dev dev --data-dir .anvil --bin-dir $(BIN) --lab=on

## lab-host-image: the Debian image for the lab's lab-debian class, where
## this machine can build it (root). Never fails: without it the lab runs
## its live class only, and says how to get the other.
lab-host-image:
	@if [ "$$(id -u)" = 0 ]; then $(MAKE) --no-print-directory host-image || echo "lab: the Debian host image did not build; the lab starts without the lab-debian class" >&2; \
	else echo "lab: not building the Debian host image (make host-image needs root); the lab starts without the lab-debian class" >&2; fi

lab-deps:
	@hack/lab-deps.sh

dev: run

## test: all tests, against real binaries, then a short bounded fuzz of the
## packet and path parsers. No timing assertions anywhere. hack/test.sh runs
## the steps (tidy; tools, with the host image's Debian stage beside it;
## checks: vet, lint, images-test and fuzz in the background beside go-test;
## hostimage-test; vm-tests: dev-test, pxe-vm-test, lab-image-test and
## bench-smoke in the background beside e2e) and prints each one's time;
## TEST_STEPS=checks,e2e make test runs only the steps named (and the tools).
test:
	GO=$(GO) MAKE=$(MAKE) hack/test.sh

## lint: staticcheck's default checks (hack/tools/staticcheck pins the
## version); any finding fails. The dev build tag adds files to cmd/anvil only.
lint: tools
	$(BIN)/staticcheck ./...
	$(BIN)/staticcheck -tags dev ./cmd/anvil
	cd hack/images && $(BIN)/staticcheck ./...

## pxe-vm-test: real firmware (SeaBIOS+iPXE, OVMF) PXE-boots QEMU VMs from our
## DHCP/TFTP/HTTP in a network namespace. Alone, so the VMs get the CPU.
pxe-vm-test:
	ANVIL_QEMU_TEST=1 $(GO) test -count=1 -timeout 10m -run TestQEMUPXEBoot -v ./test/pxetest

## lab-image-test: the lab's host image boots in QEMU, applies an Ignition
## config with the real Ignition binary, and its kubelet joins; a wipe boot wipes.
lab-image-test: tools
	ANVIL_QEMU_TEST=1 $(GO) test -count=1 -timeout 15m -v ./test/lab/image

## e2e: registered Hosts (IPMI, Redfish and manual, really powering QEMU VMs)
## become Ready Machines whose Nodes a real kubelet registered; tickets, delete,
## wipe, reclaim, anvil serve killed and restarted along the way; then an
## in-place kubelet upgrade v1.36.3 -> v1.37.2 with rollbacks and a MachineSet
## rollout; then two Hosts install the Debian image to disk and run real
## pods through upgrades, reboots, a rack power loss and a wipe, and
## deploy/ runs Anvil itself as a pod there. Alone, so the VMs get the CPU
## (make test runs e2e-capi and e2e-boot beside it, in labs of their own).
e2e: tools host-image
	ANVIL_E2E=1 $(GO) test -count=1 -timeout 80m -run 'TestLabEndToEnd|TestLabInPlaceUpgrade|TestLabDiskInstall' -v ./test/e2e

## e2e-boot: the boot methods without L2 DHCP, each to a Ready Node in the
## lab: a Host on a segment with no DHCP provisioned by Redfish virtual
## media (TestLabVirtualMedia), an HTTPBoot Host by a one-time Redfish
## UefiHttp boot (TestLabHTTPBoot), and a host on an IPv6-only segment by
## PXEv6 with everything over HTTPS (TestLabIPv6). About 4 minutes.
e2e-boot: tools
	ANVIL_E2E=1 $(GO) test -count=1 -timeout 30m -run 'TestLabVirtualMedia$$|TestLabHTTPBoot$$|TestLabIPv6$$' -v ./test/e2e

## e2e-capi: Cluster API's managers with Anvil as their infrastructure
## provider and in-place update extension on the lab's Debian hosts: a
## MachineDeployment of two workers joined by kubeadm, upgraded in place,
## a broken version rolled back (TestLabClusterAPI; its own lab, so make
## test runs it beside make e2e).
e2e-capi: tools host-image
	ANVIL_E2E=1 $(GO) test -count=1 -timeout 60m -run 'TestLabClusterAPI' -v ./test/e2e

## host-image-test: the Debian image boots under SeaBIOS and OVMF with a
## seed of the test's and runs a pod (about 4 minutes under TCG). Not part
## of make test: TestLabDiskInstall boots it under both, installed by Anvil.
host-image-test: host-image
	ANVIL_QEMU_TEST=1 $(GO) test -count=1 -timeout 20m -run TestQEMUHostImageBoot -v ./test/hostimage

## bench: Anvil beside dnsmasq, Kea, atftpd, tftpd-hpa and nginx on this
## machine; rewrites bench/RESULTS.md (well over an hour on 2 cores). Never part of test.
bench:
	GO=$(GO) bash bench/run.sh full

## bench-smoke: every benchmark for a few seconds, so they cannot rot; no
## figures kept, no timing asserted.
bench-smoke:
	GO=$(GO) bash bench/run.sh smoke

## FUZZTIME (or one per target) is a duration or a count (100000x). make
## test gives counts: with a duration, Go 1.26's fuzz coordinator can fail a
## target with a bare "context deadline exceeded" when the time ends while a
## loaded machine's worker is mid-call (golang/go#75804, fixed in Go 1.27).
FUZZTIME ?= 60s
FUZZTIME_DHCP ?= $(FUZZTIME)
FUZZTIME_TFTP ?= $(FUZZTIME)
FUZZTIME_HTTPBOOT ?= $(FUZZTIME)
FUZZFLAGS ?=
fuzz:
	$(GO) test -run='^$$' -fuzz=FuzzHandle -fuzztime=$(FUZZTIME_DHCP) $(FUZZFLAGS) ./pxe/dhcp
	$(GO) test -run='^$$' -fuzz=FuzzResolve -fuzztime=$(FUZZTIME_TFTP) $(FUZZFLAGS) ./pxe/tftp
	$(GO) test -run='^$$' -fuzz=FuzzBootScript -fuzztime=$(FUZZTIME_HTTPBOOT) $(FUZZFLAGS) ./pxe/httpboot

clean:
	rm -rf .anvil .anvil-capi bin/anvil bin/anvil-dev bin/anvil-agent bin/images bin/hostimage
