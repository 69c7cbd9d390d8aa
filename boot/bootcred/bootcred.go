// Package bootcred issues and verifies one-time, expiring, host-bound boot
// credentials.
//
// When a Host is about to PXE boot, Anvil issues a credential: 32 random
// bytes, base64url encoded (43 characters, safe in URLs and on a kernel
// command line). Only its SHA-256 is stored, in a Record bound to the Host
// and its boot MACs. The host presents the credential when it fetches its
// config (Ignition or cloud-init); the first successful Verify consumes it
// and records the remote address. After that the same credential is only
// accepted from that address within a short grace window, which covers
// Ignition retrying the same fetch and cloud-init fetching its four NoCloud
// files. A Record with BoundTo is only accepted from that address (the
// one its boot script went to). Anything else is refused with a typed
// error; the HTTP layer answers all of them with a bare 403.
//
// Record is a plain serializable struct so that a Store can persist it, for
// example in the Host's status, and survive a restart.
package bootcred

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"time"
)

const (
	// DefaultTTL is how long an unused credential stays valid.
	DefaultTTL = 30 * time.Minute
	// DefaultGrace is how long after first use the same remote address may
	// present the credential again.
	DefaultGrace = 2 * time.Minute
	// credentialBytes is the entropy of a credential.
	credentialBytes = 32
)

// Verification errors. The HTTP layer must not tell them apart in its
// response (bare 403); they exist for metrics and logs.
var (
	// ErrInvalid: malformed or unknown credential (or one revoked by a
	// newer boot of the same host).
	ErrInvalid = errors.New("boot credential invalid")
	// ErrExpired: the credential was never used and its TTL passed.
	ErrExpired = errors.New("boot credential expired")
	// ErrReplayed: the credential was already used, and this request is
	// from another address or after the grace window.
	ErrReplayed = errors.New("boot credential already used")
	// ErrWrongHost: the credential belongs to another host or MAC.
	ErrWrongHost = errors.New("boot credential belongs to another host")
	// ErrWrongAddress: the credential is bound to another address
	// (Record.BoundTo); it is not consumed.
	ErrWrongAddress = errors.New("boot credential is bound to another address")
	// ErrNotFound is returned by a Store for an unknown hash.
	ErrNotFound = errors.New("boot credential record not found")
)

// HostKey identifies a Host object.
type HostKey struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	UID       string `json:"uid"`
}

func (h HostKey) String() string { return h.Namespace + "/" + h.Name }

// Record is what is stored about a credential. It holds no secret: Hash is
// the hex SHA-256 of the decoded credential bytes.
type Record struct {
	Host HostKey `json:"host"`
	Hash string  `json:"hash"`
	// MACs are the host's boot MACs, normalized (lower case, colons).
	MACs      []string  `json:"macs"`
	IssuedAt  time.Time `json:"issuedAt"`
	ExpiresAt time.Time `json:"expiresAt"`
	// GraceSeconds is the re-use window after the first use.
	GraceSeconds int64 `json:"graceSeconds"`
	// ConsumedAt is set by the first successful Verify.
	ConsumedAt *time.Time `json:"consumedAt,omitempty"`
	// ConsumedFrom is the remote address of that first use.
	ConsumedFrom string `json:"consumedFrom,omitempty"`
	// BoundTo, if set, is the only address that may use the credential
	// at all (the one its boot script was served to).
	BoundTo string `json:"boundTo,omitempty"`
}

// HashPrefix returns the first 12 hex digits of the hash, enough to
// correlate log lines without revealing anything useful.
func (r Record) HashPrefix() string {
	if len(r.Hash) < 12 {
		return r.Hash
	}
	return r.Hash[:12]
}

// DeepCopy returns a copy sharing no memory with r.
func (r Record) DeepCopy() Record {
	c := r
	c.MACs = append([]string(nil), r.MACs...)
	if r.ConsumedAt != nil {
		t := *r.ConsumedAt
		c.ConsumedAt = &t
	}
	return c
}

// Store persists Records. Implementations must be safe for concurrent use.
type Store interface {
	// Get returns the record with the given hash, or ErrNotFound.
	Get(ctx context.Context, hash string) (Record, error)
	// Put stores rec, replacing any record of the same Host: a new boot
	// invalidates the previous credential.
	Put(ctx context.Context, rec Record) error
	// Consume atomically marks the record with the given hash as used at
	// `at` from `from`, if and only if it is still unused (compare and
	// swap). It returns the record as stored afterwards and whether this
	// call did the marking. ErrNotFound if there is no such record.
	Consume(ctx context.Context, hash string, at time.Time, from string) (Record, bool, error)
	// Delete removes the host's record, if any.
	Delete(ctx context.Context, host HostKey) error
}

// Refresher is implemented by Stores whose Get reads a cache that may lag
// behind writes (hoststore reads an informer cache). When Get misses,
// Verify calls Refresh once, with the MAC the request is for; Refresh looks
// past the cache (bounded by its own rate limit) and returns the record,
// ErrNotFound, or another error (the HTTP layer answers 503 then, which
// clients retry).
type Refresher interface {
	Refresh(ctx context.Context, hash, mac string) (Record, error)
}

// Options configure a Manager.
type Options struct {
	// Store holds the records; a new MemoryStore if nil.
	Store Store
	// TTL and Grace default to DefaultTTL and DefaultGrace.
	TTL   time.Duration
	Grace time.Duration
	// Now returns the current time (time.Now if nil).
	Now func() time.Time
	// Rand is the randomness source (crypto/rand if nil).
	Rand io.Reader
}

// IssueOptions override the Manager's defaults for one credential.
type IssueOptions struct {
	TTL   time.Duration
	Grace time.Duration
}

// Manager issues and verifies credentials.
type Manager struct {
	opts Options
}

// New returns a Manager.
func New(opts Options) *Manager {
	if opts.Store == nil {
		opts.Store = NewMemoryStore()
	}
	if opts.TTL <= 0 {
		opts.TTL = DefaultTTL
	}
	if opts.Grace <= 0 {
		opts.Grace = DefaultGrace
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Rand == nil {
		opts.Rand = rand.Reader
	}
	return &Manager{opts: opts}
}

// Store returns the Manager's store.
func (m *Manager) Store() Store { return m.opts.Store }

// Issue creates a credential for host, valid for its MACs, stores its
// record (replacing the host's previous one) and returns the plaintext,
// which is never stored and must only go into the host's boot script.
func (m *Manager) Issue(ctx context.Context, host HostKey, macs []string, opts IssueOptions) (string, Record, error) {
	if host.Name == "" {
		return "", Record{}, errors.New("issuing boot credential: host name is required")
	}
	if len(macs) == 0 {
		return "", Record{}, errors.New("issuing boot credential: at least one MAC is required")
	}
	norm := make([]string, 0, len(macs))
	for _, mac := range macs {
		n, err := NormalizeMAC(mac)
		if err != nil {
			return "", Record{}, fmt.Errorf("issuing boot credential: %w", err)
		}
		norm = append(norm, n)
	}
	ttl, grace := opts.TTL, opts.Grace
	if ttl <= 0 {
		ttl = m.opts.TTL
	}
	if grace <= 0 {
		grace = m.opts.Grace
	}
	raw := make([]byte, credentialBytes)
	if _, err := io.ReadFull(m.opts.Rand, raw); err != nil {
		return "", Record{}, fmt.Errorf("issuing boot credential: %w", err)
	}
	now := m.opts.Now().UTC()
	rec := Record{
		Host:         host,
		Hash:         hashBytes(raw),
		MACs:         norm,
		IssuedAt:     now,
		ExpiresAt:    now.Add(ttl),
		GraceSeconds: int64(grace / time.Second),
	}
	if err := m.opts.Store.Put(ctx, rec.DeepCopy()); err != nil {
		return "", Record{}, fmt.Errorf("issuing boot credential for %s: %w", host, err)
	}
	return base64.RawURLEncoding.EncodeToString(raw), rec, nil
}

// Request is a presented credential and what the caller knows about the
// requester.
type Request struct {
	// Credential is the presented plaintext.
	Credential string
	// MAC the request claims to be for (from the URL). At least one of MAC
	// and Host must be set.
	MAC string
	// Host, when the caller already resolved it.
	Host *HostKey
	// RemoteAddr is the requester's address.
	RemoteAddr netip.Addr
	// Now overrides the Manager's clock for this call.
	Now time.Time
}

// Verify checks a presented credential. The first success consumes it;
// later calls succeed only from the same remote address within the grace
// window. Errors are ErrInvalid, ErrExpired, ErrReplayed, ErrWrongHost or
// ErrWrongAddress
// (check with errors.Is), or a wrapped Store error.
func (m *Manager) Verify(ctx context.Context, req Request) (Record, error) {
	rec, now, remote, err := m.lookup(ctx, req)
	if err != nil {
		return rec, err
	}
	if rec.ConsumedAt == nil {
		if !now.Before(rec.ExpiresAt) {
			return rec, ErrExpired
		}
		cur, won, err := m.opts.Store.Consume(ctx, rec.Hash, now.UTC(), remote)
		if errors.Is(err, ErrNotFound) {
			return Record{}, ErrInvalid // replaced by a newer boot meanwhile
		}
		if err != nil {
			return Record{}, fmt.Errorf("verifying boot credential: %w", err)
		}
		if won {
			return cur, nil
		}
		rec = cur // someone else used it first: judge as a re-use
	}
	if rec.ConsumedAt == nil {
		return rec, ErrReplayed // store lost the race but reports no use: be safe
	}
	grace := time.Duration(rec.GraceSeconds) * time.Second
	if rec.ConsumedFrom == remote && now.Before(rec.ConsumedAt.Add(grace)) {
		return rec, nil
	}
	return rec, ErrReplayed
}

// Check verifies a presented credential as Verify does, without consuming
// it: it must be unused, unexpired, for the Host and MAC, and presented
// from the address it is bound to. An installer checks in with it and
// leaves the one use to the OS it installs. Errors are those of Verify
// (ErrReplayed once the credential is used).
func (m *Manager) Check(ctx context.Context, req Request) (Record, error) {
	rec, now, _, err := m.lookup(ctx, req)
	switch {
	case err != nil:
		return rec, err
	case rec.ConsumedAt != nil:
		return rec, ErrReplayed
	case !now.Before(rec.ExpiresAt):
		return rec, ErrExpired
	}
	return rec, nil
}

// lookup finds the record of a presented credential and checks what Verify
// and Check share: the credential is one issued, for this Host and MAC,
// presented from the address it is bound to.
func (m *Manager) lookup(ctx context.Context, req Request) (rec Record, now time.Time, remote string, err error) {
	now = req.Now
	if now.IsZero() {
		now = m.opts.Now()
	}
	raw, err := base64.RawURLEncoding.DecodeString(req.Credential)
	if err != nil || len(raw) != credentialBytes {
		return Record{}, now, "", ErrInvalid
	}
	hash := hashBytes(raw)
	// The lookup is keyed by a hash of the secret, so its timing reveals
	// nothing about the credential itself; the comparison below is constant
	// time anyway, for stores that match loosely.
	rec, err = m.opts.Store.Get(ctx, hash)
	if r, ok := m.opts.Store.(Refresher); ok && errors.Is(err, ErrNotFound) && req.MAC != "" {
		rec, err = r.Refresh(ctx, hash, req.MAC)
	}
	if errors.Is(err, ErrNotFound) {
		return Record{}, now, "", ErrInvalid
	}
	if err != nil {
		return Record{}, now, "", fmt.Errorf("verifying boot credential: %w", err)
	}
	if subtle.ConstantTimeCompare([]byte(rec.Hash), []byte(hash)) != 1 {
		return Record{}, now, "", ErrInvalid
	}
	if err := checkHost(rec, req); err != nil {
		return rec, now, "", err
	}
	remote = req.RemoteAddr.Unmap().WithZone("").String()
	if rec.BoundTo != "" && rec.BoundTo != remote {
		return rec, now, remote, ErrWrongAddress
	}
	return rec, now, remote, nil
}

// Revoke deletes the host's credential (the host booted, or was released).
func (m *Manager) Revoke(ctx context.Context, host HostKey) error {
	return m.opts.Store.Delete(ctx, host)
}

func checkHost(rec Record, req Request) error {
	if req.Host == nil && req.MAC == "" {
		return ErrWrongHost // nothing to bind to: refuse rather than trust the credential alone
	}
	if req.Host != nil {
		if req.Host.Namespace != rec.Host.Namespace || req.Host.Name != rec.Host.Name ||
			(req.Host.UID != "" && rec.Host.UID != "" && req.Host.UID != rec.Host.UID) {
			return ErrWrongHost
		}
	}
	if req.MAC != "" {
		mac, err := NormalizeMAC(req.MAC)
		if err != nil {
			return ErrWrongHost
		}
		for _, m := range rec.MACs {
			if m == mac {
				return nil
			}
		}
		return ErrWrongHost
	}
	return nil
}

// HashCredential returns the record hash of a plaintext credential, or ""
// if it is malformed.
func HashCredential(cred string) string {
	raw, err := base64.RawURLEncoding.DecodeString(cred)
	if err != nil || len(raw) != credentialBytes {
		return ""
	}
	return hashBytes(raw)
}

func hashBytes(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// NormalizeMAC parses a MAC in the common notations (colons, dashes, dots
// or 12 bare hex digits) and returns it lower case with colons.
func NormalizeMAC(s string) (string, error) {
	if len(s) == 12 && !strings.ContainsAny(s, ":-.") {
		var b strings.Builder
		for i := 0; i < 12; i += 2 {
			if i > 0 {
				b.WriteByte(':')
			}
			b.WriteString(s[i : i+2])
		}
		s = b.String()
	}
	hw, err := net.ParseMAC(s)
	if err != nil || len(hw) != 6 {
		return "", fmt.Errorf("invalid MAC address %q", s)
	}
	return hw.String(), nil
}
