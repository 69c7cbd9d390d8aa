package statusapply_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/internal/statusapply"
	"anvil.dev/anvil/test/envtest"
)

var env *envtest.Env

func TestMain(m *testing.M) { envtest.Run(m, &env) }

// write is one writer's write in round i, by the writer's own mechanism:
// a server-side apply of its fields (apply), or a compare-and-swap JSON
// patch of its status members (cas) that falls back, like the lease and
// credential stores, to a merge patch with the resourceVersion.
type write struct {
	manager string
	apply   func(i int) map[string]any            // statusapply writers
	cas     func(h *metalv1.Host, i int) []string // sets its members in h, returns their names
}

func writers() []write {
	cond := func(typ string, i int) []metav1.Condition {
		return []metav1.Condition{{Type: typ, Status: metav1.ConditionTrue, Reason: "Round", Message: fmt.Sprint(i), LastTransitionTime: metav1.Now()}}
	}
	return []write{
		{manager: statusapply.HostController.Manager, apply: func(i int) map[string]any {
			return map[string]any{"powerState": "On", "errorCount": i, "conditions": cond(metalv1.ConditionValid, i)}
		}},
		{manager: "anvil-dhcp", cas: func(h *metalv1.Host, i int) []string {
			h.Status.Leases = []metalv1.DHCPLease{{MAC: "52:54:00:00:00:01", IP: fmt.Sprintf("192.0.2.%d", i%250+1), ExpiresAt: metav1.Now()}}
			return []string{"leases"}
		}},
		{manager: "anvil-bootcred", cas: func(h *metalv1.Host, i int) []string {
			h.Status.BootCredential = &metalv1.BootCredentialStatus{Hash: fmt.Sprint("boot-", i), IssuedAt: metav1.Now(), ExpiresAt: metav1.Now()}
			if h.Status.Agent == nil {
				h.Status.Agent = &metalv1.AgentStatus{}
			}
			h.Status.Agent.CredentialHash = fmt.Sprint("agent-", i)
			return []string{"bootCredential", "agent"}
		}},
		{manager: statusapply.AgentReport.Manager, apply: func(i int) map[string]any {
			return map[string]any{"agent": map[string]any{"version": fmt.Sprint("v", i), "bootID": "b"}, "hardware": map[string]any{"kernel": fmt.Sprint("k", i)}}
		}},
		{manager: statusapply.ConfigRendered.Manager, apply: func(i int) map[string]any {
			return map[string]any{"conditions": cond(metalv1.ConditionConfigRendered, i)}
		}},
		{manager: statusapply.MachineWipe.Manager, apply: func(i int) map[string]any {
			return map[string]any{"conditions": cond(metalv1.ConditionWiped, i)}
		}},
	}
}

func run(ctx context.Context, t *testing.T, key types.NamespacedName, wr write, i int) {
	tested := true
	for attempt := 0; attempt < 200; attempt++ {
		live := &metalv1.Host{}
		if err := env.Client.Get(ctx, key, live); err != nil {
			t.Error(err)
			return
		}
		var err error
		if wr.apply != nil {
			_, err = statusapply.Writer{Manager: wr.manager}.Apply(ctx, env.Client, statusapply.Request{Live: live, GVK: statusapply.HostGVK, Status: wr.apply(i)})
		} else {
			h := live.DeepCopy()
			members := wr.cas(h, i)
			var p client.Patch = client.MergeFromWithOptions(live, client.MergeFromWithOptimisticLock{})
			ok := true
			if tested {
				var perr error
				if p, ok, perr = statusapply.CASPatch(live, h, members, "/metadata/uid"); perr != nil {
					t.Error(perr)
					return
				}
			}
			if ok {
				err = env.Client.Status().Patch(ctx, h, p, client.FieldOwner(wr.manager))
			}
			if tested && apierrors.IsInvalid(err) {
				tested = false
				continue
			}
		}
		if !apierrors.IsConflict(err) {
			if err != nil {
				t.Errorf("%s round %d: %v", wr.manager, i, err)
			}
			return
		}
	}
	t.Errorf("%s round %d: kept conflicting", wr.manager, i)
}

// Every writer of one Host's status writes at once, round after round,
// and at the end each writer's last value is there; a field a writer stops
// sending is gone.
func TestConcurrentHostWritersLoseNothing(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ns := env.Namespace(t)
	h := &metalv1.Host{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "race"}, Spec: metalv1.HostSpec{
		BMC: metalv1.BMC{Address: "manual://race"}, BootMACs: []string{"52:54:00:00:00:01"},
	}}
	if err := env.Client.Create(ctx, h); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(h)
	const rounds = 25
	ws := writers()
	for i := 1; i <= rounds; i++ {
		var wg sync.WaitGroup
		for _, wr := range ws {
			wg.Add(1)
			go func() { defer wg.Done(); run(ctx, t, key, wr, i) }()
		}
		wg.Wait()
		if t.Failed() {
			t.FailNow()
		}
	}

	got := &metalv1.Host{}
	if err := env.Client.Get(ctx, key, got); err != nil {
		t.Fatal(err)
	}
	st := got.Status
	last := fmt.Sprint(rounds)
	for _, typ := range []string{metalv1.ConditionValid, metalv1.ConditionConfigRendered, metalv1.ConditionWiped} {
		if c := meta.FindStatusCondition(st.Conditions, typ); c == nil || c.Message != last {
			t.Errorf("condition %s = %+v, want message %s", typ, c, last)
		}
	}
	if st.ErrorCount != rounds || st.PowerState != "On" {
		t.Errorf("controller fields: errorCount %d powerState %q", st.ErrorCount, st.PowerState)
	}
	if len(st.Leases) != 1 || st.Leases[0].IP != fmt.Sprintf("192.0.2.%d", rounds%250+1) {
		t.Errorf("leases %+v: want the last one", st.Leases)
	}
	if st.BootCredential == nil || st.BootCredential.Hash != "boot-"+last || st.Agent == nil || st.Agent.CredentialHash != "agent-"+last {
		t.Errorf("credentials: boot %+v agent %+v", st.BootCredential, st.Agent)
	}
	if st.Agent == nil || st.Agent.Version != "v"+last {
		t.Errorf("agent report %+v: want version v%s", st.Agent, last)
	}
	if st.Hardware == nil || st.Hardware.Kernel != "k"+last {
		t.Errorf("hardware %+v: want kernel k%s", st.Hardware, last)
	}

	// A writer that stops sending a field removes it, and only its own.
	if _, err := statusapply.ConfigRendered.Apply(ctx, env.Client, statusapply.Request{Live: got, GVK: statusapply.HostGVK}); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Get(ctx, key, got); err != nil {
		t.Fatal(err)
	}
	if c := meta.FindStatusCondition(got.Status.Conditions, metalv1.ConditionConfigRendered); c != nil {
		t.Errorf("ConfigRendered %+v after its writer stopped sending it", c)
	}
	if len(got.Status.Conditions) != 2 || got.Status.ErrorCount != rounds || got.Status.Agent.CredentialHash != "agent-"+last {
		t.Errorf("conditions %+v, errorCount %d, agent %+v: the other writers' fields must stay", got.Status.Conditions, got.Status.ErrorCount, got.Status.Agent)
	}
}

// A Host an older Anvil wrote with merge patches: once TakeOver has handed
// its fields to their writers, a writer that leaves one out removes it,
// even one it applied with the same value before (shared until then); a
// condition no writer owns stays.
func TestTakeOverFromAnOlderAnvil(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	h := &metalv1.Host{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "old"}, Spec: metalv1.HostSpec{
		BMC: metalv1.BMC{Address: "manual://old"}, BootMACs: []string{"52:54:00:00:00:01"},
	}}
	if err := env.Client.Create(ctx, h); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(h)
	old := h.DeepCopy()
	now := metav1.Now()
	h.Status = metalv1.HostStatus{
		PowerState: "Off", ErrorCount: 2,
		IssuedPowerAction: &metalv1.IssuedPowerAction{Action: "On", Target: "On", IssuedAt: now, Deadline: now, Attempts: 1},
		Agent:             &metalv1.AgentStatus{Version: "old", LastSeen: &now},
		Conditions: []metav1.Condition{
			{Type: metalv1.ConditionPowerSynced, Status: metav1.ConditionFalse, Reason: "Old", LastTransitionTime: now},
			{Type: "Custom", Status: metav1.ConditionTrue, Reason: "Old", LastTransitionTime: now},
		},
	}
	if err := env.Client.Status().Patch(ctx, h, client.MergeFrom(old), client.FieldOwner("anvil")); err != nil {
		t.Fatal(err)
	}
	get := func() *metalv1.Host {
		got := &metalv1.Host{}
		if err := env.Client.Get(ctx, key, got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	// The new controller's first write, before the take-over: same
	// errorCount, so it is shared.
	if _, err := statusapply.HostController.Apply(ctx, env.Client, statusapply.Request{Live: get(), GVK: statusapply.HostGVK,
		Status: map[string]any{"powerState": "On", "errorCount": 2}}); err != nil {
		t.Fatal(err)
	}
	took, err := statusapply.TakeOver(ctx, env.Client, get(), statusapply.HostGVK, statusapply.HostController, statusapply.AgentReport)
	if err != nil || !took {
		t.Fatalf("TakeOver = %v, %v; want a write", took, err)
	}
	if took, err := statusapply.TakeOver(ctx, env.Client, get(), statusapply.HostGVK, statusapply.HostController, statusapply.AgentReport); err != nil || took {
		t.Fatalf("second TakeOver = %v, %v; want nothing left to take", took, err)
	}
	for _, w := range []struct {
		w  statusapply.Writer
		st map[string]any
	}{
		{statusapply.HostController, map[string]any{"powerState": "On"}},
		{statusapply.AgentReport, map[string]any{"agent": map[string]any{"version": "new"}}},
	} {
		if _, err := w.w.Apply(ctx, env.Client, statusapply.Request{Live: get(), GVK: statusapply.HostGVK, Status: w.st}); err != nil {
			t.Fatal(err)
		}
	}
	st := get().Status
	if st.ErrorCount != 0 || st.IssuedPowerAction != nil || st.PowerState != "On" {
		t.Errorf("controller fields: errorCount %d issuedPowerAction %+v powerState %q; want 0, none, On", st.ErrorCount, st.IssuedPowerAction, st.PowerState)
	}
	if st.Agent == nil || st.Agent.Version != "new" || st.Agent.LastSeen != nil {
		t.Errorf("agent %+v: want version new and no lastSeen", st.Agent)
	}
	if meta.FindStatusCondition(st.Conditions, metalv1.ConditionPowerSynced) != nil || meta.FindStatusCondition(st.Conditions, "Custom") == nil {
		t.Errorf("conditions %+v: want PowerSynced gone (the controller's) and Custom kept (nobody's)", st.Conditions)
	}
}

// The Machine's writers at once, round after round: the controller with
// merge patches of what it decided (upgrade.message among them), with the
// resourceVersion as precondition, the agent API (upgrade.agentResult) and
// the ticket outbox by apply with it too.
// Each writer's last value is there.
func TestConcurrentMachineWritersLoseNothing(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ns := env.Namespace(t)
	m := &metalv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "race"}}
	m.Spec.MachineClassRef.Name = "c"
	m.Spec.Version = "v1.37.2"
	if err := env.Client.Create(ctx, m); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(m)
	merge := func(manager string, set func(m *metalv1.Machine, i int)) func(i int) error {
		return func(i int) error {
			live := &metalv1.Machine{}
			if err := env.Client.Get(ctx, key, live); err != nil {
				return err
			}
			next := live.DeepCopy()
			set(next, i)
			return env.Client.Status().Patch(ctx, next, client.MergeFromWithOptions(live, client.MergeFromWithOptimisticLock{}), client.FieldOwner(manager))
		}
	}
	writes := map[string]func(i int) error{
		"controller": merge("anvil-machine", func(m *metalv1.Machine, i int) {
			m.Status.Version = fmt.Sprint("v1.37.", i)
			if m.Status.Upgrade == nil {
				m.Status.Upgrade = &metalv1.UpgradeStatus{PlanID: "p", Version: "v", State: "Applying"}
			}
			m.Status.Upgrade.Message = fmt.Sprint(i)
			meta.SetStatusCondition(&m.Status.Conditions, metav1.Condition{Type: metalv1.ConditionReady, Status: metav1.ConditionTrue, Reason: "Round", Message: fmt.Sprint(i)})
		}),
		"agent": func(i int) error {
			live := &metalv1.Machine{}
			if err := env.Client.Get(ctx, key, live); err != nil {
				return err
			}
			if live.Status.Upgrade == nil {
				// The agent reports only on a published plan.
				return apierrors.NewConflict(schema.GroupResource{Resource: "machines"}, "race", nil)
			}
			_, err := statusapply.AgentUpgrade.Apply(ctx, env.Client, statusapply.Request{Live: live, GVK: statusapply.MachineGVK, ResourceVersion: live.ResourceVersion,
				Status: map[string]any{"upgrade": map[string]any{"agentResult": metalv1.AgentUpgradeResult{PlanID: "p", Outcome: "InProgress", Message: fmt.Sprint(i), ReportedAt: metav1.Now()}}}})
			return err
		},
		"ticket": func(i int) error {
			live := &metalv1.Machine{}
			if err := env.Client.Get(ctx, key, live); err != nil {
				return err
			}
			_, err := statusapply.TicketOutbox.Apply(ctx, env.Client, statusapply.Request{Live: live, GVK: statusapply.MachineGVK, ResourceVersion: live.ResourceVersion,
				Status: map[string]any{"hardwareRequest": metalv1.HardwareRequest{ID: fmt.Sprint("T-", i), State: metalv1.HardwareRequestFiled}}})
			return err
		},
	}
	const rounds = 25
	for i := 1; i <= rounds; i++ {
		var wg sync.WaitGroup
		for name, w := range writes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for attempt := 0; ; attempt++ {
					err := w(i)
					if err == nil {
						return
					}
					if !apierrors.IsConflict(err) || attempt > 200 {
						t.Errorf("%s round %d: %v", name, i, err)
						return
					}
				}
			}()
		}
		wg.Wait()
		if t.Failed() {
			t.FailNow()
		}
	}
	got := &metalv1.Machine{}
	if err := env.Client.Get(ctx, key, got); err != nil {
		t.Fatal(err)
	}
	st, last := got.Status, fmt.Sprint(rounds)
	if c := meta.FindStatusCondition(st.Conditions, metalv1.ConditionReady); c == nil || c.Message != last || st.Version != "v1.37."+last {
		t.Errorf("controller: Ready %+v version %q", c, st.Version)
	}
	if st.Upgrade == nil || st.Upgrade.Message != last || st.Upgrade.AgentResult == nil || st.Upgrade.AgentResult.Message != last {
		t.Errorf("controller and agent: upgrade %+v", st.Upgrade)
	}
	if st.HardwareRequest == nil || st.HardwareRequest.ID != "T-"+last {
		t.Errorf("ticket: hardwareRequest %+v", st.HardwareRequest)
	}
}
