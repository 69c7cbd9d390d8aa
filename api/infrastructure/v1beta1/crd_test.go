package v1beta1_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "anvil.dev/anvil/api/infrastructure/v1beta1"
	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/deploy"
	"anvil.dev/anvil/test/envtest"
)

var env *envtest.Env

func TestMain(m *testing.M) { envtest.Run(m, &env) }

func infraCRDs(t *testing.T) map[string]*apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	crds, err := deploy.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for _, c := range crds {
		if c.Spec.Group == infrav1.GroupVersion.Group {
			out[c.Spec.Names.Kind] = c
		}
	}
	return out
}

// Cluster API finds a provider's CRDs by name (<plural>.<group>, what
// contract.CalculateCRDName makes of the kind) and reads which of its
// contract versions they implement from a label.
func TestCRDsCarryTheContractLabel(t *testing.T) {
	crds := infraCRDs(t)
	for _, kind := range []string{"AnvilCluster", "AnvilMachine", "AnvilMachineTemplate"} {
		c, ok := crds[kind]
		if !ok {
			t.Errorf("deploy/crds has no CRD of kind %s", kind)
			continue
		}
		if want := strings.ToLower(kind) + "s." + infrav1.GroupVersion.Group; c.Name != want {
			t.Errorf("%s CRD is named %s, want %s", kind, c.Name, want)
		}
		if got := c.Labels[infrav1.ContractLabel]; got != infrav1.ContractVersion {
			t.Errorf("%s CRD label %s = %q, want %q", kind, infrav1.ContractLabel, got, infrav1.ContractVersion)
		}
		served := sets.New[string]()
		for _, v := range c.Spec.Versions {
			if v.Served {
				served.Insert(v.Name)
			}
		}
		for _, v := range strings.Split(c.Labels[infrav1.ContractLabel], "_") {
			if !served.Has(v) {
				t.Errorf("%s CRD's contract label names version %s it does not serve", kind, v)
			}
		}
		if !slices.Contains(c.Spec.Names.Categories, "cluster-api") {
			t.Errorf("%s CRD is not in the cluster-api category", kind)
		}
	}
}

func TestAnvilMachinePrinterColumns(t *testing.T) {
	c := infraCRDs(t)["AnvilMachine"]
	if c == nil {
		t.Fatal("no AnvilMachine CRD")
	}
	var got []string
	for _, col := range c.Spec.Versions[0].AdditionalPrinterColumns {
		got = append(got, col.Name)
	}
	want := []string{"Cluster", "Host", "Phase", "Version", "Ready", "ProviderID", "Age"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("printer columns %v, want %v", got, want)
	}
}

// The API server enforces the schema: a phase outside Anvil's Machine
// phases, an empty class name and a providerID over the contract's 512
// bytes are refused, naming the field; what the controller writes is
// accepted.
func TestAnvilMachineValidation(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	am := func(name string) *infrav1.AnvilMachine {
		return &infrav1.AnvilMachine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: infrav1.AnvilMachineSpec{MachineClassRef: infrav1.LocalObjectReference{Name: "c"}}}
	}
	bad := am("no-class")
	bad.Spec.MachineClassRef.Name = ""
	if err := env.Client.Create(ctx, bad); err == nil || !strings.Contains(err.Error(), "spec.machineClassRef.name") {
		t.Errorf("empty spec.machineClassRef.name: %v, want refused naming the field", err)
	}
	long := am("long-id")
	long.Spec.ProviderID = metalv1.ProviderIDPrefix + strings.Repeat("x", 510)
	if err := env.Client.Create(ctx, long); err == nil || !strings.Contains(err.Error(), "spec.providerID") {
		t.Errorf("providerID of 518 bytes: %v, want refused naming spec.providerID", err)
	}
	ok := am("ok")
	if err := env.Client.Create(ctx, ok); err != nil {
		t.Fatal(err)
	}
	yes := true
	for _, tc := range []struct {
		phase   metalv1.MachinePhase
		refused bool
	}{
		{metalv1.MachineRunning, false},
		{metalv1.MachineWaitingForHardware, false},
		{"Bogus", true},
	} {
		got := &infrav1.AnvilMachine{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(ok), got); err != nil {
			t.Fatal(err)
		}
		got.Status.Phase = tc.phase
		got.Status.Initialization.Provisioned = &yes
		err := env.Client.Status().Update(ctx, got)
		if tc.refused != (err != nil) || (err != nil && !strings.Contains(err.Error(), "status.phase")) {
			t.Errorf("status.phase %q: err %v, want refused=%v", tc.phase, err, tc.refused)
		}
	}
}
