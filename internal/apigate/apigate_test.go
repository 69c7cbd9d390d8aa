package apigate

import (
	"context"
	"errors"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/test/envtest"
)

// waitQueued returns once n writes of priority p wait (an observed state,
// bounded).
func waitQueued(t *testing.T, g *Gate, p Priority, n int) {
	t.Helper()
	for range 5000 {
		g.mu.Lock()
		got := len(g.waiters[p])
		g.mu.Unlock()
		if got == n {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("never saw %d %s writes waiting", n, p)
}

// acquireAsync starts an Acquire and sends its name on got once it holds
// a slot; it releases the slot when hold is closed.
func acquireAsync(g *Gate, p Priority, name string, got chan<- string, hold <-chan struct{}) {
	go func() {
		release, err := g.Acquire(context.Background(), p)
		if err != nil {
			got <- "error " + err.Error()
			return
		}
		got <- name
		<-hold
		release()
	}()
}

func TestUrgentGoesFirst(t *testing.T) {
	g := New(Options{Slots: 1})
	release, err := g.Acquire(context.Background(), Normal)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 2)
	closed := make(chan struct{}) // each releases its slot at once
	close(closed)
	acquireAsync(g, Normal, "normal", got, closed)
	waitQueued(t, g, Normal, 1)
	acquireAsync(g, Urgent, "urgent", got, closed)
	waitQueued(t, g, Urgent, 1)
	release()
	if first := <-got; first != "urgent" {
		t.Fatalf("first slot went to %q, want the urgent write queued after the normal one", first)
	}
	if second := <-got; second != "normal" {
		t.Fatalf("second slot went to %q", second)
	}
}

func TestCancelledWaitKeepsNoSlot(t *testing.T) {
	g := New(Options{Slots: 1})
	release, err := g.Acquire(context.Background(), Urgent)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := g.Acquire(ctx, Normal)
		errc <- err
	}()
	waitQueued(t, g, Normal, 1)
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("Acquire after cancel: %v, want context.Canceled", err)
	}
	release()
	g.mu.Lock()
	free, waiting := g.free, len(g.waiters[Normal])+len(g.waiters[Urgent])
	g.mu.Unlock()
	if free != 1 || waiting != 0 {
		t.Fatalf("after the cancelled wait and the release: %d free, %d waiting; want 1, 0", free, waiting)
	}
}

// A gated client's status patch waits for a slot; its reads do not.
func TestClientGatesWrites(t *testing.T) {
	h := &metalv1.Host{ObjectMeta: metav1.ObjectMeta{Name: "h1", Namespace: "default"}}
	c := fake.NewClientBuilder().WithScheme(envtest.Scheme()).WithObjects(h).WithStatusSubresource(h).Build()
	g := New(Options{Slots: 1})
	gc := g.Client(c, Urgent)
	release, err := g.Acquire(context.Background(), Normal)
	if err != nil {
		t.Fatal(err)
	}
	var got metalv1.Host
	if err := gc.Get(context.Background(), client.ObjectKeyFromObject(h), &got); err != nil {
		t.Fatalf("a read waited for the gate or failed: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		before := got.DeepCopy()
		got.Status.BootRequestID = "patched"
		done <- gc.Status().Patch(context.Background(), &got, client.MergeFrom(before))
	}()
	waitQueued(t, g, Urgent, 1)
	release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	var after metalv1.Host
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(h), &after); err != nil {
		t.Fatal(err)
	}
	if after.Status.BootRequestID != "patched" {
		t.Fatalf("status after the gated patch: %q", after.Status.BootRequestID)
	}
}
