package netboot

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/pxe/httpboot"
	"anvil.dev/anvil/pxe/index"
)

// +kubebuilder:rbac:groups=metal.anvil.dev,resources=machineclasses/status,verbs=patch,roleName=anvil-pxe

// ReasonDigestMismatch marks a MachineClass whose artifact on disk does not
// match the sha256 it names; the file is never served.
const ReasonDigestMismatch = "DigestMismatch"

// reportMismatch puts ArtifactsValid=False on the MachineClass that owns the
// artifact, so an admin sees why its hosts cannot boot. It runs off the
// request path (httpboot calls it once per verification).
func reportMismatch(c client.Client, idx *index.Index, m httpboot.ArtifactMismatch, log logr.Logger) {
	key, ok := idx.ClassOfArtifact(m.Path)
	if !ok {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		var mc metalv1.MachineClass
		if err := c.Get(ctx, key, &mc); err != nil {
			log.Error(err, "reading MachineClass for an artifact mismatch", "class", key)
			return
		}
		before := mc.DeepCopy()
		meta.SetStatusCondition(&mc.Status.Conditions, metav1.Condition{
			Type: metalv1.ConditionArtifactsValid, Status: metav1.ConditionFalse, Reason: ReasonDigestMismatch,
			ObservedGeneration: mc.Generation,
			Message: fmt.Sprintf("%s (%d bytes) has sha256 %s but the class expects %s; it is not served until they match",
				m.Path, m.Size, m.Actual, m.Expected),
		})
		if err := c.Status().Patch(ctx, &mc, client.MergeFrom(before)); err != nil {
			log.Error(err, "recording an artifact mismatch on the MachineClass", "class", key)
		}
	}()
}
