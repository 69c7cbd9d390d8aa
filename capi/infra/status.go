package infra

import (
	"sort"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "anvil.dev/anvil/api/infrastructure/v1beta1"
	metalv1 "anvil.dev/anvil/api/v1alpha1"
)

// mirror copies what CAPI reads of an AnvilMachine from its Anvil Machine
// m and m's Host h (nil before a claim): phase, version, Host, addresses,
// failure domain, the Anvil Machine's InfrastructureReady and NodeReady
// as they are, and Ready: the Anvil Machine's InfrastructureReady (its
// Host booted with the bootstrap data), which CAPI mirrors into its
// Machine's InfrastructureReady. provisioned turns true once that is True
// with a providerID, and stays true.
func mirror(am *infrav1.AnvilMachine, m *metalv1.Machine, h *metalv1.Host) {
	st := &am.Status
	st.MachineRef = &infrav1.LocalObjectReference{Name: m.Name}
	st.Phase = m.Status.Phase
	st.Version = m.Status.Version
	st.HostRef = nil
	if m.Status.HostRef != nil {
		st.HostRef = &infrav1.LocalObjectReference{Name: m.Status.HostRef.Name}
	}
	st.Addresses = nil
	for _, a := range m.Status.Addresses {
		st.Addresses = append(st.Addresses, clusterv1.MachineAddress{Type: clusterv1.MachineAddressType(a.Type), Address: a.Address})
	}
	st.FailureDomain = m.Spec.FailureDomain
	if h != nil && h.Labels[metalv1.LabelFailureDomain] != "" {
		st.FailureDomain = h.Labels[metalv1.LabelFailureDomain]
	}
	for _, typ := range []string{metalv1.ConditionInfrastructureReady, metalv1.ConditionNodeReady} {
		if c := meta.FindStatusCondition(m.Status.Conditions, typ); c != nil {
			setCondition(am, typ, c.Status, c.Reason, c.Message)
		} else {
			meta.RemoveStatusCondition(&st.Conditions, typ)
		}
	}
	infra := meta.FindStatusCondition(m.Status.Conditions, metalv1.ConditionInfrastructureReady)
	switch {
	case infra == nil:
		setCondition(am, infrav1.ConditionReady, metav1.ConditionFalse, string(metalv1.MachinePending), "Machine "+m.Name+" has not reported yet")
	default:
		setCondition(am, infrav1.ConditionReady, infra.Status, infra.Reason, "Machine "+m.Name+": "+infra.Message)
	}
	if infra != nil && infra.Status == metav1.ConditionTrue && m.Status.ProviderID != "" {
		yes := true
		st.Initialization.Provisioned = &yes
	}
}

// failureDomains are the distinct failure-domain labels of hosts, sorted,
// each usable for the control plane. Hosts without the label add none.
func failureDomains(hosts []metalv1.Host) []clusterv1.FailureDomain {
	seen := map[string]bool{}
	for _, h := range hosts {
		if d := h.Labels[metalv1.LabelFailureDomain]; d != "" {
			seen[d] = true
		}
	}
	names := make([]string, 0, len(seen))
	for d := range seen {
		names = append(names, d)
	}
	sort.Strings(names)
	var out []clusterv1.FailureDomain
	for _, d := range names {
		yes := true
		out = append(out, clusterv1.FailureDomain{Name: d, ControlPlane: &yes})
	}
	return out
}

// setCondition sets a condition of an AnvilMachine or AnvilCluster at
// its generation.
func setCondition(o interface{ GetGeneration() int64 }, typ string, status metav1.ConditionStatus, reason, msg string) {
	var list *[]metav1.Condition
	switch o := o.(type) {
	case *infrav1.AnvilMachine:
		list = &o.Status.Conditions
	case *infrav1.AnvilCluster:
		list = &o.Status.Conditions
	default:
		panic("setCondition: not an AnvilMachine or AnvilCluster")
	}
	if reason == "" {
		reason = "Unknown"
	}
	if len(msg) > 1000 {
		msg = msg[:1000] + "..."
	}
	meta.SetStatusCondition(list, metav1.Condition{Type: typ, Status: status, Reason: reason, Message: msg, ObservedGeneration: o.GetGeneration()})
}
