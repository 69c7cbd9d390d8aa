// Package nodecheck verifies, from the host, that its Node reports the
// expected kubelet version and is Ready. It reads the Node with the
// kubelet's own kubeconfig: the Node authorizer lets a kubelet get its own
// Node, so the agent needs no credentials of its own for the cluster.
package nodecheck

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Options configure a Checker.
type Options struct {
	// Kubeconfig is the kubelet's kubeconfig, e.g. /etc/kubernetes/kubelet.conf.
	// It is read on every Check, so rotated client certificates are used.
	Kubeconfig string
	// NodeName is the host's Node.
	NodeName string
}

// Checker implements kubelet.NodeChecker.
type Checker struct {
	opts Options
}

// New validates opts.
func New(opts Options) (*Checker, error) {
	if opts.Kubeconfig == "" || opts.NodeName == "" {
		return nil, errors.New("nodecheck: Kubeconfig and NodeName are required")
	}
	return &Checker{opts: opts}, nil
}

// Check reads the Node once: nil when status.nodeInfo.kubeletVersion is
// version and the Ready condition is True.
func (c *Checker) Check(ctx context.Context, version string) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", c.opts.Kubeconfig)
	if err != nil {
		return fmt.Errorf("loading the kubelet kubeconfig: %w", err)
	}
	cfg.UserAgent = "anvil-agent"
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return fmt.Errorf("kubelet kubeconfig: %w", err)
	}
	defer hc.CloseIdleConnections()
	u := strings.TrimSuffix(cfg.Host, "/") + cfg.APIPath + "/api/v1/nodes/" + url.PathEscape(c.opts.NodeName)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("reading node %s: %w", c.opts.NodeName, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return fmt.Errorf("reading node %s: %w", c.opts.NodeName, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("reading node %s: API server answered %d", c.opts.NodeName, resp.StatusCode)
	}
	var n corev1.Node
	if err := json.Unmarshal(body, &n); err != nil {
		return fmt.Errorf("decoding node %s: %w", c.opts.NodeName, err)
	}
	return Verify(&n, version)
}

// Verify is the verdict on a Node object.
func Verify(n *corev1.Node, version string) error {
	if got := n.Status.NodeInfo.KubeletVersion; got != version {
		return fmt.Errorf("node %s reports kubelet %q, want %q", n.Name, got, version)
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			if c.Status == corev1.ConditionTrue {
				return nil
			}
			return fmt.Errorf("node %s is not Ready (%s: %s)", n.Name, c.Reason, c.Message)
		}
	}
	return fmt.Errorf("node %s has no Ready condition", n.Name)
}
