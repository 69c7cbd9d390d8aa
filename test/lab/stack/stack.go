// Package stack runs the whole of Anvil against the QEMU lab, the way it
// runs in production: a control plane (etcd, kube-apiserver,
// kube-controller-manager), `anvil serve` with the controllers in the host
// namespace (they reach the BMCs and the API server on loopback), and
// `anvil serve --controllers none` with the network services inside the
// lab's namespace, bound to its bridge (the DaemonSet's job). Hosts are
// registered with `anvil hosts import`. `anvil dev --lab` and the e2e tests
// use it.
package stack

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/controlplane"
	"anvil.dev/anvil/deploy"
	"anvil.dev/anvil/join/csr"
	"anvil.dev/anvil/test/lab"
	"anvil.dev/anvil/test/lab/hostos"
	"anvil.dev/anvil/test/lab/image"
	"anvil.dev/anvil/test/pxetest"
)

// Options configure Start.
type Options struct {
	// Dir keeps everything: cp/ (control plane), lab/, artifacts/, logs/.
	Dir string
	// CacheDir keeps the built host image (default Dir/cache).
	CacheDir string
	// BinDir has kube-apiserver, etcd, kube-controller-manager, kubelet,
	// fake-cri and ignition (hack/tools). Required.
	BinDir string
	// Anvil is the anvil binary both processes run. Required.
	Anvil string
	// RepoRoot of anvil.dev/anvil (the agent is built from it).
	RepoRoot string
	// Hosts of the lab; Register picks which are imported.
	Hosts []lab.HostOptions
	// RedfishMockup for Redfish hosts.
	RedfishMockup string
	// Namespace of Hosts, Machines and the MachineClass (default "default").
	Namespace string
	// ServeArgs are extra flags for the controllers' `anvil serve`.
	ServeArgs []string
	// LabName is the network namespace (lab.DefaultName if empty).
	LabName string
	// NoDHCP runs the network services without DHCP: no DHCP server on
	// the lab's segment at all, so hosts boot by virtual media.
	NoDHCP bool
	// IPv6 makes the lab's segment IPv6-only for the hosts (lab
	// Options.Subnet6 = Subnet6): the network services run DHCPv6 (no
	// DHCPv4), TFTP and HTTP boot over IPv6, and the hosts join the API
	// server at the lab's IPv6 address. Hosts must be UEFI.
	IPv6 bool
	// TLS serves HTTP boot as HTTPS only, on port 443, with a server
	// certificate for the lab's addresses from a CA the stack makes
	// (Stack.BootCA): the iPXE builds served trust it, the booted OS gets
	// it as an initrd, and the lab's BMCs trust it for virtual media.
	TLS bool
	// DiskImage, if set, is the raw Debian disk image (hack/hostimage):
	// it is published next to the lab's artifacts and a second class,
	// DiskClass ("lab-debian"), installs it to disk.
	DiskImage string
	// ControllerManagerControllers are kube-controller-manager controllers
	// run besides controlplane.DefaultControllers (a kubeadm cluster's:
	// csrapproving and bootstrapsigner, for Cluster API's kubeadm joins).
	ControllerManagerControllers []string
	// BeforeControllers, if set, runs once the control plane is up and
	// Anvil's CRDs installed, before anvil serve starts (CRDs anvil serve
	// needs, such as Cluster API's for --capi).
	BeforeControllers func(ctx context.Context, s *Stack) error
	Logger            logr.Logger
}

// Stack is a running Anvil with its lab.
type Stack struct {
	o     Options
	CP    *controlplane.ControlPlane
	Lab   *lab.Lab
	Image *image.Image
	Class *metalv1.MachineClass
	// DiskClass installs Options.DiskImage (nil without one).
	DiskClass *metalv1.MachineClass
	Client    client.Client
	// Kubeconfig is the admin kubeconfig on loopback.
	Kubeconfig string
	// NetnsKubeconfig reaches the API server from inside the lab.
	NetnsKubeconfig string
	// BootCA is the boot server's CA with Options.TLS (else nil).
	BootCA *pxetest.CA
	// TicketCallbackURL is where the controllers' process serves signed
	// ticket callbacks (loopback; TicketEndpoints may be on loopback too).
	TicketCallbackURL string

	mu              sync.Mutex
	controllers     *exec.Cmd
	controllersDone chan struct{}
	netboot         *exec.Cmd
	netbootDone     chan struct{}
	ctx             context.Context
}

// Start builds the image, starts the control plane, the lab and both anvil
// processes, and installs the lab MachineClass. Hosts are not registered
// yet (Register).
func Start(ctx context.Context, o Options, scheme client.Options) (*Stack, error) {
	if o.Dir == "" || o.BinDir == "" || o.Anvil == "" {
		return nil, errors.New("stack: Dir, BinDir and Anvil are required")
	}
	if o.CacheDir == "" {
		o.CacheDir = filepath.Join(o.Dir, "cache")
	}
	if o.Namespace == "" {
		o.Namespace = "default"
	}
	for _, d := range []string{"logs", "artifacts/lab"} {
		if err := os.MkdirAll(filepath.Join(o.Dir, d), 0o755); err != nil {
			return nil, err
		}
	}
	s := &Stack{o: o, ctx: ctx}
	log := o.Logger

	t0 := time.Now()
	img, err := image.Build(ctx, image.Options{CacheDir: o.CacheDir, RepoRoot: o.RepoRoot, BinDir: o.BinDir, Logger: log.WithName("image")})
	if err != nil {
		return nil, fmt.Errorf("stack: host image: %w", err)
	}
	s.Image = img
	log.Info("host image ready", "seconds", time.Since(t0).Seconds(), "cached", img.Cached)

	// The lab's forwarder dials the API server lazily, so its port is
	// chosen first and the control plane started on it afterwards.
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	var subnet6 netip.Prefix
	if o.IPv6 {
		subnet6 = Subnet6
	}
	var caPEM []byte
	if o.TLS {
		if s.BootCA, err = pxetest.NewCA("Anvil lab boot CA"); err != nil {
			return nil, fmt.Errorf("stack: boot CA: %w", err)
		}
		caPEM = s.BootCA.PEM
	}
	s.Lab, err = lab.Start(ctx, lab.Options{Dir: filepath.Join(o.Dir, "lab"), Name: o.LabName, Hosts: o.Hosts, Subnet6: subnet6, BootCA: caPEM,
		APIServer: "127.0.0.1:" + strconv.Itoa(port), RedfishMockup: o.RedfishMockup, Logger: log.WithName("lab")})
	if err != nil {
		return nil, fmt.Errorf("stack: lab: %w", err)
	}
	ok := false
	defer func() {
		if !ok {
			s.Stop()
		}
	}()
	s.CP, err = controlplane.Start(ctx, controlplane.Options{Dir: filepath.Join(o.Dir, "cp"), BinDir: o.BinDir,
		APIServerPort: port, RandomPorts: true, ExtraSANs: s.apiServerSANs(),
		ControllerManager: &controlplane.ControllerManagerOptions{Controllers: kcmControllers(o.ControllerManagerControllers)},
		Logger:            log.WithName("controlplane")})
	if err != nil {
		return nil, fmt.Errorf("stack: control plane: %w", err)
	}
	s.Kubeconfig = s.CP.Kubeconfig
	if s.NetnsKubeconfig, err = rewriteServer(s.CP.Kubeconfig, filepath.Join(o.Dir, "kubeconfig-lab"), s.Lab.APIServerURL()); err != nil {
		return nil, err
	}
	if s.Client, err = client.New(s.CP.Config, scheme); err != nil {
		return nil, err
	}
	if err := deploy.InstallCRDs(ctx, s.Client); err != nil {
		return nil, err
	}
	// Lets kubelets with Anvil's bootstrap tokens file CSRs.
	if err := csr.ApplyBootstrapClusterRoleBinding(ctx, s.Client); err != nil {
		return nil, fmt.Errorf("stack: binding the node bootstrapper role: %w", err)
	}
	if err := s.installArtifacts(); err != nil {
		return nil, err
	}
	if err := s.writeTLS(); err != nil {
		return nil, err
	}
	// A fixed port for the whole run: webhooks filed before a restart carry
	// callback links that must still work after it.
	cbPort, err := freePort()
	if err != nil {
		return nil, err
	}
	s.TicketCallbackURL = "http://127.0.0.1:" + strconv.Itoa(cbPort)
	if o.BeforeControllers != nil {
		if err := o.BeforeControllers(ctx, s); err != nil {
			return nil, err
		}
	}
	if err := s.StartControllers(); err != nil {
		return nil, err
	}
	if err := s.startNetboot(); err != nil {
		return nil, err
	}
	if err := s.installClass(ctx); err != nil {
		return nil, err
	}
	ok = true
	return s, nil
}

// writeTLS writes, with Options.TLS, the boot CA and a server certificate
// for the lab's addresses into Dir/tls for the network services' flags.
func (s *Stack) writeTLS() error {
	if s.BootCA == nil {
		return nil
	}
	cert, key, err := s.BootCA.Issue(pxetest.ServerCert{IPs: s.apiServerSANs()})
	if err != nil {
		return fmt.Errorf("stack: boot server certificate: %w", err)
	}
	dir := filepath.Join(s.o.Dir, "tls")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for name, b := range map[string][]byte{"ca.pem": s.BootCA.PEM, "cert.pem": cert, "key.pem": key} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// tlsArgs are the network services' HTTPS flags (none without Options.TLS).
func (s *Stack) tlsArgs() []string {
	if s.BootCA == nil {
		return nil
	}
	dir := filepath.Join(s.o.Dir, "tls")
	return []string{"--http-addr", ":443", "--http-tls-cert-file", filepath.Join(dir, "cert.pem"),
		"--http-tls-key-file", filepath.Join(dir, "key.pem"), "--http-tls-ca-file", filepath.Join(dir, "ca.pem")}
}

// kcmControllers are the default controllers and extra ones; nil (the
// control plane's defaults) without extras.
func kcmControllers(extra []string) []string {
	if len(extra) == 0 {
		return nil
	}
	return append(slices.Clone(controlplane.DefaultControllers), extra...)
}

// Subnet6 is the lab's IPv6 segment with Options.IPv6.
var Subnet6 = netip.MustParsePrefix("fd00:a11:0:1::/64")

// apiServerSANs are the lab's addresses the VMs reach the API server by.
func (s *Stack) apiServerSANs() []net.IP {
	sans := []net.IP{s.Lab.BridgeIP().AsSlice()}
	if a := s.Lab.BridgeIP6(); a.IsValid() {
		sans = append(sans, a.AsSlice())
	}
	return sans
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// rewriteServer copies a kubeconfig with another server URL.
func rewriteServer(src, dst, server string) (string, error) {
	cfg, err := clientcmd.LoadFromFile(src)
	if err != nil {
		return "", err
	}
	for _, c := range cfg.Clusters {
		c.Server = server
	}
	if err := clientcmd.WriteToFile(*cfg, dst); err != nil {
		return "", err
	}
	return dst, nil
}

// OldKubeletVersion is the older kubelet hack/tools builds
// (bin/kubelet-<version>) for in-place upgrades in the lab.
const OldKubeletVersion = "v1.36.3"

// PatchKubeletVersion is the patch release before OldKubeletVersion
// (bin/kubelet-v1.36.1): a patch upgrade from it restarts the kubelet
// without a drain.
const PatchKubeletVersion = "v1.36.1"

// ArtifactDir is what the network services serve below /artifacts/; the
// lab class's files are in its "lab" directory.
func (s *Stack) ArtifactDir() string { return filepath.Join(s.o.Dir, "artifacts") }

// builtKubelet is bin/kubelet-<version>, "" when not built.
func (s *Stack) builtKubelet(version string) string {
	p := filepath.Join(s.o.BinDir, "kubelet-"+version)
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

// olderKubelets are the versions below bin/kubelet that hack/tools built.
var olderKubelets = []string{OldKubeletVersion, PatchKubeletVersion}

// installArtifacts links the image and the kubelets into the artifact
// directory the network services serve.
func (s *Stack) installArtifacts() error {
	dir := filepath.Join(s.o.Dir, "artifacts", "lab")
	files := map[string]string{
		s.Image.Kernel: "vmlinuz", s.Image.Initrd: "initramfs.cpio.gz",
		filepath.Join(s.o.BinDir, "kubelet"): "kubelet-" + image.DefaultKubeletVersion,
	}
	for _, v := range olderKubelets {
		if p := s.builtKubelet(v); p != "" {
			files[p] = "kubelet-" + v
		}
	}
	if s.o.DiskImage != "" {
		files[s.o.DiskImage] = path.Base(hostos.DefaultImageURL)
	}
	for src, name := range files {
		dst := filepath.Join(dir, name)
		_ = os.Remove(dst)
		if err := os.Link(src, dst); err != nil {
			if err := copyFile(src, dst); err != nil {
				return fmt.Errorf("stack: artifact %s: %w", name, err)
			}
		}
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func (s *Stack) installClass(ctx context.Context) error {
	sum, err := image.FileSHA256(filepath.Join(s.o.BinDir, "kubelet"))
	if err != nil {
		return err
	}
	var others []metalv1.KubeletArtifact
	for _, v := range olderKubelets {
		p := s.builtKubelet(v)
		if p == "" {
			continue
		}
		oldSum, err := image.FileSHA256(p)
		if err != nil {
			return err
		}
		others = append(others, metalv1.KubeletArtifact{Version: v, Artifact: metalv1.Artifact{URL: "lab/kubelet-" + v, SHA256: oldSum}})
	}
	mc, err := image.MachineClass(image.ClassOptions{Namespace: s.o.Namespace, Image: s.Image, KubeletSHA256: sum, OtherKubelets: others})
	if err != nil {
		return err
	}
	//lint:ignore SA1019 MachineClass has no generated apply configuration; an unstructured one made from mc would send the same zero values
	if err := s.Client.Patch(ctx, mc, client.Apply, client.FieldOwner("anvil-lab"), client.ForceOwnership); err != nil {
		return fmt.Errorf("stack: lab MachineClass: %w", err)
	}
	s.Class = mc
	if s.o.DiskImage == "" {
		return nil
	}
	// The published link, not the source: a rebuild may replace that.
	imgSum, err := image.FileSHA256(filepath.Join(s.ArtifactDir(), filepath.FromSlash(hostos.DefaultImageURL)))
	if err != nil {
		return fmt.Errorf("stack: disk image: %w", err)
	}
	dc, err := hostos.MachineClass(hostos.ClassOptions{Lab: image.ClassOptions{Namespace: s.o.Namespace, Image: s.Image, KubeletSHA256: sum, OtherKubelets: others},
		ImageSHA256: imgSum})
	if err != nil {
		return err
	}
	//lint:ignore SA1019 as above
	if err := s.Client.Patch(ctx, dc, client.Apply, client.FieldOwner("anvil-lab"), client.ForceOwnership); err != nil {
		return fmt.Errorf("stack: lab disk MachineClass: %w", err)
	}
	s.DiskClass = dc
	return nil
}

// logFile opens (appends) one of the stack's process logs.
func (s *Stack) logFile(name string) (*os.File, error) {
	return os.OpenFile(filepath.Join(s.o.Dir, "logs", name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
}

// LogPath is where a process of the stack logs: "controllers" or "netboot".
func (s *Stack) LogPath(name string) string {
	return filepath.Join(s.o.Dir, "logs", "anvil-"+name+".log")
}

// StartControllers starts the controllers' `anvil serve` (again, after
// KillControllers).
func (s *Stack) StartControllers() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.controllers != nil {
		return errors.New("stack: controllers already running")
	}
	f, err := s.logFile("anvil-controllers.log")
	if err != nil {
		return err
	}
	args := append([]string{"serve", "--kubeconfig", s.Kubeconfig,
		"--controllers", "host,csr,machineclass,machine,machineset,ticket",
		"--leader-elect=false", "--metrics-bind-address", "0", "--health-probe-bind-address", "0",
		"--log-format", "text", "--power-poll-interval", "20s", "--power-poll-max-interval", "20s", "--bmc-call-timeout", "20s",
		"--ticket-callback-addr", strings.TrimPrefix(s.TicketCallbackURL, "http://"), "--ticket-callback-url", s.TicketCallbackURL,
		"--ticket-allow-loopback", "--bmc-allow-cidrs", "127.0.0.1/32",
		// Where BMCs fetch virtual media ISOs: the boot HTTP server.
		"--http-base-url", s.httpBaseURL()}, s.o.ServeArgs...)
	cmd := exec.Command(s.o.Anvil, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return fmt.Errorf("stack: starting anvil serve: %w", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); f.Close(); close(done) }()
	s.controllers, s.controllersDone = cmd, done
	return nil
}

// KillControllers kill -9s the controllers' process, as a crash would.
func (s *Stack) KillControllers() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.controllers == nil {
		return nil
	}
	err := s.controllers.Process.Signal(syscall.SIGKILL)
	<-s.controllersDone
	s.controllers = nil
	if err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	return nil
}

func (s *Stack) startNetboot() error {
	f, err := s.logFile("anvil-netboot.log")
	if err != nil {
		return err
	}
	sub := s.Lab.Subnet()
	first := sub.Addr().Next().Next() // .2 onwards; .1 is the bridge
	for range 98 {
		first = first.Next()
	}
	last := first
	for range 99 {
		last = last.Next()
	}
	dhcp := []string{"--dhcp", "--dhcp-interface", s.Lab.Interface(), "--dhcp-range", first.String() + "-" + last.String()}
	joinAPI := s.Lab.APIServerURL()
	switch {
	case s.o.NoDHCP:
		// Without DHCP nothing names the server's address: say it.
		dhcp = []string{"--http-base-url", s.httpBaseURL()}
	case s.o.IPv6:
		// DHCPv6 only; each script's URLs are those of the address it was
		// asked at (IPv6), and the kubelets join at the IPv6 forwarder.
		first6, last6 := Subnet6.Addr(), Subnet6.Addr()
		for range 0x100 {
			first6 = first6.Next()
		}
		for range 0x1ff {
			last6 = last6.Next()
		}
		dhcp = []string{"--dhcp6-interface", s.Lab.Interface(), "--dhcp6-range", first6.String() + "-" + last6.String()}
		joinAPI = s.Lab.APIServerURL6()
	}
	args := append([]string{"serve", "--kubeconfig", s.NetnsKubeconfig, "--controllers", "none",
		"--leader-elect=false", "--metrics-bind-address", "0", "--health-probe-bind-address", "0", "--log-format", "text"}, dhcp...)
	args = append(args, "--tftp", "--http-boot", "--artifact-dir", filepath.Join(s.o.Dir, "artifacts"), "--join-api-server", joinAPI,
		// UEFI HTTP boot clients of HTTPBoot Hosts get /ipxe/snponly.efi
		// (Debian's ipxe); PXE clients and PXE Hosts are answered as before.
		"--http-ipxe-dir", "/usr/lib/ipxe")
	cmd := s.Lab.RunInNetns(s.ctx, s.o.Anvil, append(args, s.tlsArgs()...)...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		return fmt.Errorf("stack: starting the network services: %w", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); f.Close(); close(done) }()
	s.netboot, s.netbootDone = cmd, done
	return nil
}

// httpBaseURL is the boot HTTP server (port 80 on the lab's bridge) as
// the hosts and their BMCs reach it.
func (s *Stack) httpBaseURL() string {
	if s.o.TLS {
		return "https://" + s.Lab.BridgeIP().String()
	}
	return "http://" + s.Lab.BridgeIP().String()
}

// HostsCSV writes the lab's Hosts (all, or the named ones) for `anvil
// hosts import`. The file holds BMC passwords: mode 0600.
func (s *Stack) HostsCSV(path string, names ...string) error {
	var all bytes.Buffer
	if err := s.Lab.WriteHostsCSV(&all); err != nil {
		return err
	}
	rows, err := csv.NewReader(&all).ReadAll()
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	w := csv.NewWriter(f)
	for i, r := range rows {
		if i == 0 || len(names) == 0 || slices.Contains(names, r[0]) {
			_ = w.Write(r)
		}
	}
	w.Flush()
	return w.Error()
}

// Anvil runs the anvil CLI against the stack (KUBECONFIG set) and returns
// its combined output.
func (s *Stack) Anvil(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, s.o.Anvil, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+s.Kubeconfig)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// Stop stops both anvil processes, the VMs and the control plane.
func (s *Stack) Stop() {
	_ = s.KillControllers()
	if s.netboot != nil && s.netboot.Process != nil {
		_ = s.netboot.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.netbootDone:
		case <-time.After(10 * time.Second):
			_ = s.netboot.Process.Kill()
		}
	}
	if s.Lab != nil {
		_ = s.Lab.Close()
	}
	if s.CP != nil {
		s.CP.Stop()
	}
}
