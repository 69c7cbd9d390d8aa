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
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/internal/statusapply"
	"anvil.dev/anvil/test/envtest"
)

var env *envtest.Env

func TestMain(m *testing.M) { envtest.Run(m, &env) }

// write is one writer's write in round i: it applies only that writer's
// fields, each carrying i, the way the real writer does (the lease and
// credential writers as compare-and-swaps, re-reading on a conflict).
type write struct {
	w    statusapply.Writer
	cas  bool
	body func(i int) map[string]any
}

func writers() []write {
	cond := func(typ string, i int) []metav1.Condition {
		return []metav1.Condition{{Type: typ, Status: metav1.ConditionTrue, Reason: "Round", Message: fmt.Sprint(i), LastTransitionTime: metav1.Now()}}
	}
	return []write{
		{w: statusapply.HostController, body: func(i int) map[string]any {
			return map[string]any{"powerState": "On", "errorCount": i, "conditions": cond(metalv1.ConditionValid, i)}
		}},
		{w: statusapply.DHCPLeases, cas: true, body: func(i int) map[string]any {
			return map[string]any{"leases": []metalv1.DHCPLease{{MAC: "52:54:00:00:00:01", IP: fmt.Sprintf("192.0.2.%d", i%250+1), ExpiresAt: metav1.Now()}}}
		}},
		{w: statusapply.BootCredential, cas: true, body: func(i int) map[string]any {
			return map[string]any{
				"bootCredential": metalv1.BootCredentialStatus{Hash: fmt.Sprint("boot-", i), IssuedAt: metav1.Now(), ExpiresAt: metav1.Now()},
				"agent":          map[string]any{"credentialHash": fmt.Sprint("agent-", i)},
			}
		}},
		{w: statusapply.AgentReport, body: func(i int) map[string]any {
			return map[string]any{"agent": map[string]any{"version": fmt.Sprint("v", i), "bootID": "b"}, "hardware": map[string]any{"kernel": fmt.Sprint("k", i)}}
		}},
		{w: statusapply.ConfigRendered, body: func(i int) map[string]any {
			return map[string]any{"conditions": cond(metalv1.ConditionConfigRendered, i)}
		}},
		{w: statusapply.MachineWipe, body: func(i int) map[string]any {
			return map[string]any{"conditions": cond(metalv1.ConditionWiped, i)}
		}},
	}
}

func apply(ctx context.Context, t *testing.T, key types.NamespacedName, wr write, i int) {
	for attempt := 0; ; attempt++ {
		live := &metalv1.Host{}
		if err := env.Client.Get(ctx, key, live); err != nil {
			t.Error(err)
			return
		}
		r := statusapply.Request{Live: live, GVK: statusapply.HostGVK, Status: wr.body(i)}
		if wr.cas {
			r.ResourceVersion = live.ResourceVersion
		}
		_, err := wr.w.Apply(ctx, env.Client, r)
		if err == nil {
			return
		}
		if !apierrors.IsConflict(err) || attempt > 200 {
			t.Errorf("%s round %d: %v", wr.w.Manager, i, err)
			return
		}
	}
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
			go func() { defer wg.Done(); apply(ctx, t, key, wr, i) }()
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

	// A writer that stops sending a field removes it.
	if _, err := statusapply.BootCredential.Apply(ctx, env.Client, statusapply.Request{Live: got, GVK: statusapply.HostGVK, Status: map[string]any{}, ResourceVersion: got.ResourceVersion}); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Get(ctx, key, got); err != nil {
		t.Fatal(err)
	}
	if got.Status.BootCredential != nil || got.Status.Agent == nil || got.Status.Agent.CredentialHash != "" || got.Status.Agent.Version != "v"+last {
		t.Errorf("after the credential writer cleared its fields: boot %+v agent %+v", got.Status.BootCredential, got.Status.Agent)
	}
	// A stale resourceVersion is a conflict: the credential writes stay
	// compare-and-swaps.
	_, err := statusapply.BootCredential.Apply(ctx, env.Client, statusapply.Request{Live: got, GVK: statusapply.HostGVK, ResourceVersion: h.ResourceVersion, // the Host as created
		Status: map[string]any{"bootCredential": metalv1.BootCredentialStatus{Hash: "stale", IssuedAt: metav1.Now(), ExpiresAt: metav1.Now()}}})
	if !apierrors.IsConflict(err) {
		t.Fatalf("apply with a stale resourceVersion: %v, want a conflict", err)
	}
}
