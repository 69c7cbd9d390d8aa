package controlplane

import (
	"context"
	"crypto/tls"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// startControllerManager runs kube-controller-manager against the API server
// and waits for its healthz. It signs CSRs with the control plane's CA, which
// is also the API server's --client-ca-file, so signed kubelet client
// certificates authenticate.
func (cp *ControlPlane) startControllerManager(ctx context.Context, p pki) error {
	o := cp.opts.ControllerManager
	kc := filepath.Join(cp.opts.Dir, "controller-manager.kubeconfig")
	if err := writeKubeconfigFor(kc, cp.Endpoint, p, "controller-manager", "system:kube-controller-manager"); err != nil {
		return err
	}
	certDir := filepath.Join(cp.opts.Dir, "controller-manager")
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		return err
	}
	args := []string{
		"--kubeconfig=" + kc,
		// Delegated authn/authz of its own /metrics; /healthz is always allowed.
		"--authentication-kubeconfig=" + kc, "--authorization-kubeconfig=" + kc,
		"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(o.Port),
		"--cert-dir=" + certDir,
		"--leader-elect=false",
		"--use-service-account-credentials=false",
		"--controllers=" + strings.Join(o.Controllers, ","),
		"--cluster-signing-cert-file=" + p.path("ca.crt"), "--cluster-signing-key-file=" + p.path("ca.key"),
		"--root-ca-file=" + p.path("ca.crt"),
		"--service-account-private-key-file=" + p.path("sa.key"),
		"--profiling=false", "--v=1",
	}
	args = append(args, o.ExtraArgs...)
	if err := cp.spawn("kube-controller-manager", args); err != nil {
		return err
	}
	cp.ControllerManagerPort = o.Port
	// Its serving certificate is self-signed in --cert-dir; healthz carries
	// nothing secret, so skipping verification here is harmless.
	hc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // local healthz probe
	return cp.waitHealthy(ctx, hc, "https://127.0.0.1:"+strconv.Itoa(o.Port)+"/healthz", "kube-controller-manager", 90*time.Second)
}
