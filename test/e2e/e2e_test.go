// Package e2e runs Anvil end to end against the QEMU lab: real firmware
// PXE boots, real BMCs (ipmi_sim, the Redfish emulator) starting real VMs,
// a real kubelet joining a real API server. `make e2e` runs it.
package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/test/lab"
	"anvil.dev/anvil/test/lab/stack"
	"anvil.dev/anvil/test/need"
	"anvil.dev/anvil/test/pxetest"
	"anvil.dev/anvil/test/qemuaccel"
	"anvil.dev/anvil/test/tickettest"
	"anvil.dev/anvil/ticket"
)

// controller-runtime's own logger (its clients' internal messages; the
// lab logs through testr): set, so it does not print a stack trace
// complaining that it never was.
func init() { ctrllog.SetLogger(logr.Discard()) }

const (
	ns = "default"
	// labName is not the default, so `make run`'s lab can run beside it.
	labName = "anvil-e2e"
	// bootLab is the boot method tests' lab (make e2e-boot): its own
	// namespace, so they run beside make e2e.
	bootLab = "anvil-e2e-boot"
)

// startBootLab starts a boot method test's lab: the one UEFI host h
// behind a Redfish BMC, in bootLab with its own image cache (a build
// beside e2e's would race on the shared one); change, if set, has the last
// say on the stack's options.
func startBootLab(t *testing.T, h lab.HostOptions, change func(*stack.Options)) *e2e {
	h.BMC, h.Firmware = lab.Redfish, pxetest.UEFI
	return startLabWith(t, []lab.HostOptions{h}, []string{"--machine-boot-timeout", "8m", "--machine-join-timeout", "10m"},
		func(o *stack.Options) {
			o.LabName, o.CacheDir = bootLab, need.CacheDir(t, "lab-boot")
			if change != nil {
				change(o)
			}
		})
}

// runMachine creates a Machine, waits until it is Running, and checks that
// its Node is Ready with its providerID.
func (e *e2e) runMachine(name string) (*metalv1.Machine, *corev1.Node) {
	e.t.Helper()
	e.createMachine(name)
	m := e.waitPhase(name, 15*time.Minute, metalv1.MachineRunning)
	n := e.node(m.Status.NodeRef.Name)
	if !nodeIsReady(n) || n.Spec.ProviderID != m.Status.ProviderID {
		e.t.Fatalf("Node %s: ready %t, providerID %q; Machine's %q", n.Name, nodeIsReady(n), n.Spec.ProviderID, m.Status.ProviderID)
	}
	return m, n
}

type e2e struct {
	t     *testing.T
	st    *stack.Stack
	c     client.Client
	t0    time.Time
	dir   string // the test's scratch directory
	lab   string // the lab's name: its hosts' anvil.dev/lab label
	trail *trail
}

// with is e for a subtest: its helpers fail and log through t, so
// subtests running in parallel each fail on their own.
func (e *e2e) with(t *testing.T) *e2e {
	c := *e
	c.t = t
	t.Cleanup(func() {
		if t.Failed() {
			c.trail.failed(t.Name())
		}
	})
	return &c
}

func (e *e2e) logf(format string, args ...any) {
	e.t.Helper()
	line := fmt.Sprintf("[%6.1fs] %s", time.Since(e.t0).Seconds(), fmt.Sprintf(format, args...))
	e.trail.step(e.t.Name(), line)
	e.t.Log(line)
}

// trail keeps each (sub)test's last logged step, so that a failure is
// summed up at the very end of the output, after the lab's logs and
// consoles: a parallel subtest's failure message is printed where it
// happened, far above, and CI excerpts show only the last lines.
type trail struct {
	mu    sync.Mutex
	last  map[string]string
	fails []string
}

func (tr *trail) step(test, line string) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.last == nil {
		tr.last = map[string]string{}
	}
	tr.last[test] = line
}

func (tr *trail) failed(test string) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.fails = append(tr.fails, test)
}

// summary runs as the test's last cleanup.
func (tr *trail) summary(t *testing.T) {
	if !t.Failed() {
		return
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	failed := tr.fails
	if len(failed) == 0 {
		failed = []string{t.Name()}
	}
	for _, name := range failed {
		t.Logf("FAILED %s; its last step before the failure (the failure's message is printed above, where it happened): %s", name, nonEmptyStep(tr.last[name]))
	}
}

func nonEmptyStep(s string) string {
	if s == "" {
		return "(none logged)"
	}
	return s
}

func (e *e2e) anvil(args ...string) string {
	e.t.Helper()
	return e.anvilTimeout(2*time.Minute, args...)
}

func (e *e2e) anvilTimeout(timeout time.Duration, args ...string) string {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	out, err := e.st.Anvil(ctx, args...)
	if err != nil {
		e.t.Fatalf("anvil %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func (e *e2e) machine(ctx context.Context, name string) (*metalv1.Machine, error) {
	m := &metalv1.Machine{}
	return m, e.c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, m)
}

func describe(m *metalv1.Machine) string {
	var b strings.Builder
	fmt.Fprintf(&b, "phase=%s", m.Status.Phase)
	for _, c := range m.Status.Conditions {
		fmt.Fprintf(&b, " %s=%s(%s: %s)", c.Type, c.Status, c.Reason, c.Message)
	}
	return b.String()
}

// waitFor polls cond (bounded) and fails with its last explanation.
func (e *e2e) waitFor(timeout time.Duration, what string, cond func(ctx context.Context) (bool, string)) {
	e.t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(context.Background(), time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		ok, why := cond(ctx)
		last = why
		return ok, nil
	})
	if err != nil {
		e.t.Fatalf("%s: not after %s; last: %s", what, timeout, last)
	}
	e.logf("%s", what)
}

func (e *e2e) waitPhase(name string, timeout time.Duration, phases ...metalv1.MachinePhase) *metalv1.Machine {
	e.t.Helper()
	var m *metalv1.Machine
	e.waitFor(timeout, fmt.Sprintf("Machine %s %v", name, phases), func(ctx context.Context) (bool, string) {
		var err error
		if m, err = e.machine(ctx, name); err != nil {
			return false, err.Error()
		}
		for _, p := range phases {
			if m.Status.Phase == p {
				return true, ""
			}
		}
		if m.Status.Phase == metalv1.MachineFailed {
			e.t.Fatalf("Machine %s failed: %s", name, describe(m))
		}
		return false, describe(m)
	})
	return m
}

func (e *e2e) waitHost(name string, timeout time.Duration, state metalv1.HostState) {
	e.t.Helper()
	e.waitFor(timeout, fmt.Sprintf("Host %s %s", name, state), func(ctx context.Context) (bool, string) {
		h := &metalv1.Host{}
		if err := e.c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, h); err != nil {
			return false, err.Error()
		}
		return h.Status.State == state, fmt.Sprintf("state=%s conditions=%v", h.Status.State, h.Status.Conditions)
	})
}

func (e *e2e) createMachine(name string) {
	e.t.Helper()
	e.anvil("machines", "create", name, "--class", "lab", "--selector", "anvil.dev/lab="+e.lab, "--version", "v1.37.2", "-n", ns)
}

// restartControllers kill -9s `anvil serve` and starts it again.
func (e *e2e) restartControllers(when string) {
	e.t.Helper()
	if err := e.st.KillControllers(); err != nil {
		e.t.Fatal(err)
	}
	e.logf("killed anvil serve (%s)", when)
	time.Sleep(2 * time.Second)
	if err := e.st.StartControllers(); err != nil {
		e.t.Fatal(err)
	}
}

// checkInvariants: every Host has at most one Machine, every Machine at
// most one Host, and what Machines record matches the Hosts.
func (e *e2e) checkInvariants() {
	e.t.Helper()
	ctx := context.Background()
	var hosts metalv1.HostList
	var machines metalv1.MachineList
	if err := e.c.List(ctx, &hosts, client.InNamespace(ns)); err != nil {
		e.t.Fatal(err)
	}
	if err := e.c.List(ctx, &machines, client.InNamespace(ns)); err != nil {
		e.t.Fatal(err)
	}
	held := map[types.UID]string{}
	for _, h := range hosts.Items {
		if ref := h.Spec.ConsumerRef; ref != nil {
			if other, dup := held[ref.UID]; dup {
				e.t.Fatalf("Machine %s holds Hosts %s and %s", ref.Name, other, h.Name)
			}
			held[ref.UID] = h.Name
		}
	}
	for _, m := range machines.Items {
		if h, ok := held[m.UID]; ok && m.Status.HostRef != nil && m.Status.HostRef.Name != h {
			e.t.Fatalf("Machine %s records Host %s but holds %s", m.Name, m.Status.HostRef.Name, h)
		}
	}
}

func (e *e2e) dumpOnFailure() {
	if !e.t.Failed() {
		return
	}
	for _, p := range []string{e.st.LogPath("controllers"), e.st.LogPath("netboot")} {
		b, _ := os.ReadFile(p)
		lines := strings.Split(string(b), "\n")
		e.t.Logf("--- tail of %s ---\n%s", p, strings.Join(lines[max(0, len(lines)-60):], "\n"))
	}
	for _, h := range e.st.Lab.Hosts() {
		b, _ := os.ReadFile(e.st.Lab.SerialLog(h.Name))
		lines := strings.Split(string(b), "\n")
		e.t.Logf("--- tail of the serial console of %s ---\n%s", h.Name, strings.Join(lines[max(0, len(lines)-40):], "\n"))
	}
}

// importHosts registers the lab's hosts with `anvil hosts import` (its
// CSV) and waits until each of names is Available.
func (e *e2e) importHosts(names ...string) {
	e.t.Helper()
	csv := filepath.Join(e.dir, "hosts.csv")
	if err := e.st.HostsCSV(csv); err != nil {
		e.t.Fatal(err)
	}
	e.anvil("hosts", "import", csv, "-n", ns)
	for _, n := range names {
		e.waitHost(n, 3*time.Minute, metalv1.HostAvailable)
	}
}

// gateE2E skips unless make e2e asked for the lab: before anything else,
// so that a plain go test ./... in CI does not demand the lab's inputs.
func gateE2E(t *testing.T) {
	if os.Getenv("ANVIL_E2E") != "1" {
		t.Skip("set ANVIL_E2E=1 to run the QEMU lab end to end (make e2e)")
	}
}

// startLab checks what the lab needs (skipping, or failing under CI, when
// something is missing), builds anvil and starts the stack with these
// hosts. Everything stops when the test ends.
func startLab(t *testing.T, hosts []lab.HostOptions, serveArgs []string) *e2e {
	return startLabWith(t, hosts, serveArgs, nil)
}

// startLabWith is startLab with a last say on the stack's options.
func startLabWith(t *testing.T, hosts []lab.HostOptions, serveArgs []string, change func(*stack.Options)) *e2e {
	gateE2E(t)
	if os.Geteuid() != 0 {
		need.OrSkip(t, "the lab needs root (network namespaces, taps)")
	}
	t.Log(qemuaccel.Choose())
	for _, c := range []string{"qemu-system-x86_64", "ipmi_sim", "ip", "busybox"} {
		if _, err := exec.LookPath(c); err != nil {
			need.OrSkip(t, "%s not installed", c)
		}
	}
	root, err := need.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(root, "bin")
	for _, b := range []string{"kube-apiserver", "etcd", "kube-controller-manager", "kubelet", "fake-cri"} {
		if _, err := os.Stat(filepath.Join(bin, b)); err != nil {
			need.OrSkip(t, "bin/%s missing: run make tools", b)
		}
	}
	dir := t.TempDir()
	anvilBin := filepath.Join(dir, "anvil")
	build := exec.Command("go", "build", "-o", anvilBin, "./cmd/anvil")
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building anvil: %v\n%s", err, out)
	}
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = metalv1.AddToScheme(scheme)
	_ = apiextensionsv1.AddToScheme(scheme)
	cache := need.CacheDir(t, "lab")
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	e := &e2e{t: t, t0: time.Now(), dir: dir, trail: &trail{}}
	// After the lab's own cleanups (registered below, run first).
	t.Cleanup(func() { e.trail.summary(t) })
	so := stack.Options{
		Dir: dir, CacheDir: cache, BinDir: bin, Anvil: anvilBin, RepoRoot: root, Namespace: ns, LabName: labName,
		RedfishMockup: need.RedfishMockup(t),
		Hosts:         hosts,
		ServeArgs:     serveArgs,
		Logger:        testr.NewWithOptions(t, testr.Options{Verbosity: 0}),
	}
	if change != nil {
		change(&so)
	}
	e.lab = so.LabName
	st, err := stack.Start(ctx, so, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	e.st, e.c = st, st.Client
	t.Cleanup(st.Stop)
	t.Cleanup(e.dumpOnFailure)
	e.logf("control plane, lab and anvil up")
	return e
}

// TestLabEndToEnd: registered Hosts (one IPMI, one Redfish) become Ready
// Machines whose Nodes a real kubelet registered; a third Machine waits
// for hardware, files a ticket with the admins, and gets a manual:// Host
// the admin (this test) registers and powers on as the tickets ask;
// deleting a Machine wipes and releases its Host, which a new Machine
// claims again. anvil serve is killed (-9) and restarted at several points
// of the flow, the ticket receiver is down or failing meanwhile.
func TestLabEndToEnd(t *testing.T) {
	console := fmt.Sprintf("127.0.0.1:%d", need.FreePort(t))
	e := startLab(t, []lab.HostOptions{
		{Name: "vm-ipmi", BMC: lab.IPMI, DiskMiB: 64},
		{Name: "vm-redfish", BMC: lab.Redfish, DiskMiB: 64},
		// No BMC: a person powers it, as the tickets ask.
		{Name: "vm-third", BMC: lab.Manual, DiskMiB: 64},
	}, []string{"--machine-boot-timeout", "8m", "--machine-join-timeout", "10m", "--machine-wipe-timeout", "10m",
		"--ticket-retry-base", "1s", "--ticket-retry-max", "8s", "--console-listen", console, "--console-namespace", ns})
	st, dir := e.st, e.dir
	ctx := context.Background()

	csv := filepath.Join(dir, "hosts.csv")
	if err := st.HostsCSV(csv, "vm-ipmi", "vm-redfish"); err != nil {
		t.Fatal(err)
	}
	e.logf("anvil hosts import: %s", strings.TrimSpace(e.anvil("hosts", "import", csv, "-n", ns)))
	e.waitHost("vm-ipmi", 3*time.Minute, metalv1.HostAvailable)
	e.waitHost("vm-redfish", 3*time.Minute, metalv1.HostAvailable)

	e.createMachine("m1")
	e.createMachine("m2")
	e.waitPhase("m1", 3*time.Minute, metalv1.MachineProvisioning, metalv1.MachineJoining, metalv1.MachineRunning)
	e.restartControllers("right after the claims")
	e.waitPhase("m2", 10*time.Minute, metalv1.MachineJoining, metalv1.MachineRunning)
	e.restartControllers("while joining")
	m1 := e.waitPhase("m1", 15*time.Minute, metalv1.MachineRunning)
	m2 := e.waitPhase("m2", 15*time.Minute, metalv1.MachineRunning)
	e.checkInvariants()
	for _, m := range []*metalv1.Machine{m1, m2} {
		n := &corev1.Node{}
		if err := e.c.Get(context.Background(), types.NamespacedName{Name: m.Status.NodeRef.Name}, n); err != nil {
			t.Fatal(err)
		}
		if n.Status.NodeInfo.KubeletVersion != "v1.37.2" || n.Spec.ProviderID != m.Status.ProviderID {
			t.Fatalf("Node %s: kubelet %q providerID %q; Machine providerID %q", n.Name, n.Status.NodeInfo.KubeletVersion, n.Spec.ProviderID, m.Status.ProviderID)
		}
		e.logf("Node %s Ready, kubelet %s, providerID %s, host %s", n.Name, n.Status.NodeInfo.KubeletVersion, n.Spec.ProviderID, m.Status.HostRef.Name)
	}
	e.logf("anvil machines list:\n%s", e.anvil("machines", "list", "-n", ns, "-o", "wide"))
	// The admin console shows the lab's racks: both VMs Provisioned, on
	// with their Machines, in the racks the CSV put them in.
	racks := e.consolePage("http://"+console, "/racks?ns="+ns)
	for _, h := range st.Lab.Hosts()[:2] {
		tile := between(racks, `id="h-`+ns+`--`+h.Name+`"`, "</a>")
		if !strings.Contains(racks, "rack "+h.Rack) || !strings.Contains(tile, `data-state="Provisioned"`) || !strings.Contains(tile, `data-power="On"`) ||
			!strings.Contains(tile, "v1.37.2") || !(strings.Contains(tile, "m1") || strings.Contains(tile, "m2")) {
			t.Errorf("the console's racks page shows %s (rack %s) as:\n%s", h.Name, h.Rack, tile)
		}
	}

	// A third Machine: no free Host, so it waits and a ticket is filed with
	// the admins, whose ticketing system is down for a while and then
	// answers 503 half the time; anvil serve is killed (-9) while the
	// tickets wait and again while webhooks are in flight. The admins
	// register a manual:// Host; m3 claims it, and the admin powers the VM
	// on with PXE as the power ticket asks, and calls back.
	tk := e.startTickets(ctx)
	e.createMachine("m3")
	for _, far := range []string{"far1", "far2"} { // hardware that never comes
		e.anvil("machines", "create", far, "--class", "lab", "--selector", "anvil.dev/lab=elsewhere", "--version", "v1.37.2", "-n", ns)
	}
	m3 := e.waitPhase("m3", 2*time.Minute, metalv1.MachineWaitingForHardware)
	e.logf("m3 waits: %s", meta.FindStatusCondition(m3.Status.Conditions, metalv1.ConditionInfrastructureReady).Message)
	e.waitFor(2*time.Minute, "three hardware requests tried while the receiver is down", func(ctx context.Context) (bool, string) {
		tried := 0
		for _, d := range e.deliveries(ctx) {
			if d.Spec.EventType == ticket.HardwareRequested && d.Status.Attempts > 0 {
				tried++
			}
		}
		return tried == 3, describeDeliveries(e.deliveries(ctx))
	})
	// The console's tickets page lists the open requests and their attempts.
	if page := e.consolePage("http://"+console, "/tickets?ns="+ns); !strings.Contains(page, "far1") || !strings.Contains(page, ticket.HardwareRequested) {
		t.Errorf("the console's tickets page does not list the waiting hardware requests:\n%.3000s", page)
	}
	e.restartControllers("while the ticket receiver is down")
	tk.rcv.SetFaults(tickettest.Faults{FailRate: 0.5, RetryAfter: "1", LateRate: 0.2, Late: 3 * time.Second})
	if err := tk.rcv.SetDown(false); err != nil {
		t.Fatal(err)
	}
	if err := e.c.Delete(ctx, &metalv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "far2"}}); err != nil {
		t.Fatal(err)
	}
	if err := st.HostsCSV(csv, "vm-third"); err != nil {
		t.Fatal(err)
	}
	e.anvil("hosts", "import", csv, "-n", ns)
	e.waitFor(2*time.Minute, "a hardware.fulfilled webhook sent", func(ctx context.Context) (bool, string) {
		for _, d := range tk.rcv.Received() {
			if d.Type == ticket.HardwareFulfilled {
				return true, ""
			}
		}
		return false, describeDeliveries(e.deliveries(ctx))
	})
	e.restartControllers("while webhooks are in flight")
	m3 = e.waitPhase("m3", 5*time.Minute, metalv1.MachineProvisioning, metalv1.MachineJoining, metalv1.MachineRunning)
	if m3.Status.HostRef == nil || m3.Status.HostRef.Name != "vm-third" {
		t.Fatalf("m3 should claim the new Host: %s", describe(m3))
	}
	// Delete m1: drain, Node deleted, wipe boot, release; anvil serve dies
	// in the middle of the wipe.
	host1 := m1.Status.HostRef.Name
	if err := e.c.Delete(context.Background(), m1); err != nil {
		t.Fatal(err)
	}
	e.waitHost(host1, 3*time.Minute, metalv1.HostDeprovisioning)
	e.restartControllers("during the wipe")
	e.waitFor(10*time.Minute, "m1 gone", func(ctx context.Context) (bool, string) {
		m, err := e.machine(ctx, "m1")
		if apierrors.IsNotFound(err) {
			return true, ""
		}
		if err != nil {
			return false, err.Error()
		}
		return false, describe(m)
	})
	e.waitHost(host1, 3*time.Minute, metalv1.HostAvailable)
	h := &metalv1.Host{}
	if err := e.c.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: host1}, h); err != nil {
		t.Fatal(err)
	}
	if c := meta.FindStatusCondition(h.Status.Conditions, metalv1.ConditionWiped); c == nil || c.Status != "True" {
		t.Fatalf("released Host %s has no successful wipe recorded: %+v", host1, c)
	}
	if err := e.c.Get(context.Background(), types.NamespacedName{Name: m1.Status.NodeRef.Name}, &corev1.Node{}); !apierrors.IsNotFound(err) {
		t.Fatalf("Node %s of the deleted Machine still exists (%v)", m1.Status.NodeRef.Name, err)
	}

	// The released Host serves a new Machine; the CLI follows it live.
	e.logf("anvil machines create m4 --wait:\n%s", e.anvilTimeout(16*time.Minute, "machines", "create", "m4", "--class", "lab",
		"--selector", "anvil.dev/lab="+labName, "--version", "v1.37.2", "-n", ns, "--wait", "--timeout", "15m"))
	m4 := e.waitPhase("m4", time.Minute, metalv1.MachineRunning)
	if m4.Status.HostRef.Name != host1 {
		t.Fatalf("m4 claimed %s, want the released %s", m4.Status.HostRef.Name, host1)
	}
	e.waitPhase("m3", 15*time.Minute, metalv1.MachineRunning)
	e.checkInvariants()
	e.logf("anvil machines list:\n%s", e.anvil("machines", "list", "-n", ns, "-o", "wide"))
	e.checkTickets(tk)
}
