package machine_test

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/internal/netguard"
	"anvil.dev/anvil/machine"
	"anvil.dev/anvil/test/envtest"
	"anvil.dev/anvil/test/need"
)

// startClassEnv runs a real API server and a manager with only the
// ClassReconciler, for this test alone (the package's other tests may have
// their own TestMain; this one does not depend on it).
func startClassEnv(t *testing.T) *envtest.Env {
	t.Helper()
	env, err := envtest.Start()
	if err != nil {
		need.OrSkip(t, "API server not available: %v", err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	ctx, cancel := context.WithCancel(context.Background())
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: ptr.To(true)}}) // one manager per test
	if err != nil {
		t.Fatal(err)
	}
	r := &machine.ClassReconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("anvil-machineclass")}
	if err := r.SetupWithManager(ctx, mgr); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = mgr.Start(ctx)
	}()
	t.Cleanup(func() { cancel(); <-done })
	return env
}

func loadExample(t *testing.T, file string) *metalv1.MachineClass {
	t.Helper()
	root, err := envtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "deploy", "examples", file))
	if err != nil {
		t.Fatal(err)
	}
	mc := &metalv1.MachineClass{}
	if err := yaml.UnmarshalStrict(b, mc); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return mc
}

// waitConfigValid waits until the class's ConfigValid condition is for its
// current generation and has status want.
func waitConfigValid(t *testing.T, c client.Client, key client.ObjectKey, want metav1.ConditionStatus) *metalv1.MachineClass {
	t.Helper()
	mc := &metalv1.MachineClass{}
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, key, mc); err != nil {
			return false, nil
		}
		cond := meta.FindStatusCondition(mc.Status.Conditions, metalv1.ConditionConfigValid)
		return cond != nil && cond.ObservedGeneration == mc.Generation && cond.Status == want, nil
	})
	if err != nil {
		t.Fatalf("MachineClass %s never ConfigValid=%s; status %+v", key, want, mc.Status)
	}
	return mc
}

func classEvents(t *testing.T, c client.Client, ns, name string) []eventsv1.Event {
	t.Helper()
	var l eventsv1.EventList
	if err := c.List(context.Background(), &l, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var out []eventsv1.Event
	for _, e := range l.Items {
		if e.Regarding.Kind == "MachineClass" && e.Regarding.Name == name {
			out = append(out, e)
		}
	}
	return out
}

func TestClassReconciler(t *testing.T) {
	env := startClassEnv(t)
	ctx := context.Background()
	ns := env.Namespace(t)

	t.Run("examples are valid", func(t *testing.T) {
		for _, file := range []string{"machineclass-fcos.yaml", "machineclass-flatcar.yaml", "machineclass-cloudinit.yaml"} {
			t.Run(file, func(t *testing.T) {
				mc := loadExample(t, file)
				mc.Namespace = ns
				if err := env.Client.Create(ctx, mc); err != nil {
					t.Fatal(err)
				}
				got := waitConfigValid(t, env.Client, client.ObjectKeyFromObject(mc), metav1.ConditionTrue)
				if got.Status.ConfigHash != machine.ConfigHash(got.Spec.Config) || got.Status.ObservedGeneration != got.Generation {
					t.Fatalf("status %+v", got.Status)
				}
				if c := meta.FindStatusCondition(got.Status.Conditions, metalv1.ConditionConfigValid); c.Reason != metalv1.ReasonValid {
					t.Fatalf("reason %q", c.Reason)
				}
			})
		}
	})

	const head = "variant: fcos\nversion: 1.5.0\nstorage:\n  files:\n"
	broken := []struct {
		name     string
		template string
		want     []string // parts of the condition message
	}{
		{"butane YAML syntax", head + "    - path: /etc/hostname\n      contents:\n        inline: {{ .Hostname }}\n     mode: 0644\n", []string{"butane", "line 8"}},
		{"unclosed template action", head + "    - path: /etc/{{ .Hostname\n", []string{"template", "line 5"}},
		{"relative path", head + "    - path: etc/hostname\n      contents:\n        inline: {{ .Hostname }}\n", []string{"line 5", "path not absolute"}},
		{"unknown variable", head + "    - path: /etc/hostname\n      contents:\n        inline: {{ .Join.Tokn }}\n", []string{"line 7", "Tokn"}},
	}
	for i, tc := range broken {
		t.Run("broken then fixed: "+tc.name, func(t *testing.T) {
			mc := loadExample(t, "machineclass-fcos.yaml")
			mc.Namespace, mc.Name = ns, "broken-"+string(rune('a'+i))
			mc.Spec.Config.Template = tc.template
			if err := env.Client.Create(ctx, mc); err != nil {
				t.Fatal(err)
			}
			key := client.ObjectKeyFromObject(mc)
			got := waitConfigValid(t, env.Client, key, metav1.ConditionFalse)
			c := meta.FindStatusCondition(got.Status.Conditions, metalv1.ConditionConfigValid)
			if c.Reason != metalv1.ReasonTemplateError {
				t.Fatalf("reason %q, want %q", c.Reason, metalv1.ReasonTemplateError)
			}
			for _, w := range tc.want {
				if !strings.Contains(c.Message, w) {
					t.Fatalf("message %q does not contain %q", c.Message, w)
				}
			}
			if got.Status.ConfigHash != machine.ConfigHash(got.Spec.Config) {
				t.Fatal("configHash is not the hash of the checked template")
			}

			// Fixing the template flips it back.
			fixed := loadExample(t, "machineclass-fcos.yaml")
			got.Spec.Config.Template = fixed.Spec.Config.Template
			if err := env.Client.Update(ctx, got); err != nil {
				t.Fatal(err)
			}
			ok := waitConfigValid(t, env.Client, key, metav1.ConditionTrue)
			if ok.Status.ConfigHash != machine.ConfigHash(fixed.Spec.Config) {
				t.Fatal("configHash did not follow the fix")
			}
			// One Warning for the break, one Normal for the fix.
			err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
				var warn, normal bool
				for _, e := range classEvents(t, env.Client, ns, mc.Name) {
					warn = warn || (e.Type == corev1.EventTypeWarning && e.Reason == metalv1.ReasonTemplateError && strings.Contains(e.Note, tc.want[0]))
					normal = normal || (e.Type == corev1.EventTypeNormal && e.Reason == metalv1.ReasonValid)
				}
				return warn && normal, nil
			})
			if err != nil {
				t.Fatalf("events %+v", classEvents(t, env.Client, ns, mc.Name))
			}
		})
	}
}

// waitCondition waits until the class's condition typ is for its current
// generation.
func waitCondition(t *testing.T, c client.Client, key client.ObjectKey, typ string) *metav1.Condition {
	t.Helper()
	mc := &metalv1.MachineClass{}
	var cond *metav1.Condition
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, key, mc); err != nil {
			return false, nil
		}
		cond = meta.FindStatusCondition(mc.Status.Conditions, typ)
		return cond != nil && cond.ObservedGeneration == mc.Generation, nil
	})
	if err != nil {
		t.Fatalf("MachineClass %s never got %s for its generation; status %+v", key, typ, mc.Status)
	}
	return cond
}

// Artifact URLs on loopback, link-local or metadata addresses are refused
// (the boot servers would not fetch them): the class says which field and
// which flag opens it, and the token in a URL is not repeated.
func TestClassArtifactURLGuard(t *testing.T) {
	env := startClassEnv(t)
	ctx := context.Background()
	ns := env.Namespace(t)

	mc := loadExample(t, "machineclass-cloudinit.yaml")
	mc.Namespace, mc.Name = ns, "guarded"
	if err := env.Client.Create(ctx, mc); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(mc)
	if c := waitCondition(t, env.Client, key, metalv1.ConditionArtifactURLsAllowed); c.Status != metav1.ConditionTrue {
		t.Fatalf("public URLs: %+v", c)
	}

	if err := env.Client.Get(ctx, key, mc); err != nil {
		t.Fatal(err)
	}
	mc.Spec.Kernel.URL = "http://169.254.169.254/latest/meta-data/iam?token=s3cret"
	mc.Spec.Initrds[0].URL = "http://127.0.0.1:8081/readyz"
	if err := env.Client.Update(ctx, mc); err != nil {
		t.Fatal(err)
	}
	c := waitCondition(t, env.Client, key, metalv1.ConditionArtifactURLsAllowed)
	if c.Status != metav1.ConditionFalse || c.Reason != metalv1.ReasonAddressRefused {
		t.Fatalf("refused URLs: %+v", c)
	}
	for _, want := range []string{"spec.kernel.url", "169.254.169.254", "metadata", "spec.initrds[0].url", "127.0.0.1 is loopback", "--artifact-allow-cidrs"} {
		if !strings.Contains(c.Message, want) {
			t.Errorf("message %q does not contain %q", c.Message, want)
		}
	}
	if strings.Contains(c.Message, "s3cret") || strings.Contains(c.Message, "spec.image") {
		t.Errorf("message %q names what it should not", c.Message)
	}
	// The template is still valid: ConfigValid is not mixed up with it.
	waitConfigValid(t, env.Client, key, metav1.ConditionTrue)
}

// An admin's --artifact-allow-cidrs opens exactly the prefixes it names.
func TestClassArtifactURLGuardAllow(t *testing.T) {
	r := &machine.ClassReconciler{ArtifactGuard: netguard.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}}
	mc := loadExample(t, "machineclass-cloudinit.yaml")
	mc.Spec.Kernel.URL = "http://127.0.0.1:9000/k"
	if c := r.CheckArtifactURLs(mc); c.Status != metav1.ConditionTrue {
		t.Fatalf("allowed loopback: %+v", c)
	}
	mc.Spec.Kubelets[0].URL = "https://[fe80::1]/kubelet"
	if c := r.CheckArtifactURLs(mc); c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, "spec.kubelets[0].url: fe80::1 is link-local") {
		t.Fatalf("link-local kubelet: %+v", c)
	}
}
