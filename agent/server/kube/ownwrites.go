package kube

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
)

// ownWrites lets the agent API read its own Machine writes before the
// informer has them. Under load the cache is seconds behind, and the next
// report's apply carried the resourceVersion from before the last one: a
// 409, a read past the cache and another apply, for about half of the
// Machines in the rollout benchmark of 5,000. The agent API writes only
// status.upgrade.agentResult, and with the read resourceVersion as
// precondition, so a cached Machine still at the version a write was
// based on is, after that write, the same Machine with the written
// agentResult at the resourceVersion the write returned.
type ownWrites struct {
	mu    sync.Mutex
	m     map[types.NamespacedName]ownWrite
	swept time.Time
}

type ownWrite struct {
	base, rv string // the resourceVersion written on, and the one it made
	result   metalv1.AgentUpgradeResult
	at       time.Time
}

// ownWriteTTL bounds how long a write is remembered: the cache is never
// that far behind, and a Machine the agent API stops writing is forgotten.
const ownWriteTTL = time.Minute

// wrote records that m (as read, at its resourceVersion) was written with
// result and is now at rv.
func (o *ownWrites) wrote(m *metalv1.Machine, rv string, result metalv1.AgentUpgradeResult) {
	if rv == "" || rv == m.ResourceVersion {
		return
	}
	now := time.Now()
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.m == nil {
		o.m = map[types.NamespacedName]ownWrite{}
	}
	if now.Sub(o.swept) > ownWriteTTL {
		for k, w := range o.m {
			if now.Sub(w.at) > ownWriteTTL {
				delete(o.m, k)
			}
		}
		o.swept = now
	}
	key, base := client.ObjectKeyFromObject(m), m.ResourceVersion
	if prev, ok := o.m[key]; ok && prev.rv == base {
		// m was this memo's: the cache is still where the first of these
		// writes started.
		base = prev.base
	}
	o.m[key] = ownWrite{base: base, rv: rv, result: result, at: now}
}

// catchUp brings m, read from the cache, up to the agent API's last write
// of it if the cache has not seen that write yet.
func (o *ownWrites) catchUp(m *metalv1.Machine) {
	key := client.ObjectKeyFromObject(m)
	o.mu.Lock()
	defer o.mu.Unlock()
	w, ok := o.m[key]
	switch {
	case !ok:
	case m.ResourceVersion == w.base && m.Status.Upgrade != nil:
		m.ResourceVersion = w.rv
		ar := w.result
		m.Status.Upgrade.AgentResult = &ar
	default: // the cache has moved on: it shows the write, or something after it
		delete(o.m, key)
	}
}
