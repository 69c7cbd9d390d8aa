// Package pxe holds the types shared by Anvil's network boot services
// (pxe/dhcp, pxe/tftp, pxe/httpboot): the host record each service answers
// from, the read-only Backend that supplies it, and the client architecture
// decoded from DHCP option 93.
//
// Every service answers from memory: a Backend implementation is expected to
// read from an informer cache (or, in tests, StaticBackend), never to call an
// API server per packet or request.
package pxe

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"sync"
)

// ErrNotFound is returned by Backend.Lookup for a MAC address that belongs to
// no registered host.
var ErrNotFound = errors.New("pxe: host not found")

// HostRecord is everything the boot services need to know about one host
// (one boot MAC of a Host object).
type HostRecord struct {
	// Name and Namespace identify the Host object (for logs and callbacks).
	Name, Namespace string
	// MAC is the boot interface's hardware address.
	MAC net.HardwareAddr
	// Hostname is handed out as DHCP option 12 when set.
	Hostname string
	// IP is a static address with its prefix length (e.g. 10.0.0.5/24).
	// The zero value means "allocate from the subnet's dynamic range".
	IP netip.Prefix
	// IP6 is a reserved IPv6 address (spec.network.address6): DHCPv6 hands
	// out this one instead of one of its range. Zero: none.
	IP6 netip.Prefix
	// Gateway and DNS override the subnet's router and DNS servers when set.
	Gateway netip.Addr
	DNS     []netip.Addr
	// Arch and UEFI describe the host as registered (e.g. "x86_64", true).
	// The boot services decide the boot file from what the client sends
	// (option 93); these fields are informational for them.
	Arch string
	UEFI bool
	// PXE is true while the host is meant to network boot now. When false,
	// DHCP hands out an address but no boot options, and the iPXE script
	// exits to the local disk.
	PXE bool
	// BootMethod is how the firmware loads iPXE (spec.bootMethod): DHCP
	// gives firmware boot options only to that kind of client (Serves).
	BootMethod BootMethod
	// Accepted is false for hosts that are known but not (yet) accepted by
	// an administrator; nothing is provisioned for them.
	Accepted bool
}

// Backend is the read-only view of registered hosts the boot services answer
// from. Implementations must be safe for concurrent use and fast (answer from
// memory): they are called on the DHCP hot path.
type Backend interface {
	// Lookup returns the record for mac, or an error wrapping ErrNotFound.
	Lookup(ctx context.Context, mac net.HardwareAddr) (HostRecord, error)
}

// MACKey is the canonical map key for a MAC address: lower-case,
// colon-separated (the same form as net.HardwareAddr.String and iPXE's ${mac}).
func MACKey(mac net.HardwareAddr) string { return strings.ToLower(mac.String()) }

// StaticBackend is an in-memory Backend, safe for concurrent use. It is meant
// for tests and for callers that keep their own cache and push updates.
type StaticBackend struct {
	mu    sync.RWMutex
	hosts map[string]HostRecord
}

// NewStaticBackend returns a StaticBackend holding the given records.
func NewStaticBackend(records ...HostRecord) *StaticBackend {
	b := &StaticBackend{hosts: make(map[string]HostRecord, len(records))}
	for _, r := range records {
		b.Set(r)
	}
	return b
}

// Set adds or replaces the record for r.MAC.
func (b *StaticBackend) Set(r HostRecord) {
	r = cloneRecord(r)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.hosts[MACKey(r.MAC)] = r
}

// Delete removes the record for mac, if any.
func (b *StaticBackend) Delete(mac net.HardwareAddr) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.hosts, MACKey(mac))
}

// Lookup implements Backend. The returned record is a copy.
func (b *StaticBackend) Lookup(_ context.Context, mac net.HardwareAddr) (HostRecord, error) {
	b.mu.RLock()
	r, ok := b.hosts[MACKey(mac)]
	b.mu.RUnlock()
	if !ok {
		return HostRecord{}, ErrNotFound
	}
	return cloneRecord(r), nil
}

// cloneRecord deep-copies the slices so callers cannot mutate stored records.
func cloneRecord(r HostRecord) HostRecord {
	r.MAC = append(net.HardwareAddr(nil), r.MAC...)
	r.DNS = append([]netip.Addr(nil), r.DNS...)
	return r
}
