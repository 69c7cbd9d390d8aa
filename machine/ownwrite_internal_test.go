package machine

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
)

// TestBehindOwnWrite: a Machine the cache still shows at the version our
// last status write was made on waits; once the cache moves on, the memo
// is forgotten.
func TestBehindOwnWrite(t *testing.T) {
	r := &MachineReconciler{}
	at := func(rv string) *metalv1.Machine {
		return &metalv1.Machine{ObjectMeta: metav1.ObjectMeta{UID: "u1", ResourceVersion: rv}}
	}
	if r.behindOwnWrite(at("5")) {
		t.Fatal("behind with no write remembered")
	}
	r.written.put("u1", "5") // a write made on version 5
	if !r.behindOwnWrite(at("5")) {
		t.Error("the cache at the version the write was made on: not behind")
	}
	if r.behindOwnWrite(at("7")) {
		t.Error("the cache past the write: behind")
	}
	if r.behindOwnWrite(at("5")) {
		t.Error("the memo was not forgotten once the cache moved on")
	}
	// An expired memo stalls nothing.
	r.written.m.Store(types.UID("u1"), stamped[string]{v: "5", at: time.Now().Add(-2 * time.Minute)})
	if r.behindOwnWrite(at("5")) {
		t.Error("a memo older than a minute still holds the Machine back")
	}
}

// TestRecentSweeps: entries nobody reads again (deleted Machines) are
// dropped once they expire.
func TestRecentSweeps(t *testing.T) {
	var r recent[string]
	r.m.Store(types.UID("gone"), stamped[string]{v: "x", at: time.Now().Add(-2 * time.Minute)})
	r.put("fresh", "y")
	if _, ok := r.m.Load(types.UID("gone")); ok {
		t.Error("an expired entry survived the sweep")
	}
	if v, ok := r.get("fresh"); !ok || v != "y" {
		t.Errorf("fresh entry: %q, %v", v, ok)
	}
}
