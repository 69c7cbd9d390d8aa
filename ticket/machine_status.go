package ticket

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/internal/statusapply"
)

// hwRank orders the states; a request only moves forward, so a late answer
// cannot undo a rejection or a fulfilment.
func hwRank(s metalv1.HardwareRequestState) int {
	switch s {
	case metalv1.HardwareRequestFailed:
		return 1
	case metalv1.HardwareRequestFiled:
		return 2
	case metalv1.HardwareRequestRejected:
		return 3
	case metalv1.HardwareRequestFulfilled, metalv1.HardwareRequestCancelled:
		return 4
	}
	return 0
}

// hwUpdate is one change to status.hardwareRequest.
type hwUpdate struct {
	reset     bool // replace the whole field (a new request)
	state     metalv1.HardwareRequestState
	id, url   string // kept if the request already has a ticket
	filedAt   *metav1.Time
	lastError string
	noteOnly  bool // only record lastError while the request is still Pending
}

// apply returns the new value, or nil if nothing changes.
func (u hwUpdate) apply(cur *metalv1.HardwareRequest) *metalv1.HardwareRequest {
	if u.reset {
		n := &metalv1.HardwareRequest{State: u.state}
		if cur != nil && *cur == *n {
			return nil
		}
		return n
	}
	n := &metalv1.HardwareRequest{}
	if cur != nil {
		n = cur.DeepCopy()
	}
	if u.noteOnly {
		if (n.State != "" && n.State != metalv1.HardwareRequestPending) || n.LastError == u.lastError {
			return nil
		}
		n.State, n.LastError = metalv1.HardwareRequestPending, u.lastError
		return n
	}
	if hwRank(u.state) < hwRank(n.State) {
		// A later state got here first (after a restart the fulfilled
		// delivery can sync before the request's): keep the state, but
		// the ticket the receiver opened still belongs on the Machine.
		if n.ID != "" || n.URL != "" || u.id == "" && u.url == "" {
			return nil
		}
		n.ID, n.URL = u.id, u.url
		if n.FiledAt == nil {
			n.FiledAt = u.filedAt
		}
		return n
	}
	n.State, n.LastError = u.state, u.lastError
	if n.ID == "" && n.URL == "" {
		n.ID, n.URL = u.id, u.url
	}
	if n.FiledAt == nil && u.filedAt != nil {
		n.FiledAt = u.filedAt
	}
	if cur != nil && equalHW(cur, n) {
		return nil
	}
	return n
}

func equalHW(a, b *metalv1.HardwareRequest) bool {
	return a.ID == b.ID && a.URL == b.URL && a.State == b.State && a.LastError == b.LastError &&
		((a.FiledAt == nil) == (b.FiledAt == nil)) && (a.FiledAt == nil || a.FiledAt.Equal(b.FiledAt))
}

// setHardwareRequest applies u to the Machine's status.hardwareRequest by
// server-side apply of that field alone (statusapply.TicketOutbox: never
// the controller's status), with the resourceVersion it was computed from
// as precondition and retried on conflict. A member left empty is removed
// (the field manager owns it), so an old ticket's id or error never stays.
// A Machine that is gone, or re-created under the same name, is left
// alone.
func setHardwareRequest(ctx context.Context, c client.Client, r client.Reader, ns, name string, uid types.UID, u hwUpdate) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		m := &metalv1.Machine{}
		if err := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, m); err != nil {
			return client.IgnoreNotFound(err)
		}
		if m.UID != uid {
			return nil
		}
		n := u.apply(m.Status.HardwareRequest)
		if n == nil {
			return nil
		}
		_, err := statusapply.TicketOutbox.Apply(ctx, c, statusapply.Request{Live: m, GVK: statusapply.MachineGVK,
			ResourceVersion: m.ResourceVersion, Status: map[string]any{"hardwareRequest": n}})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil && !apierrors.IsConflict(err) {
			return fmt.Errorf("recording hardware request of Machine %s/%s: %w", ns, name, err)
		}
		return err
	})
}
