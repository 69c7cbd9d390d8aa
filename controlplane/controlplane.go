// Package controlplane runs a real etcd and kube-apiserver on loopback under
// a data directory, for `anvil dev`, `make run` and tests. State survives
// restarts: the PKI, etcd data and kubeconfig are kept in the directory.
//
// Optionally it also runs kube-controller-manager with the controllers a real
// cluster runs for node joins (Options.ControllerManager): without its
// csrsigning controller an approved CSR is never signed, and without its
// tokencleaner expired bootstrap tokens are never removed.
package controlplane

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Options configure the local control plane.
type Options struct {
	// Dir holds pki/, etcd/, logs/ and kubeconfig.
	Dir string
	// BinDir holds the etcd and kube-apiserver binaries (hack/tools builds them).
	BinDir string
	// BindAddress of the API server; loopback unless a lab needs VMs to reach it.
	BindAddress string
	// APIServerPort, EtcdClientPort and EtcdPeerPort default to 6443, 2379, 2380.
	APIServerPort  int
	EtcdClientPort int
	EtcdPeerPort   int
	// RandomPorts picks free loopback ports for every port left 0 (API
	// server, etcd, controller manager), so tests can run their own control
	// plane next to `anvil dev` and each other.
	RandomPorts bool
	// ExtraSANs are more IPs the serving certificate must cover.
	ExtraSANs []net.IP
	// ControllerManager, if set, also runs kube-controller-manager.
	ControllerManager *ControllerManagerOptions
	Logger            logr.Logger
}

// ControllerManagerOptions configure kube-controller-manager.
type ControllerManagerOptions struct {
	// Controllers to run; DefaultControllers if empty. Names are
	// kube-controller-manager's (--controllers), aliases included.
	Controllers []string
	// Port of its secure (healthz/metrics) endpoint on 127.0.0.1; 10257 by
	// default, random with Options.RandomPorts.
	Port int
	// ExtraArgs are appended to its command line (later flags win).
	ExtraArgs []string
}

// DefaultControllers are the kube-controller-manager controllers a real
// cluster runs that matter for Anvil's flows:
//
//   - certificatesigningrequest-signing-controller (csrsigning) signs CSRs
//     once approved, for the kubelet client and serving signers among others;
//   - certificatesigningrequest-cleaner-controller (csrcleaner) deletes old
//     CSRs;
//   - token-cleaner-controller (tokencleaner) deletes expired bootstrap tokens;
//   - garbage-collector-controller deletes objects whose owners are gone;
//   - namespace-controller finalizes deleted namespaces;
//   - serviceaccount-controller and serviceaccount-token-controller give
//     namespaces their default ServiceAccount and token Secrets;
//   - root-ca-certificate-publisher-controller publishes kube-root-ca.crt;
//   - replicaset-controller keeps workloads' pods (drains evict them and
//     their replacements come back elsewhere), deployment-controller their
//     Deployments' ReplicaSets;
//   - disruption-controller computes PodDisruptionBudgets' allowed
//     disruptions, which evictions during a drain obey.
//
// The csrapproving controller is deliberately absent: Anvil is the approver
// of kubelet CSRs, and upstream's approver would approve any node name for a
// bootstrap token whose group RBAC allows it.
var DefaultControllers = []string{
	"certificatesigningrequest-signing-controller",
	"certificatesigningrequest-cleaner-controller",
	"token-cleaner-controller",
	"garbage-collector-controller",
	"namespace-controller",
	"serviceaccount-controller",
	"serviceaccount-token-controller",
	"root-ca-certificate-publisher-controller",
	"replicaset-controller",
	"deployment-controller",
	"disruption-controller",
}

// ControlPlane is a running etcd and kube-apiserver.
type ControlPlane struct {
	opts       Options
	Kubeconfig string
	Config     *rest.Config
	// Endpoint is the API server URL as clients outside this process see it.
	Endpoint string
	CACert   string // path of the cluster CA certificate
	// CAKey is the path of the CA key; kube-controller-manager signs CSRs
	// with it. Tests use it to mint client certificates.
	CAKey string
	// Ports actually used (after defaults and RandomPorts).
	APIServerPort, EtcdClientPort, EtcdPeerPort int
	// ControllerManagerPort is 0 unless kube-controller-manager runs.
	ControllerManagerPort int

	procs []*exec.Cmd
	done  []chan error
}

func (o *Options) defaults() error {
	if o.BindAddress == "" {
		o.BindAddress = "127.0.0.1"
	}
	if o.RandomPorts {
		// Hold every listener until all ports are picked, so no two
		// components get the same port.
		var held []net.Listener
		defer func() {
			for _, l := range held {
				l.Close()
			}
		}()
		pick := func(p *int, addr string) error {
			if *p != 0 {
				return nil
			}
			l, err := listenFree(addr)
			if err != nil {
				return err
			}
			held = append(held, l)
			*p = l.Addr().(*net.TCPAddr).Port
			return nil
		}
		// etcd always listens on loopback; the API server on BindAddress.
		if err := pick(&o.APIServerPort, o.BindAddress); err != nil {
			return err
		}
		if err := pick(&o.EtcdClientPort, "127.0.0.1"); err != nil {
			return err
		}
		if err := pick(&o.EtcdPeerPort, "127.0.0.1"); err != nil {
			return err
		}
		if o.ControllerManager != nil {
			if err := pick(&o.ControllerManager.Port, "127.0.0.1"); err != nil {
				return err
			}
		}
	}
	if o.APIServerPort == 0 {
		o.APIServerPort = 6443
	}
	if o.EtcdClientPort == 0 {
		o.EtcdClientPort = 2379
	}
	if o.EtcdPeerPort == 0 {
		o.EtcdPeerPort = 2380
	}
	if o.ControllerManager != nil {
		if o.ControllerManager.Port == 0 {
			o.ControllerManager.Port = 10257
		}
		if len(o.ControllerManager.Controllers) == 0 {
			o.ControllerManager.Controllers = DefaultControllers
		}
	}
	return nil
}

// listenFree listens on a free TCP port of addr. Another process can take
// the port between closing this listener and the component binding it; the
// window is short and a clash fails startup loudly rather than silently.
func listenFree(addr string) (net.Listener, error) {
	if addr == "0.0.0.0" || addr == "" {
		addr = "127.0.0.1"
	}
	l, err := net.Listen("tcp", net.JoinHostPort(addr, "0"))
	if err != nil {
		return nil, fmt.Errorf("finding a free port: %w", err)
	}
	return l, nil
}

// Start brings up etcd and kube-apiserver (and kube-controller-manager when
// Options.ControllerManager is set) and waits until they are ready. Cancel nothing; call Stop.
func Start(ctx context.Context, o Options) (*ControlPlane, error) {
	if o.ControllerManager != nil {
		cm := *o.ControllerManager // do not write defaults into the caller's struct
		o.ControllerManager = &cm
	}
	if err := o.defaults(); err != nil {
		return nil, err
	}
	bins := []string{"etcd", "kube-apiserver"}
	if o.ControllerManager != nil {
		bins = append(bins, "kube-controller-manager")
	}
	for _, b := range bins {
		if _, err := os.Stat(filepath.Join(o.BinDir, b)); err != nil {
			return nil, fmt.Errorf("%s not found in %s: run `make tools` first", b, o.BinDir)
		}
	}
	for _, d := range []string{"etcd", "logs"} {
		if err := os.MkdirAll(filepath.Join(o.Dir, d), 0o700); err != nil {
			return nil, err
		}
	}
	ports := []int{o.APIServerPort, o.EtcdClientPort, o.EtcdPeerPort}
	if o.ControllerManager != nil {
		ports = append(ports, o.ControllerManager.Port)
	}
	for _, port := range ports {
		if err := portFree(port); err != nil {
			return nil, err
		}
	}
	advertise := o.BindAddress
	if advertise == "0.0.0.0" {
		advertise = "127.0.0.1"
	}
	ips := append([]net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.0.0.1")}, o.ExtraSANs...)
	p := pki{dir: filepath.Join(o.Dir, "pki")}
	if err := p.ensure(ips, []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"}); err != nil {
		return nil, fmt.Errorf("creating PKI: %w", err)
	}
	cp := &ControlPlane{
		opts: o, CACert: p.path("ca.crt"), CAKey: p.path("ca.key"),
		Endpoint:      "https://" + net.JoinHostPort(advertise, strconv.Itoa(o.APIServerPort)),
		APIServerPort: o.APIServerPort, EtcdClientPort: o.EtcdClientPort, EtcdPeerPort: o.EtcdPeerPort,
	}

	etcdURL := "http://127.0.0.1:" + strconv.Itoa(o.EtcdClientPort)
	peerURL := "http://127.0.0.1:" + strconv.Itoa(o.EtcdPeerPort)
	if err := cp.spawn("etcd", []string{
		"--name=anvil", "--data-dir=" + filepath.Join(o.Dir, "etcd"),
		"--listen-client-urls=" + etcdURL, "--advertise-client-urls=" + etcdURL,
		"--listen-peer-urls=" + peerURL, "--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=anvil=" + peerURL, "--log-level=warn",
		"--quota-backend-bytes=8589934592",
	}); err != nil {
		return nil, err
	}
	if err := cp.spawn("kube-apiserver", []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=" + o.BindAddress, "--advertise-address=" + advertise,
		"--secure-port=" + strconv.Itoa(o.APIServerPort),
		"--tls-cert-file=" + p.path("apiserver.crt"), "--tls-private-key-file=" + p.path("apiserver.key"),
		"--client-ca-file=" + p.path("ca.crt"),
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file=" + p.path("sa.pub"), "--service-account-signing-key-file=" + p.path("sa.key"),
		"--service-cluster-ip-range=10.0.0.0/24",
		"--authorization-mode=Node,RBAC", "--enable-bootstrap-token-auth=true",
		// NodeRestriction is on in every real cluster: a kubelet may only
		// touch its own Node, so node credentials must be bound to names.
		"--enable-admission-plugins=NodeRestriction",
		"--allow-privileged=true", "--profiling=false", "--v=0",
		// No kubernetes Service endpoints to maintain for a loopback API server.
		"--endpoint-reconciler-type=none",
	}); err != nil {
		cp.Stop()
		return nil, err
	}
	cp.Kubeconfig = filepath.Join(o.Dir, "kubeconfig")
	if err := writeKubeconfig(cp.Kubeconfig, cp.Endpoint, p); err != nil {
		cp.Stop()
		return nil, err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", cp.Kubeconfig)
	if err != nil {
		cp.Stop()
		return nil, err
	}
	cp.Config = cfg
	if err := cp.waitReady(ctx, 90*time.Second); err != nil {
		cp.Stop()
		return nil, err
	}
	if o.ControllerManager != nil {
		if err := cp.startControllerManager(ctx, p); err != nil {
			cp.Stop()
			return nil, err
		}
	}
	return cp, nil
}

func portFree(port int) error {
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		return fmt.Errorf("port %d is in use (another `anvil dev` running?): %w", port, err)
	}
	return l.Close()
}

func (cp *ControlPlane) spawn(name string, args []string) error {
	logPath := filepath.Join(cp.opts.Dir, "logs", name+".log")
	lf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	cmd := exec.Command(filepath.Join(cp.opts.BinDir, name), args...)
	cmd.Stdout, cmd.Stderr = lf, lf
	// Die with us if we are killed hard, so no orphan holds the ports.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		lf.Close()
		return fmt.Errorf("starting %s: %w", name, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait(); lf.Close() }()
	cp.procs = append(cp.procs, cmd)
	cp.done = append(cp.done, done)
	cp.opts.Logger.Info("started", "component", name, "pid", cmd.Process.Pid, "log", logPath)
	return nil
}

func (cp *ControlPlane) waitReady(ctx context.Context, timeout time.Duration) error {
	tc, err := rest.TLSConfigFor(cp.Config)
	if err != nil {
		return err
	}
	hc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: tc}}
	return cp.waitHealthy(ctx, hc, cp.Config.Host+"/readyz", "kube-apiserver", timeout)
}

// waitHealthy polls url until it answers 200, a component exits, or timeout.
func (cp *ControlPlane) waitHealthy(ctx context.Context, hc *http.Client, url, what string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		for i, d := range cp.done {
			select {
			case err := <-d:
				d <- err
				name := filepath.Base(cp.procs[i].Path)
				logPath := filepath.Join(cp.opts.Dir, "logs", name+".log")
				return fmt.Errorf("%s exited during startup (%v); last log lines of %s:\n%s", name, err, logPath, tail(logPath, 3))
			default:
			}
		}
		resp, err := hc.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return fmt.Errorf("%s not ready after %s; see %s", what, timeout, filepath.Join(cp.opts.Dir, "logs"))
}

// Stop terminates the API server, then etcd, and waits for both.
func (cp *ControlPlane) Stop() {
	for i := len(cp.procs) - 1; i >= 0; i-- {
		p := cp.procs[i]
		_ = p.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-cp.done[i]:
			cp.done[i] <- err
		case <-time.After(15 * time.Second):
			_ = p.Process.Kill()
			<-cp.done[i]
		}
	}
	cp.procs, cp.done = nil, nil
}

// Exited reports a component that stopped on its own, if any.
func (cp *ControlPlane) Exited() error {
	for i, d := range cp.done {
		select {
		case err := <-d:
			d <- err
			return fmt.Errorf("%s exited: %v", filepath.Base(cp.procs[i].Path), err)
		default:
		}
	}
	return nil
}

func writeKubeconfig(path, endpoint string, p pki) error {
	return writeKubeconfigFor(path, endpoint, p, "admin", "anvil-admin")
}

// writeKubeconfigFor writes a kubeconfig using the client certificate
// <leaf>.crt/<leaf>.key of p.
func writeKubeconfigFor(path, endpoint string, p pki, leaf, user string) error {
	ca, err := os.ReadFile(p.path("ca.crt"))
	if err != nil {
		return err
	}
	crt, err := os.ReadFile(p.path(leaf + ".crt"))
	if err != nil {
		return err
	}
	key, err := os.ReadFile(p.path(leaf + ".key"))
	if err != nil {
		return err
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["anvil"] = &clientcmdapi.Cluster{Server: endpoint, CertificateAuthorityData: ca}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{ClientCertificateData: crt, ClientKeyData: key}
	cfg.Contexts["anvil"] = &clientcmdapi.Context{Cluster: "anvil", AuthInfo: user, Namespace: "default"}
	cfg.CurrentContext = "anvil"
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return err
	}
	return os.Chmod(path, 0o600)
}

// tail returns the last n lines of a log file, for error messages.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
