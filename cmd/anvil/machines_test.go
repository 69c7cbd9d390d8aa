package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
)

// The tests play Anvil's Machine controller themselves: they write the
// status changes (and remove finalizers) that the CLI must follow.

// machinesCLI runs anvil in-process with ctx standing in for Ctrl-C.
func machinesCLI(ctx context.Context, out io.Writer, args ...string) error {
	root := newRootCommand()
	root.SetOut(out)
	root.SetErr(out)
	root.SetArgs(args)
	return root.ExecuteContext(ctx)
}

type machinesFixture struct {
	t      *testing.T
	ns, kc string
	c      client.Client
}

// newMachinesFixture makes a namespace with MachineClass "workers" that
// lists kubelets v1.36.4 and v1.37.2.
func newMachinesFixture(t *testing.T) *machinesFixture {
	t.Helper()
	kc, err := env.WriteKubeconfig(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := &machinesFixture{t: t, ns: env.Namespace(t), kc: kc, c: env.Client}
	zero := strings.Repeat("0", 64)
	mc := &metalv1.MachineClass{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "workers"},
		Spec: metalv1.MachineClassSpec{
			Kernel:  metalv1.Artifact{URL: "kernel", SHA256: zero},
			Initrds: []metalv1.Artifact{{URL: "initrd", SHA256: zero}},
			Config:  metalv1.ConfigTemplate{Format: "cloud-init", Template: "#cloud-config\n"},
			Kubelets: []metalv1.KubeletArtifact{
				{Version: "v1.37.2", Artifact: metalv1.Artifact{URL: "kubelet-1.37.2", SHA256: zero}},
				{Version: "v1.36.4", Artifact: metalv1.Artifact{URL: "kubelet-1.36.4", SHA256: zero}},
			},
		},
	}
	if err := f.c.Create(context.Background(), mc); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *machinesFixture) args(args ...string) []string {
	return append(args, "--kubeconfig", f.kc, "-n", f.ns)
}

func (f *machinesFixture) run(args ...string) (string, error) {
	f.t.Helper()
	var out bytes.Buffer
	err := machinesCLI(context.Background(), &out, f.args(args...)...)
	return out.String(), err
}

// start runs the CLI in the background; the channel yields its error.
func (f *machinesFixture) start(ctx context.Context, args ...string) (*lockedBuffer, <-chan error) {
	out := &lockedBuffer{}
	errc := make(chan error, 1)
	go func() { errc <- machinesCLI(ctx, out, f.args(args...)...) }()
	return out, errc
}

// result waits for a background CLI run to end.
func (f *machinesFixture) result(errc <-chan error, out *lockedBuffer) error {
	f.t.Helper()
	select {
	case err := <-errc:
		return err
	case <-time.After(2 * time.Minute):
		f.t.Fatalf("the CLI did not return; output so far:\n%s", out)
		return nil
	}
}

// eventually polls cond (bounded) and fails the test with what it waited for.
func (f *machinesFixture) eventually(what string, cond func() bool) {
	f.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			f.t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (f *machinesFixture) get(name string) (*metalv1.Machine, error) {
	var m metalv1.Machine
	err := f.c.Get(context.Background(), client.ObjectKey{Namespace: f.ns, Name: name}, &m)
	return &m, err
}

func (f *machinesFixture) waitExists(name string) {
	f.t.Helper()
	f.eventually("machine "+name+" to be created", func() bool { _, err := f.get(name); return err == nil })
}

func (f *machinesFixture) create(name string, labels map[string]string, finalizers ...string) *metalv1.Machine {
	f.t.Helper()
	m := &metalv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name, Labels: labels, Finalizers: finalizers},
		Spec:       metalv1.MachineSpec{MachineClassRef: metalv1.LocalObjectReference{Name: "workers"}, Version: "v1.37.2"},
	}
	if err := f.c.Create(context.Background(), m); err != nil {
		f.t.Fatal(err)
	}
	return m
}

// status plays the controller: it changes a Machine's status.
func (f *machinesFixture) status(name string, change func(*metalv1.MachineStatus)) {
	f.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		m, err := f.get(name)
		if err != nil {
			return err
		}
		change(&m.Status)
		return f.c.Status().Update(context.Background(), m)
	})
	if err != nil {
		f.t.Fatalf("updating status of %s: %v", name, err)
	}
}

// removeFinalizers plays the controller's last step of a deletion.
func (f *machinesFixture) removeFinalizers(name string) {
	f.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		m, err := f.get(name)
		if err != nil {
			return err
		}
		m.Finalizers = nil
		return f.c.Update(context.Background(), m)
	})
	if err != nil && !apierrors.IsNotFound(err) {
		f.t.Fatalf("removing finalizers of %s: %v", name, err)
	}
}

func setCond(typ string, status metav1.ConditionStatus, reason, msg string) func(*metalv1.MachineStatus) {
	return func(s *metalv1.MachineStatus) {
		meta.SetStatusCondition(&s.Conditions, metav1.Condition{Type: typ, Status: status, Reason: reason, Message: msg})
	}
}

// inOrder fails unless every want appears in out, each after the one before.
func wantInOrder(t *testing.T, out string, wants ...string) {
	t.Helper()
	rest := out
	for _, w := range wants {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Fatalf("output lacks %q (after the previous expected lines):\n%s", w, out)
		}
		rest = rest[i+len(w):]
	}
}

// tableRow finds the row of a table that starts with name.
func machineRow(t *testing.T, out, name string) string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] == name {
			return l
		}
	}
	t.Fatalf("no row for %s in:\n%s", name, out)
	return ""
}

func TestMachinesList(t *testing.T) {
	f := newMachinesFixture(t)
	if out, err := f.run("machines", "list"); err != nil || !strings.Contains(out, "No Machines found in namespace "+f.ns) {
		t.Fatalf("empty list: %v\n%s", err, out)
	}

	long := "host rack1-02 did not report from its network boot within 20m0s; check its console and the DHCP logs of the segment"
	f.create("d-upgrading", nil)
	f.create("a-ready", map[string]string{metalv1.LabelMachineSet: "ms1"})
	f.create("c-waiting", nil)
	f.create("b-failed", nil)
	f.status("a-ready", func(s *metalv1.MachineStatus) {
		s.Phase = metalv1.MachineRunning
		s.HostRef = &metalv1.LocalObjectReference{Name: "rack1-01"}
		s.NodeRef = &corev1.ObjectReference{Kind: "Node", Name: "node-a"}
		s.ProviderID = "anvil://0b9c7a52"
		s.Addresses = []metalv1.MachineAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.5"}, {Type: corev1.NodeHostName, Address: "node-a"}}
		s.Version = "v1.37.2"
		setCond(metalv1.ConditionReady, metav1.ConditionTrue, "NodeReady", "")(s)
	})
	f.status("b-failed", func(s *metalv1.MachineStatus) {
		s.Phase, s.FailureReason, s.FailureMessage = metalv1.MachineFailed, "BootTimeout", long
		setCond(metalv1.ConditionReady, metav1.ConditionFalse, "BootTimeout", "not ready")(s)
	})
	f.status("c-waiting", func(s *metalv1.MachineStatus) {
		s.Phase = metalv1.MachineWaitingForHardware
		s.HardwareRequest = &metalv1.HardwareRequest{ID: "T-42", URL: "https://tickets.example/T-42", State: metalv1.HardwareRequestFiled}
		setCond(metalv1.ConditionReady, metav1.ConditionFalse, "WaitingForHardware", "summary: not ready")(s)
		setCond(metalv1.ConditionInfrastructureReady, metav1.ConditionFalse, "WaitingForHardware", "no free Host matches gpu=true")(s)
	})
	f.status("d-upgrading", func(s *metalv1.MachineStatus) { s.Phase, s.Version = metalv1.MachineUpdating, "v1.36.4" })

	out, err := f.run("machines", "list")
	if err != nil {
		t.Fatal(err)
	}
	wantInOrder(t, out, "NAME", "PHASE", "HOST", "NODE", "VERSION", "READY", "AGE", "MESSAGE\n", "a-ready", "b-failed", "c-waiting", "d-upgrading")
	for _, tc := range []struct {
		name   string
		fields []string // the columns before AGE
		msg    string
	}{
		{"a-ready", []string{"a-ready", "Running", "rack1-01", "node-a", "v1.37.2", "True"}, ""},
		{"b-failed", []string{"b-failed", "Failed", "-", "-", "v1.37.2", "False"}, "BootTimeout: host rack1-02 did not report"},
		{"c-waiting", []string{"c-waiting", "WaitingForHardware", "-", "-", "v1.37.2", "False"}, "no free Host matches gpu=true"},
		{"d-upgrading", []string{"d-upgrading", "Updating", "-", "-", "v1.36.4->v1.37.2", "-"}, ""},
	} {
		row := machineRow(t, out, tc.name)
		if got := strings.Fields(row)[:6]; strings.Join(got, " ") != strings.Join(tc.fields, " ") {
			t.Errorf("row %s = %q, want columns %q", tc.name, row, tc.fields)
		}
		if !strings.Contains(row, tc.msg) {
			t.Errorf("row %s lacks message %q: %q", tc.name, tc.msg, row)
		}
	}
	if row := machineRow(t, out, "b-failed"); strings.Contains(row, "segment") || !strings.HasSuffix(row, "...") {
		t.Errorf("long message not truncated: %q", row)
	}

	wide, err := f.run("machines", "list", "-o", "wide")
	if err != nil {
		t.Fatal(err)
	}
	wantInOrder(t, wide, "AGE", "CLASS", "PROVIDER-ID", "ADDRESSES", "TICKET", "MESSAGE")
	wantInOrder(t, machineRow(t, wide, "a-ready"), "workers", "anvil://0b9c7a52", "10.0.0.5,node-a")
	wantInOrder(t, machineRow(t, wide, "c-waiting"), "workers", "T-42 (Filed) https://tickets.example/T-42", "no free Host matches")

	for _, args := range [][]string{{"-l", metalv1.LabelMachineSet + "=ms1"}, {"--machineset", "ms1"}} {
		out, err := f.run(append([]string{"machines", "list"}, args...)...)
		if err != nil || !strings.Contains(out, "a-ready") || strings.Contains(out, "b-failed") {
			t.Errorf("list %v: %v\n%s", args, err, out)
		}
	}
	if out, err := f.run("machines", "list", "-l", "nothing=here"); err != nil || !strings.Contains(out, "No Machines found in namespace "+f.ns+" matching nothing=here") {
		t.Errorf("list of no match: %v\n%s", err, out)
	}

	all, err := f.run("machines", "list", "-A")
	if err != nil || !strings.HasPrefix(all, "NAMESPACE") || !strings.Contains(all, f.ns) {
		t.Errorf("list -A: %v\n%s", err, all)
	}

	js, err := f.run("machines", "list", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var list metalv1.MachineList
	if err := json.Unmarshal([]byte(js), &list); err != nil {
		t.Fatalf("-o json is not a MachineList: %v\n%s", err, js)
	}
	if len(list.Items) != 4 || list.Kind != "MachineList" || list.Items[0].Name != "a-ready" || list.Items[0].APIVersion != "metal.anvil.dev/v1alpha1" ||
		list.Items[2].Status.HardwareRequest.ID != "T-42" || list.Items[0].ManagedFields != nil {
		t.Errorf("-o json = %s", js)
	}
	if y, err := f.run("machines", "list", "-o", "yaml"); err != nil || !strings.Contains(y, "kind: MachineList") || !strings.Contains(y, "name: c-waiting") {
		t.Errorf("-o yaml: %v\n%s", err, y)
	}
	if _, err := f.run("machines", "list", "-o", "table"); err == nil || !strings.Contains(err.Error(), `unknown output format "table"`) {
		t.Errorf("-o table: %v", err)
	}
	if _, err := f.run("machines", "list", "-l", "a in (b"); err == nil || !strings.Contains(err.Error(), "invalid --selector") {
		t.Errorf("bad -l: %v", err)
	}
}

func TestMachinesCreateValidation(t *testing.T) {
	f := newMachinesFixture(t)
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"no name", []string{"--class", "workers"}, []string{"NAME or --generate-name"}},
		{"name and prefix", []string{"m1", "--generate-name", "m-", "--class", "workers"}, []string{"not both"}},
		{"bad name", []string{"Bad_Name", "--class", "workers"}, []string{`invalid name "Bad_Name"`}},
		{"bad prefix", []string{"--generate-name", "web_", "--class", "workers"}, []string{`invalid --generate-name "web_"`}},
		{"no class", []string{"m1"}, []string{"--class is required"}},
		{"bad selector", []string{"m1", "--class", "workers", "--selector", "rack in (r1"}, []string{`invalid --selector "rack in (r1"`}},
		{"version without v", []string{"m1", "--class", "workers", "--version", "1.37.2"}, []string{`invalid --version "1.37.2"`, "did you mean v1.37.2?"}},
		{"short version", []string{"m1", "--class", "workers", "--version", "v1.37"}, []string{`invalid --version "v1.37"`}},
		{"bad failure domain", []string{"m1", "--class", "workers", "--failure-domain", "fd a"}, []string{`invalid --failure-domain "fd a"`}},
		{"every error at once", []string{"Bad_Name", "--selector", "=x", "--version", "latest"}, []string{"invalid name", "--class is required", "invalid --selector", "invalid --version"}},
		{"class missing", []string{"m1", "--class", "nope"}, []string{`MachineClass "nope" not found in namespace ` + f.ns, "it has: workers"}},
		{"kubelet not in class", []string{"m1", "--class", "workers", "--version", "v1.38.0"}, []string{"MachineClass workers has no kubelet v1.38.0 (it lists v1.36.4, v1.37.2)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := f.run(append([]string{"machines", "create"}, tc.args...)...)
			if err == nil {
				t.Fatalf("create %v succeeded:\n%s", tc.args, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
	var list metalv1.MachineList
	if err := f.c.List(context.Background(), &list, client.InNamespace(f.ns)); err != nil || len(list.Items) != 0 {
		t.Fatalf("invalid creates left %d Machines (%v)", len(list.Items), err)
	}

	// A valid one: the selector in label selector syntax, the newest kubelet by default.
	out, err := f.run("machines", "create", "m1", "--class", "workers", "--selector", "metal.anvil.dev/rack=r1,gpu notin (true)", "--failure-domain", "fd-a")
	if err != nil {
		t.Fatalf("create: %v\n%s", err, out)
	}
	wantInOrder(t, out, "machine/m1 created in namespace "+f.ns+" (class workers, kubelet v1.37.2)", "no Host matches the selector")
	m, err := f.get("m1")
	if err != nil {
		t.Fatal(err)
	}
	sel := m.Spec.HostSelector
	if m.Spec.Version != "v1.37.2" || m.Spec.FailureDomain != "fd-a" || m.Spec.MachineClassRef.Name != "workers" ||
		sel.MatchLabels["metal.anvil.dev/rack"] != "r1" || len(sel.MatchExpressions) != 1 || sel.MatchExpressions[0].Key != "gpu" ||
		sel.MatchExpressions[0].Operator != metav1.LabelSelectorOpNotIn {
		t.Fatalf("created spec = %+v", m.Spec)
	}
	// With a free Host that matches, the note says so.
	h := &metalv1.Host{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "h1", Labels: map[string]string{"metal.anvil.dev/rack": "r1", metalv1.LabelFailureDomain: "fd-a"}},
		Spec:       metalv1.HostSpec{BMC: metalv1.BMC{Address: "manual://"}, BootMACs: []string{"52:54:00:aa:bb:01"}},
	}
	if err := f.c.Create(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	h.Status.State = metalv1.HostAvailable
	if err := f.c.Status().Update(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	out, err = f.run("machines", "create", "m2", "--class", "workers", "--selector", "metal.anvil.dev/rack=r1", "--failure-domain", "fd-a")
	if err != nil || !strings.Contains(out, "note: 1 of 1 matching Host(s) are Available") {
		t.Fatalf("create with a free Host: %v\n%s", err, out)
	}
	if _, err := f.run("machines", "create", "m1", "--class", "workers"); err == nil || !strings.Contains(err.Error(), "machine m1 already exists") {
		t.Fatalf("second create of m1: %v", err)
	}
	out, err = f.run("machines", "create", "--generate-name", "web-", "--class", "workers", "--version", "v1.36.4")
	if err != nil || !strings.Contains(out, "machine/web-") || !strings.Contains(out, "kubelet v1.36.4") {
		t.Fatalf("create --generate-name: %v\n%s", err, out)
	}
}

// TestMachinesCreateWait follows a Machine the test moves through its
// phases, and checks each way a wait ends.
func TestMachinesCreateWait(t *testing.T) {
	f := newMachinesFixture(t)
	for _, tc := range []struct {
		name    string
		flags   []string
		play    func(name string)
		wantErr []string // nil: success
		wantOut []string // in this order
	}{{
		name: "ready",
		play: func(name string) {
			f.status(name, func(s *metalv1.MachineStatus) {
				s.Phase = metalv1.MachineWaitingForHardware
				s.HardwareRequest = &metalv1.HardwareRequest{ID: "T-7", URL: "https://tickets.example/T-7", State: metalv1.HardwareRequestFiled}
				setCond(metalv1.ConditionInfrastructureReady, metav1.ConditionFalse, "WaitingForHardware", "no free Host matches")(s)
			})
			f.status(name, func(s *metalv1.MachineStatus) {
				s.Phase = metalv1.MachineProvisioning
				s.HostRef = &metalv1.LocalObjectReference{Name: "rack1-01"}
				s.HardwareRequest.State = metalv1.HardwareRequestFulfilled
				setCond(metalv1.ConditionInfrastructureReady, metav1.ConditionFalse, "NetworkBooting", "host rack1-01 is network booting")(s)
			})
			f.status(name, func(s *metalv1.MachineStatus) {
				s.Phase = metalv1.MachineJoining
				setCond(metalv1.ConditionInfrastructureReady, metav1.ConditionTrue, "Provisioned", "")(s)
				setCond(metalv1.ConditionNodeReady, metav1.ConditionFalse, "WaitingForNode", "waiting for kubelet on rack1-01 to register")(s)
			})
			f.status(name, func(s *metalv1.MachineStatus) { s.ObservedGeneration++ }) // a change not worth a line
			f.status(name, func(s *metalv1.MachineStatus) {
				s.Phase = metalv1.MachineRunning
				s.NodeRef = &corev1.ObjectReference{Kind: "Node", Name: "rack1-01"}
				s.Version = "v1.37.2"
				setCond(metalv1.ConditionNodeReady, metav1.ConditionTrue, "NodeReady", "")(s)
				setCond(metalv1.ConditionReady, metav1.ConditionTrue, "Ready", "")(s)
			})
		},
		wantOut: []string{
			"created", "WaitingForHardware  hardware request T-7 (Filed) https://tickets.example/T-7",
			"WaitingForHardware  InfrastructureReady=False WaitingForHardware: no free Host matches",
			"Provisioning        host rack1-01 claimed",
			"hardware request T-7: Filed -> Fulfilled",
			"Provisioning        InfrastructureReady=False NetworkBooting: host rack1-01 is network booting",
			"Joining             InfrastructureReady=True Provisioned",
			"NodeReady=False WaitingForNode: waiting for kubelet on rack1-01 to register",
			"Running             node rack1-01 registered", "node reports kubelet v1.37.2", "NodeReady=True NodeReady", "Ready=True Ready",
			"machine/%s is Ready after", "node rack1-01, host rack1-01, kubelet v1.37.2",
		},
	}, {
		name: "failed",
		play: func(name string) {
			f.status(name, func(s *metalv1.MachineStatus) {
				s.Phase = metalv1.MachineProvisioning
				setCond(metalv1.ConditionInfrastructureReady, metav1.ConditionFalse, "NetworkBooting", "host rack1-02 is network booting")(s)
			})
			f.status(name, func(s *metalv1.MachineStatus) {
				s.Phase, s.FailureReason, s.FailureMessage = metalv1.MachineFailed, "BootTimeout", "host rack1-02 did not report within 20m"
				setCond(metalv1.ConditionInfrastructureReady, metav1.ConditionFalse, "BootTimeout", "no boot report")(s)
			})
		},
		wantErr: []string{"machine %s failed after", "BootTimeout: host rack1-02 did not report within 20m"},
		wantOut: []string{"NetworkBooting", "Failed              InfrastructureReady=False BootTimeout: no boot report", "failed: BootTimeout: host rack1-02"},
	}, {
		name: "deleted",
		play: func(name string) {
			_ = f.c.Delete(context.Background(), &metalv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name}})
		},
		wantErr: []string{"machine %s was deleted while waiting for it to become Ready"},
		wantOut: []string{"deleted"},
	}, {
		name:    "timeout",
		flags:   []string{"--timeout", "2s"},
		play:    func(string) {}, // no controller: nothing happens
		wantErr: []string{"timed out after 2s waiting for machine %s to become Ready", "it is still without status after", "no controller has picked it up (is anvil serve running?)"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			name := "wait-" + tc.name
			args := append([]string{"machines", "create", name, "--class", "workers", "--wait"}, tc.flags...)
			out, errc := f.start(context.Background(), args...)
			f.waitExists(name)
			tc.play(name)
			err := f.result(errc, out)
			t.Logf("output:\n%s\nerror: %v", out, err)
			switch {
			case tc.wantErr == nil && err != nil:
				t.Fatalf("create --wait: %v\n%s", err, out)
			case tc.wantErr != nil && err == nil:
				t.Fatalf("create --wait succeeded, want an error:\n%s", out)
			}
			for _, w := range tc.wantErr {
				if w = strings.ReplaceAll(w, "%s", name); !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q: %v", w, err)
				}
			}
			var wants []string
			for _, w := range tc.wantOut {
				wants = append(wants, strings.ReplaceAll(w, "%s", name))
			}
			wantInOrder(t, out.String(), wants...)
			if strings.ContainsAny(out.String(), "\r\033") {
				t.Errorf("output to a non-terminal has control characters: %q", out)
			}
			if tc.name == "ready" && strings.Count(out.String(), "Joining ") != 2 {
				t.Errorf("an update that changed nothing printed a line:\n%s", out)
			}
		})
	}
}

func TestMachinesCreateWaitInterrupted(t *testing.T) {
	f := newMachinesFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, errc := f.start(ctx, "machines", "create", "m1", "--class", "workers", "--wait")
	f.waitExists("m1")
	f.status("m1", func(s *metalv1.MachineStatus) {
		s.Phase = metalv1.MachineProvisioning
		setCond(metalv1.ConditionInfrastructureReady, metav1.ConditionFalse, "NetworkBooting", "host rack1-01 is network booting")(s)
	})
	f.eventually("the CLI to show NetworkBooting", func() bool { return strings.Contains(out.String(), "NetworkBooting") })
	cancel() // Ctrl-C
	err := f.result(errc, out)
	if err == nil {
		t.Fatalf("interrupted wait returned no error:\n%s", out)
	}
	for _, w := range []string{"interrupted", "machine m1 was not deleted", "in phase Provisioning", "NetworkBooting: host rack1-01 is network booting"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error lacks %q: %v", w, err)
		}
	}
	if m, err := f.get("m1"); err != nil || m.DeletionTimestamp != nil {
		t.Fatalf("Ctrl-C deleted the Machine: %v", err)
	}
}

func TestMachinesDeleteWait(t *testing.T) {
	f := newMachinesFixture(t)
	for _, n := range []string{"d1", "d2-longer-name"} {
		f.create(n, nil, metalv1.FinalizerMachine)
		t.Cleanup(func() { f.removeFinalizers(n) })
	}
	f.create("in-set", map[string]string{metalv1.LabelMachineSet: "ms1"})
	out, errc := f.start(context.Background(), "machines", "delete", "d1", "ghost", "d2-longer-name", "in-set", "--wait")
	for _, n := range []string{"d1", "d2-longer-name"} {
		f.eventually(n+" to be marked deleted", func() bool { m, err := f.get(n); return err == nil && m.DeletionTimestamp != nil })
	}
	for _, step := range []struct{ reason, msg string }{
		{"Draining", "draining node d1 (3 pods left)"},
		{"Wiping", "rack1-01 network-boots to wipe its disks"},
		{"Releasing", "powering off rack1-01"},
	} {
		f.status("d1", func(s *metalv1.MachineStatus) {
			s.Phase = metalv1.MachineDeleting
			setCond(metalv1.ConditionDeleting, metav1.ConditionTrue, step.reason, step.msg)(s)
		})
	}
	f.status("d2-longer-name", setCond(metalv1.ConditionDeleting, metav1.ConditionTrue, "WipeFailed", "wipe of rack1-02 failed: /dev/sda busy"))
	f.removeFinalizers("d1")
	f.status("d2-longer-name", setCond(metalv1.ConditionDeleting, metav1.ConditionTrue, "Releasing", "powering off rack1-02"))
	f.removeFinalizers("d2-longer-name")

	err := f.result(errc, out)
	t.Logf("output:\n%s\nerror: %v", out, err)
	if err == nil || !strings.Contains(err.Error(), "machine ghost not found in namespace "+f.ns) || strings.Contains(err.Error(), "d1") {
		t.Fatalf("delete with a missing name: error %v, want only ghost not found\n%s", err, out)
	}
	got := out.String()
	wantInOrder(t, got, "machine/d1 deletion requested", "machine/d2-longer-name deletion requested")
	wantInOrder(t, got, "d1              Deleting            Deleting=True Draining: draining node d1 (3 pods left)",
		"d1              Deleting            Deleting=True Wiping: rack1-01", "d1              Deleting            Deleting=True Releasing: powering off rack1-01",
		"d1 ", "deleted", "machine/d1 deleted after")
	wantInOrder(t, got, "d2-longer-name", "Deleting=True WipeFailed: wipe of rack1-02 failed: /dev/sda busy", "Deleting=True Releasing: powering off rack1-02", "machine/d2-longer-name deleted after")
	wantInOrder(t, got, "note: machine in-set belongs to MachineSet ms1", "machine/in-set deleted after")
	for _, n := range []string{"d1", "d2-longer-name", "in-set"} {
		if _, err := f.get(n); !apierrors.IsNotFound(err) {
			t.Errorf("machine %s still there: %v", n, err)
		}
	}
}

func TestMachinesDeleteWaitTimeout(t *testing.T) {
	f := newMachinesFixture(t)
	f.create("stuck", nil, metalv1.FinalizerMachine)
	t.Cleanup(func() { f.removeFinalizers("stuck") })
	out, err := f.run("machines", "delete", "stuck", "--wait", "--timeout", "2s")
	if err == nil {
		t.Fatalf("delete of a Machine whose finalizer stays succeeded:\n%s", out)
	}
	for _, w := range []string{"timed out after 2s waiting for machine stuck to be deleted", "waiting for finalizer metal.anvil.dev/machine to be removed"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error lacks %q: %v", w, err)
		}
	}
	wantInOrder(t, out, "machine/stuck deletion requested", "deletion requested")
}

// TestFollowMachineReestablishesWatch checks that a change made after the
// API server ended a watch still arrives.
func TestFollowMachineReestablishesWatch(t *testing.T) {
	f := newMachinesFixture(t)
	m := f.create("m1", nil)
	c, err := client.NewWithWatch(env.Config, client.Options{Scheme: newScheme()})
	if err != nil {
		t.Fatal(err)
	}
	var watches atomic.Int32
	seen := make(chan metalv1.MachinePhase, 10)
	errc := make(chan error, 1)
	go func() {
		errc <- followMachine(context.Background(), c, client.ObjectKeyFromObject(m), nil, followOptions{WatchTimeout: time.Second, OnWatch: func() { watches.Add(1) }},
			func(cur *metalv1.Machine) (bool, error) {
				if cur == nil {
					close(seen)
					return true, nil
				}
				seen <- cur.Status.Phase
				return false, nil
			})
	}()
	if p := <-seen; p != "" {
		t.Fatalf("first phase seen = %q", p)
	}
	f.eventually("the first watch to end and a second to start", func() bool { return watches.Load() >= 2 })
	f.status("m1", func(s *metalv1.MachineStatus) { s.Phase = metalv1.MachineProvisioning })
	if p := <-seen; p != metalv1.MachineProvisioning {
		t.Fatalf("phase after the watch was re-established = %q", p)
	}
	n := watches.Load()
	f.eventually("another watch", func() bool { return watches.Load() > n })
	if err := f.c.Delete(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	if _, open := <-seen; open {
		t.Fatal("a change after the deletion")
	}
	select {
	case err := <-errc:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("followMachine did not return after the Machine was deleted")
	}
}

// screen replays output the way a terminal shows it: "\r\033[K" clears the
// current line.
func terminalScreen(out string) []string {
	lines := []string{""}
	for len(out) > 0 {
		switch {
		case strings.HasPrefix(out, "\r\033[K"):
			lines[len(lines)-1] = ""
			out = out[4:]
		case out[0] == '\n':
			lines = append(lines, "")
			out = out[1:]
		default:
			lines[len(lines)-1] += out[:1]
			out = out[1:]
		}
	}
	return lines
}

func TestProgressDisplay(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := start
	var m *metalv1.Machine
	step := func(d *progressDisplay, tr *machineTracker, after time.Duration, change func(*metalv1.MachineStatus)) {
		now = start.Add(after)
		m = m.DeepCopy()
		change(&m.Status)
		tr.observe(m)
	}
	play := func(d *progressDisplay) {
		m = &metalv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "m1"}}
		tr := d.track("m1")
		step(d, tr, 0, func(s *metalv1.MachineStatus) { s.Phase = metalv1.MachinePending })
		step(d, tr, 12*time.Second, func(s *metalv1.MachineStatus) {
			s.Phase = metalv1.MachineProvisioning
			setCond(metalv1.ConditionInfrastructureReady, metav1.ConditionFalse, "NetworkBooting", "host rack1-01\nis network booting\033[2J\a")(s)
		})
		step(d, tr, 65*time.Second, func(s *metalv1.MachineStatus) { s.Phase = metalv1.MachineJoining })
	}

	t.Run("terminal", func(t *testing.T) {
		var buf bytes.Buffer
		d := &progressDisplay{out: &buf, tty: true, width: 80, start: start, now: func() time.Time { return now }}
		play(d)
		want := []string{
			"  12s  Provisioning        InfrastructureReady=False NetworkBooting: host rack1-01 is network booting[2J",
			"1m05s  Joining             phase Provisioning -> Joining",
			"1m05s  Joining             waiting: InfrastructureReady=False NetworkBooting...", // cut to the width
		}
		if got := terminalScreen(buf.String()); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("screen:\n%s\nwant:\n%s\n(raw %q)", strings.Join(got, "\n"), strings.Join(want, "\n"), buf.String())
		}
		d.mu.Lock()
		d.clearStatusLocked()
		d.mu.Unlock()
		if got := terminalScreen(buf.String()); got[len(got)-1] != "" {
			t.Fatalf("status line not cleared: %q", got)
		}
	})
	t.Run("log", func(t *testing.T) {
		var buf bytes.Buffer
		d := &progressDisplay{out: &buf, heartbeat: 5 * time.Minute, start: start, now: func() time.Time { return now }}
		play(d)
		d.refresh() // not yet 5 minutes without output
		now = start.Add(65*time.Second + 5*time.Minute)
		d.refresh()
		want := "  12s  Provisioning        InfrastructureReady=False NetworkBooting: host rack1-01 is network booting[2J\n" +
			"1m05s  Joining             phase Provisioning -> Joining\n" +
			"6m05s  Joining             still waiting: InfrastructureReady=False NetworkBooting: host rack1-01 is network booting[2J\n"
		if buf.String() != want {
			t.Fatalf("log output:\n%q\nwant:\n%q", buf.String(), want)
		}
	})
}

func TestMachineChanges(t *testing.T) {
	now := metav1.Now()
	base := func(change func(*metalv1.Machine)) *metalv1.Machine {
		m := &metalv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "m1", Finalizers: []string{metalv1.FinalizerMachine}}}
		change(m)
		return m
	}
	for _, tc := range []struct {
		name     string
		old, cur *metalv1.Machine
		want     []string
	}{
		{"nothing", base(func(*metalv1.Machine) {}), base(func(*metalv1.Machine) {}), nil},
		{"first sight of a running Machine", nil, base(func(m *metalv1.Machine) {
			m.Status.HostRef = &metalv1.LocalObjectReference{Name: "h1"}
			m.Status.NodeRef = &corev1.ObjectReference{Name: "n1"}
			m.Status.Addresses = []metalv1.MachineAddress{{Address: "10.0.0.9"}}
		}), []string{"host h1 claimed", "node n1 registered (10.0.0.9)"}},
		{"only the transition time moved", base(func(m *metalv1.Machine) {
			m.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: "False", Reason: "R", Message: "x"}}
		}), base(func(m *metalv1.Machine) {
			m.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: "False", Reason: "R", Message: "x", LastTransitionTime: now}}
		}), nil},
		{"deletion", base(func(*metalv1.Machine) {}), base(func(m *metalv1.Machine) {
			m.DeletionTimestamp = &now
			m.Finalizers = nil
			m.Status.HostRef = nil
		}), []string{"deletion requested", "finalizer metal.anvil.dev/machine removed"}},
		{"host released", base(func(m *metalv1.Machine) { m.Status.HostRef = &metalv1.LocalObjectReference{Name: "h1"} }),
			base(func(*metalv1.Machine) {}), []string{"host h1 released"}},
		{"upgrade and retry", base(func(m *metalv1.Machine) {
			m.Status.Boot = &metalv1.MachineBoot{RequestID: "b1", Purpose: "Provision", Attempt: 1}
		}), base(func(m *metalv1.Machine) {
			m.Status.Boot = &metalv1.MachineBoot{RequestID: "b2", Purpose: "Provision", Attempt: 2}
			m.Status.Upgrade = &metalv1.UpgradeStatus{PlanID: "p", FromVersion: "v1.36.4", Version: "v1.37.2", State: "Draining", PodsLeft: 3}
		}), []string{"network boot retried (Provision, attempt 2)", "upgrade v1.36.4 -> v1.37.2: Draining (3 pods left)"}},
		{"ticket error", base(func(m *metalv1.Machine) { m.Status.HardwareRequest = &metalv1.HardwareRequest{ID: "T-1"} }),
			base(func(m *metalv1.Machine) {
				m.Status.HardwareRequest = &metalv1.HardwareRequest{ID: "T-1", LastError: "webhook returned 503"}
			}), []string{"hardware request error: webhook returned 503"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := machineChanges(tc.old, tc.cur); fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("changes = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestElapsedText(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0s", 999 * time.Millisecond: "0s", 12 * time.Second: "12s", 65 * time.Second: "1m05s",
		59*time.Minute + 59*time.Second: "59m59s", 2*time.Hour + 3*time.Minute + 9*time.Second: "2h03m", -time.Second: "0s",
	} {
		if got := elapsedText(d); got != want {
			t.Errorf("elapsedText(%v) = %q, want %q", d, got, want)
		}
	}
}
