// Package controlplane runs a real etcd and kube-apiserver on loopback under
// a data directory, for `anvil dev` and `make run`. State survives restarts:
// the PKI, etcd data and kubeconfig are kept in the directory.
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
	// ExtraSANs are more IPs the serving certificate must cover.
	ExtraSANs []net.IP
	Logger    logr.Logger
}

// ControlPlane is a running etcd and kube-apiserver.
type ControlPlane struct {
	opts       Options
	Kubeconfig string
	Config     *rest.Config
	// Endpoint is the API server URL as clients outside this process see it.
	Endpoint string
	CACert   string // path of the cluster CA certificate

	procs []*exec.Cmd
	done  []chan error
}

func (o *Options) defaults() {
	if o.BindAddress == "" {
		o.BindAddress = "127.0.0.1"
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
}

// Start brings up etcd and kube-apiserver and waits until the API server is
// ready. Cancel nothing; call Stop.
func Start(ctx context.Context, o Options) (*ControlPlane, error) {
	o.defaults()
	for _, b := range []string{"etcd", "kube-apiserver"} {
		if _, err := os.Stat(filepath.Join(o.BinDir, b)); err != nil {
			return nil, fmt.Errorf("%s not found in %s: run `make tools` first", b, o.BinDir)
		}
	}
	for _, d := range []string{"etcd", "logs"} {
		if err := os.MkdirAll(filepath.Join(o.Dir, d), 0o700); err != nil {
			return nil, err
		}
	}
	for _, port := range []int{o.APIServerPort, o.EtcdClientPort, o.EtcdPeerPort} {
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
	cp := &ControlPlane{opts: o, CACert: p.path("ca.crt"), Endpoint: "https://" + net.JoinHostPort(advertise, strconv.Itoa(o.APIServerPort))}

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
	deadline := time.Now().Add(timeout)
	url := cp.Config.Host + "/readyz"
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
	return fmt.Errorf("kube-apiserver not ready after %s; see %s", timeout, filepath.Join(cp.opts.Dir, "logs"))
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
	ca, err := os.ReadFile(p.path("ca.crt"))
	if err != nil {
		return err
	}
	crt, err := os.ReadFile(p.path("admin.crt"))
	if err != nil {
		return err
	}
	key, err := os.ReadFile(p.path("admin.key"))
	if err != nil {
		return err
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["anvil"] = &clientcmdapi.Cluster{Server: endpoint, CertificateAuthorityData: ca}
	cfg.AuthInfos["anvil-admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: crt, ClientKeyData: key}
	cfg.Contexts["anvil"] = &clientcmdapi.Context{Cluster: "anvil", AuthInfo: "anvil-admin", Namespace: "default"}
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
