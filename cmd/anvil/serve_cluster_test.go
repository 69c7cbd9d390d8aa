package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"anvil.dev/anvil/test/need"
)

// `anvil serve` against a cluster elects a leader through a Lease.
func TestServeElectsLeader(t *testing.T) {
	dir := t.TempDir()
	kc, err := env.WriteKubeconfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	ns := env.Namespace(t)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := newRootCommand()
	out := &lockedBuffer{}
	cmd.SetOut(out)
	cmd.SetErr(out)
	cmd.SetArgs([]string{"serve", "--kubeconfig", kc, "--leader-election-namespace", ns, "--metrics-bind-address", "0",
		"--health-probe-bind-address", fmt.Sprintf("127.0.0.1:%d", need.FreePort(t))})
	errc := make(chan error, 1)
	go func() { errc <- cmd.ExecuteContext(ctx) }()
	defer func() {
		cancel()
		<-errc
	}()
	var lease coordinationv1.Lease
	if err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "anvil.metal.anvil.dev"}, &lease)
		return err == nil && lease.Spec.HolderIdentity != nil && *lease.Spec.HolderIdentity != "", nil
	}); err != nil {
		t.Fatalf("no leader election Lease: %v\n%s", err, out.String())
	}
}

// `anvil serve --controllers=none --http-boot` is what the DaemonSet runs:
// no leader election, the HTTP boot server answering from the cache.
func TestServeNetworkServicesOnly(t *testing.T) {
	kc, err := env.WriteKubeconfig(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	httpPort := need.FreePort(t)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := newRootCommand()
	out := &lockedBuffer{}
	cmd.SetOut(out)
	cmd.SetErr(out)
	cmd.SetArgs([]string{"serve", "--kubeconfig", kc, "--leader-elect=false", "--controllers=none", "--metrics-bind-address", "0",
		"--health-probe-bind-address", fmt.Sprintf("127.0.0.1:%d", need.FreePort(t)),
		"--http-boot", "--http-addr", fmt.Sprintf("127.0.0.1:%d", httpPort), "--artifact-dir", t.TempDir()})
	errc := make(chan error, 1)
	go func() { errc <- cmd.ExecuteContext(ctx) }()
	defer func() {
		cancel()
		<-errc
	}()
	var body string
	if err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/boot/52-54-00-ee-00-01.ipxe", httpPort))
		if err != nil {
			return false, nil
		}
		defer resp.Body.Close()
		b := new(bytes.Buffer)
		_, _ = b.ReadFrom(resp.Body)
		body = b.String()
		return resp.StatusCode == 200, nil
	}); err != nil {
		t.Fatalf("HTTP boot never answered: %v\n%s", err, out.String())
	}
	// No DHCP, so no address is bound to the MAC: the answer anyone gets
	// for a MAC that is not theirs, whatever its state (exit to disk).
	if !strings.HasPrefix(body, "#!ipxe") || !strings.HasSuffix(body, "\nexit 1\n") {
		t.Fatalf("script for an unknown MAC:\n%s", body)
	}
	// The agent API rides on the same server and wants a credential.
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/agent/v1/actions", httpPort))
	if err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("agent API without a credential: %v %v", err, resp)
	}
	resp.Body.Close()
	// Unknown controller names are refused with the list of known ones.
	bad := newRootCommand()
	bad.SetArgs([]string{"serve", "--kubeconfig", kc, "--controllers=hosts"})
	if err := bad.ExecuteContext(context.Background()); err == nil || !strings.Contains(err.Error(), `unknown controller "hosts"`) {
		t.Fatalf("bad --controllers: %v", err)
	}
}
