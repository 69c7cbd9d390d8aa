package dhcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"sync"
	"time"

	"anvil.dev/anvil/internal/atomicfile"
)

// FileLeaseStore is a durable LeaseStore backed by one JSON file. Every
// change is written to a temporary file, fsynced and renamed over the old
// file before the method returns, so after a crash or restart the store
// knows every lease it ever acknowledged. A failed write rolls the change
// back and returns the error (the server then does not answer).
//
// It rewrites the whole file per change: fine for hundreds of hosts and
// boot storms of tens per second, not for a campus network.
type FileLeaseStore struct {
	mu   sync.Mutex
	path string
	now  func() time.Time
	t    *leaseTable
}

type leaseFile struct {
	Version int             `json:"version"`
	Leases  []leaseFileItem `json:"leases"`
}

type leaseFileItem struct {
	MAC     string     `json:"mac"`
	IP      netip.Addr `json:"ip"`
	Expires time.Time  `json:"expires"`
}

// NewFileLeaseStore opens (or starts) the lease file at path. A missing file
// means no leases; an unreadable or corrupt one is an error, because
// starting empty would hand out addresses that are still in use.
func NewFileLeaseStore(path string, opts LeaseStoreOptions) (*FileLeaseStore, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &FileLeaseStore{path: path, now: opts.Now, t: newLeaseTable()}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return s, nil
	case err != nil:
		return nil, fmt.Errorf("dhcp: read lease file: %w", err)
	}
	var f leaseFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("dhcp: parse lease file %s: %w", path, err)
	}
	if f.Version != 1 {
		return nil, fmt.Errorf("dhcp: lease file %s: unsupported version %d", path, f.Version)
	}
	for _, it := range f.Leases {
		mac, err := net.ParseMAC(it.MAC)
		if err != nil || !it.IP.Is4() {
			return nil, fmt.Errorf("dhcp: lease file %s: bad entry %q/%v", path, it.MAC, it.IP)
		}
		if _, dup := s.t.byIP[it.IP]; dup {
			return nil, fmt.Errorf("dhcp: lease file %s: address %v leased twice", path, it.IP)
		}
		s.t.put(Lease{MAC: mac, IP: it.IP, Expires: it.Expires})
	}
	return s, nil
}

func (s *FileLeaseStore) save() error {
	f := leaseFile{Version: 1, Leases: make([]leaseFileItem, 0, len(s.t.byMAC))}
	for _, l := range s.t.byMAC {
		f.Leases = append(f.Leases, leaseFileItem{MAC: l.MAC.String(), IP: l.IP, Expires: l.Expires.UTC()})
	}
	data, err := json.MarshalIndent(f, "", " ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(s.path, data, 0o600); err != nil {
		return fmt.Errorf("dhcp: write lease file: %w", err)
	}
	return nil
}

// mutate runs fn on the table and persists the result if fn reports a
// change; on a write error the table is restored.
func (s *FileLeaseStore) mutate(fn func(t *leaseTable) (bool, error)) error {
	backup := s.t.clone()
	changed, err := fn(s.t)
	if err != nil || !changed {
		return err
	}
	if err := s.save(); err != nil {
		s.t = backup
		return err
	}
	return nil
}

// Get implements LeaseStore.
func (s *FileLeaseStore) Get(_ context.Context, mac net.HardwareAddr) (Lease, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.t.get(mac)
}

// Allocate implements LeaseStore.
func (s *FileLeaseStore) Allocate(_ context.Context, req AllocateRequest) (Lease, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out Lease
	err := s.mutate(func(t *leaseTable) (bool, error) {
		l, changed, err := t.allocate(req, s.now())
		out = l
		return changed, err
	})
	if err != nil {
		return Lease{}, err
	}
	return out, nil
}

// Renew implements LeaseStore.
func (s *FileLeaseStore) Renew(_ context.Context, mac net.HardwareAddr, ip netip.Addr, ttl time.Duration) (Lease, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out Lease
	err := s.mutate(func(t *leaseTable) (bool, error) {
		l, err := t.renew(mac, ip, ttl, s.now())
		out = l
		return err == nil, err
	})
	if err != nil {
		return Lease{}, err
	}
	return out, nil
}

// Release implements LeaseStore.
func (s *FileLeaseStore) Release(_ context.Context, mac net.HardwareAddr) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mutate(func(t *leaseTable) (bool, error) {
		return t.release(mac, s.now()), nil
	})
}
