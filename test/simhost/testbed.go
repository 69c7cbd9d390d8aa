package simhost

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/test/need"
	"anvil.dev/anvil/test/redfishsim"
)

// TestbedOptions describe what a test of Anvil on simulated hosts needs
// before its hosts run: the anvil binary, a kubeconfig, a Redfish emulator
// with a system per host and the BMC Secret.
type TestbedOptions struct {
	// Client creates the Secret; Namespace is the test's. Required.
	Client    client.Client
	Namespace string
	// WriteKubeconfig writes an admin kubeconfig into a directory and
	// returns its path (test/envtest's Env.WriteKubeconfig). Required.
	WriteKubeconfig func(dir string) (string, error)
	// Hosts is the number of emulated systems: sys-0, sys-1, ... with the
	// MACs of MAC(i), powered off.
	Hosts int
	// KeepLogsEnv names an environment variable that, when set, is a
	// directory to keep the processes' logs in (debugging).
	KeepLogsEnv string
}

// Testbed is that, ready for StartAnvil.
type Testbed struct {
	Dir, Binary, Kubeconfig string
	// Artifacts is the HTTP boot server's --artifact-dir (ClassOptions).
	Artifacts string
	BMCs      *redfishsim.Server
	Anvil     *Anvil
}

// NewTestbed builds anvil, writes the kubeconfig, starts the Redfish
// emulator (50 ms per power change) and creates the Secret "bmc" with its
// credentials. Everything stops when the test ends.
func NewTestbed(t testing.TB, ctx context.Context, o TestbedOptions) *Testbed {
	t.Helper()
	b := &Testbed{Dir: t.TempDir()}
	if d := os.Getenv(o.KeepLogsEnv); o.KeepLogsEnv != "" && d != "" {
		b.Dir = d
		_ = os.MkdirAll(d, 0o755)
	}
	root, err := need.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	b.Binary = filepath.Join(b.Dir, "anvil")
	if err := BuildAnvil(ctx, root, b.Binary); err != nil {
		t.Fatal(err)
	}
	if b.Kubeconfig, err = o.WriteKubeconfig(b.Dir); err != nil {
		t.Fatal(err)
	}
	systems := make([]redfishsim.SystemOptions, o.Hosts)
	for i := range systems {
		systems[i] = redfishsim.SystemOptions{ID: fmt.Sprintf("sys-%d", i), PowerState: "Off", MACs: []string{MAC(i)}}
	}
	b.BMCs = redfishsim.Start(t, redfishsim.Options{MockupDir: need.RedfishMockup(t), Systems: systems, PowerDelay: 50 * time.Millisecond})
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "bmc", Namespace: o.Namespace},
		StringData: map[string]string{metalv1.CredentialsUsernameKey: b.BMCs.Username(), metalv1.CredentialsPasswordKey: b.BMCs.Password()}}
	if err := o.Client.Create(ctx, secret); err != nil {
		t.Fatalf("creating the BMC Secret: %v", err)
	}
	b.Artifacts = filepath.Join(b.Dir, "artifacts")
	return b
}

// BMCAddress is the Redfish address of emulated system i.
func (b *Testbed) BMCAddress(i int) string {
	return "redfish+" + b.BMCs.URL() + b.BMCs.SystemPath(fmt.Sprintf("sys-%d", i))
}

// StartAnvil starts both anvil serve processes with the controllers'
// extra flags. When the test ends they stop; a failed test logs their
// tails, and any test fails if a log shows the BMC password.
func (b *Testbed) StartAnvil(t testing.TB, ctx context.Context, controllerArgs ...string) *Anvil {
	t.Helper()
	a, err := StartAnvil(ctx, AnvilOptions{Binary: b.Binary, Kubeconfig: b.Kubeconfig, Dir: b.Dir, ArtifactDir: b.Artifacts, ControllerArgs: controllerArgs})
	if err != nil {
		t.Fatal(err)
	}
	b.Anvil = a
	t.Cleanup(func() {
		a.Stop()
		if t.Failed() {
			t.Logf("anvil controllers log (tail):\n%s", a.Controllers.LogTail(12000))
			t.Logf("anvil netboot log (tail):\n%s", a.Netboot.LogTail(3000))
		}
		for _, p := range []*Process{a.Controllers, a.Netboot} {
			if log, err := os.ReadFile(p.Log); err == nil && strings.Contains(string(log), b.BMCs.Password()) {
				t.Errorf("the BMC password appears in the %s log", p.Name)
			}
		}
	})
	return a
}
