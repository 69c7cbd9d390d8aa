package bootcred

import (
	"context"
	"sync"
	"time"
)

// MemoryStore is an in-memory Store. It keeps at most one record per Host,
// so its size is bounded by the number of hosts.
type MemoryStore struct {
	mu     sync.Mutex
	byHash map[string]Record
	byHost map[HostKey]string
}

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore() *MemoryStore {
	return &MemoryStore{byHash: map[string]Record{}, byHost: map[HostKey]string{}}
}

// Get implements Store.
func (s *MemoryStore) Get(_ context.Context, hash string) (Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.byHash[hash]
	if !ok {
		return Record{}, ErrNotFound
	}
	return r.DeepCopy(), nil
}

// Put implements Store.
func (s *MemoryStore) Put(_ context.Context, rec Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := hostKey(rec.Host)
	if old, ok := s.byHost[key]; ok {
		delete(s.byHash, old)
	}
	s.byHash[rec.Hash] = rec.DeepCopy()
	s.byHost[key] = rec.Hash
	return nil
}

// Consume implements Store.
func (s *MemoryStore) Consume(_ context.Context, hash string, at time.Time, from string) (Record, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.byHash[hash]
	if !ok {
		return Record{}, false, ErrNotFound
	}
	if r.ConsumedAt != nil {
		return r.DeepCopy(), false, nil
	}
	r.ConsumedAt = &at
	r.ConsumedFrom = from
	s.byHash[hash] = r
	return r.DeepCopy(), true, nil
}

// Delete implements Store.
func (s *MemoryStore) Delete(_ context.Context, host HostKey) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := hostKey(host)
	if h, ok := s.byHost[key]; ok {
		delete(s.byHash, h)
		delete(s.byHost, key)
	}
	return nil
}

// Len returns the number of stored records.
func (s *MemoryStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.byHash)
}

// hostKey identifies a host by namespace and name: a Host recreated with a
// new UID still has only one live credential.
func hostKey(h HostKey) HostKey { return HostKey{Namespace: h.Namespace, Name: h.Name} }
