package inventory

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
)

// ClaimState is the state a valid Host's spec asks for. The Machine
// controller never writes Host status: it claims (spec.consumerRef), asks
// for network boots (spec.bootRequest) and marks the joined boot
// (AnnotationProvisioned); the Host controller derives its state from
// those, so there is a single writer of status.state.
func ClaimState(h *metalv1.Host) metalv1.HostState {
	if h.Spec.ConsumerRef == nil {
		return metalv1.HostAvailable
	}
	br := h.Spec.BootRequest
	switch {
	case br == nil:
		return metalv1.HostClaimed
	case br.Purpose == metalv1.BootPurposeWipe:
		return metalv1.HostDeprovisioning
	case br.Purpose == metalv1.BootPurposeRejoin:
		// Armed only once the Machine joined: the host runs its node.
		return metalv1.HostProvisioned
	case h.Annotations[metalv1.AnnotationProvisioned] == br.ID:
		return metalv1.HostProvisioned
	}
	return metalv1.HostProvisioning
}

// wipeProblem keeps an unclaimed Host whose last wipe failed out of
// service until an admin acknowledges it with AnnotationAckWipe set to the
// failure's time. An acknowledged failure is turned into Wiped=True so it
// does not come back.
func wipeProblem(h *metalv1.Host) *Problem {
	c := meta.FindStatusCondition(h.Status.Conditions, metalv1.ConditionWiped)
	if c == nil || c.Status != metav1.ConditionFalse || h.Spec.ConsumerRef != nil {
		return nil
	}
	id := WipeFailureID(c)
	if h.Annotations[metalv1.AnnotationAckWipe] == id {
		meta.SetStatusCondition(&h.Status.Conditions, metav1.Condition{
			Type: metalv1.ConditionWiped, Status: metav1.ConditionTrue, Reason: metalv1.ReasonWipeAcknowledged,
			Message: "an admin declared the disks clean after a failed wipe", ObservedGeneration: h.Generation,
		})
		return nil
	}
	return &Problem{Reason: metalv1.ReasonWipeFailed, Message: fmt.Sprintf(
		"the disks were not wiped when the host was released (%s); clean them, then run: kubectl annotate host %s -n %s %s=%s",
		c.Message, h.Name, h.Namespace, metalv1.AnnotationAckWipe, id)}
}

// WipeFailureID identifies one failed wipe for acknowledgement.
func WipeFailureID(c *metav1.Condition) string {
	return c.LastTransitionTime.UTC().Format(time.RFC3339)
}
