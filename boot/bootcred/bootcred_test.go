package bootcred

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	hostA  = HostKey{Namespace: "metal", Name: "rack7-u12", UID: "uid-a"}
	hostB  = HostKey{Namespace: "metal", Name: "rack7-u13", UID: "uid-b"}
	macsA  = []string{"52:54:00:12:34:56", "52-54-00-12-34-57"}
	addrA  = netip.MustParseAddr("192.0.2.10")
	addrB  = netip.MustParseAddr("192.0.2.66")
	t0     = time.Date(2026, 11, 29, 17, 0, 0, 0, time.UTC)
	minute = time.Minute
)

func TestVerify(t *testing.T) {
	ctx := context.Background()
	type step struct {
		at      time.Duration // after issue
		cred    string        // "" = the issued one
		mac     string
		host    *HostKey
		from    netip.Addr
		wantErr error
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"first use succeeds", []step{{at: minute, mac: macsA[0], from: addrA}}},
		{"other notation of a boot MAC", []step{{at: minute, mac: "5254.0012.3457", from: addrA}}},
		{"by host key", []step{{at: minute, host: &hostA, from: addrA}}},
		{"retry from the same address within grace", []step{
			{at: minute, mac: macsA[0], from: addrA},
			{at: minute + 30*time.Second, mac: macsA[0], from: addrA},
			{at: minute + 119*time.Second, mac: macsA[1], from: addrA},
		}},
		{"replay after grace", []step{
			{at: minute, mac: macsA[0], from: addrA},
			{at: minute + 2*minute, mac: macsA[0], from: addrA, wantErr: ErrReplayed},
		}},
		{"replay from another address within grace", []step{
			{at: minute, mac: macsA[0], from: addrA},
			{at: minute + time.Second, mac: macsA[0], from: addrB, wantErr: ErrReplayed},
		}},
		{"expired before first use", []step{{at: 30 * minute, mac: macsA[0], from: addrA, wantErr: ErrExpired}}},
		{"used just before expiry, retried within grace after it", []step{
			{at: 30*minute - time.Second, mac: macsA[0], from: addrA},
			{at: 30*minute + time.Second, mac: macsA[0], from: addrA},
		}},
		{"other MAC", []step{{at: minute, mac: "52:54:00:99:99:99", from: addrA, wantErr: ErrWrongHost}}},
		{"other host", []step{{at: minute, host: &hostB, from: addrA, wantErr: ErrWrongHost}}},
		{"same name, other UID", []step{{at: minute, host: &HostKey{Namespace: "metal", Name: "rack7-u12", UID: "uid-new"}, from: addrA, wantErr: ErrWrongHost}}},
		{"nothing to bind to", []step{{at: minute, from: addrA, wantErr: ErrWrongHost}}},
		{"garbage MAC", []step{{at: minute, mac: "not-a-mac", from: addrA, wantErr: ErrWrongHost}}},
		{"wrong host does not consume", []step{
			{at: minute, mac: "52:54:00:99:99:99", from: addrB, wantErr: ErrWrongHost},
			{at: minute, mac: macsA[0], from: addrA},
		}},
		{"malformed", []step{{at: minute, cred: "abc", mac: macsA[0], from: addrA, wantErr: ErrInvalid}}},
		{"unknown", []step{{at: minute, cred: strings.Repeat("A", 43), mac: macsA[0], from: addrA, wantErr: ErrInvalid}}},
		{"padded base64 is not accepted", []step{{at: minute, cred: "=", mac: macsA[0], from: addrA, wantErr: ErrInvalid}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := New(Options{Now: func() time.Time { return t0 }})
			cred, rec, err := m.Issue(ctx, hostA, macsA, IssueOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if rec.ExpiresAt != t0.Add(DefaultTTL) || rec.GraceSeconds != 120 || rec.MACs[1] != "52:54:00:12:34:57" {
				t.Fatalf("record %+v", rec)
			}
			for i, s := range tc.steps {
				c := s.cred
				if c == "" {
					c = cred
				}
				got, err := m.Verify(ctx, Request{Credential: c, MAC: s.mac, Host: s.host, RemoteAddr: s.from, Now: t0.Add(s.at)})
				if !errors.Is(err, s.wantErr) || (s.wantErr == nil && err != nil) {
					t.Fatalf("step %d: err %v, want %v", i, err, s.wantErr)
				}
				if err == nil && (got.ConsumedAt == nil || got.ConsumedFrom != s.from.String() || got.Host != hostA) {
					t.Fatalf("step %d: record %+v", i, got)
				}
			}
		})
	}
}

func TestNewBootInvalidatesOldCredential(t *testing.T) {
	ctx := context.Background()
	m := New(Options{})
	old, _, err := m.Issue(ctx, hostA, macsA, IssueOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cur, _, err := m.Issue(ctx, hostA, macsA, IssueOptions{TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if old == cur {
		t.Fatal("two credentials are equal")
	}
	if _, err := m.Verify(ctx, Request{Credential: old, MAC: macsA[0], RemoteAddr: addrA}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("old credential: %v, want ErrInvalid", err)
	}
	if _, err := m.Verify(ctx, Request{Credential: cur, MAC: macsA[0], RemoteAddr: addrA}); err != nil {
		t.Fatalf("current credential: %v", err)
	}
	if err := m.Revoke(ctx, hostA); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Verify(ctx, Request{Credential: cur, MAC: macsA[0], RemoteAddr: addrA}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("revoked credential: %v, want ErrInvalid", err)
	}
}

func TestConcurrentFirstUseHasOneWinner(t *testing.T) {
	ctx := context.Background()
	m := New(Options{})
	cred, _, err := m.Issue(ctx, hostA, macsA, IssueOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const n = 32
	var wg sync.WaitGroup
	results := make([]error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			from := netip.AddrFrom4([4]byte{198, 51, 100, byte(i + 1)})
			_, results[i] = m.Verify(ctx, Request{Credential: cred, MAC: macsA[0], RemoteAddr: from})
		}(i)
	}
	wg.Wait()
	ok := 0
	for i, err := range results {
		switch {
		case err == nil:
			ok++
		case !errors.Is(err, ErrReplayed):
			t.Errorf("request %d: %v", i, err)
		}
	}
	if ok != 1 {
		t.Fatalf("%d requests from different addresses succeeded, want exactly 1", ok)
	}
}

// TestRecordSurvivesRestart serializes the store's record as a persisting
// Store would (e.g. in Host status) and verifies with a fresh Manager.
func TestRecordSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	m := New(Options{})
	cred, rec, err := m.Issue(ctx, hostA, macsA, IssueOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Verify(ctx, Request{Credential: cred, MAC: macsA[0], RemoteAddr: addrA}); err != nil {
		t.Fatal(err)
	}
	stored, err := m.Store().Get(ctx, rec.Hash)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(stored)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), cred) {
		t.Fatal("serialized record contains the plaintext credential")
	}
	var back Record
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	s2 := NewMemoryStore()
	if err := s2.Put(ctx, back); err != nil {
		t.Fatal(err)
	}
	m2 := New(Options{Store: s2})
	// Still consumed after the restart: same address within grace is fine,
	// another address is a replay.
	if _, err := m2.Verify(ctx, Request{Credential: cred, MAC: macsA[0], RemoteAddr: addrA}); err != nil {
		t.Fatalf("after restart, same address: %v", err)
	}
	if _, err := m2.Verify(ctx, Request{Credential: cred, MAC: macsA[0], RemoteAddr: addrB}); !errors.Is(err, ErrReplayed) {
		t.Fatalf("after restart, other address: %v, want ErrReplayed", err)
	}
}

func TestIssueValidation(t *testing.T) {
	m := New(Options{})
	for _, tc := range []struct {
		host HostKey
		macs []string
	}{
		{HostKey{}, macsA},
		{hostA, nil},
		{hostA, []string{"zz:zz"}},
	} {
		if _, _, err := m.Issue(context.Background(), tc.host, tc.macs, IssueOptions{}); err == nil {
			t.Errorf("Issue(%v, %v) succeeded", tc.host, tc.macs)
		}
	}
}

func TestCredentialFormat(t *testing.T) {
	m := New(Options{})
	seen := map[string]bool{}
	for i := 0; i < 50; i++ {
		cred, rec, err := m.Issue(context.Background(), HostKey{Namespace: "n", Name: fmt.Sprint(i)}, macsA, IssueOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(cred) != 43 || strings.ContainsAny(cred, "+/=") {
			t.Fatalf("credential %q is not 32 bytes of unpadded base64url", cred)
		}
		if seen[cred] {
			t.Fatal("credential repeated")
		}
		seen[cred] = true
		if HashCredential(cred) != rec.Hash || len(rec.Hash) != 64 || rec.HashPrefix() != rec.Hash[:12] {
			t.Fatalf("hash mismatch: %s vs %s", HashCredential(cred), rec.Hash)
		}
	}
}

func TestNormalizeMAC(t *testing.T) {
	for in, want := range map[string]string{
		"52:54:00:AB:cd:01":       "52:54:00:ab:cd:01",
		"52-54-00-ab-cd-01":       "52:54:00:ab:cd:01",
		"525400abcd01":            "52:54:00:ab:cd:01",
		"5254.00ab.cd01":          "52:54:00:ab:cd:01",
		"52:54:00:ab:cd":          "",
		"../../etc":               "",
		"00:00:00:00:00:00:00:01": "",
	} {
		got, err := NormalizeMAC(in)
		if got != want || (err == nil) != (want != "") {
			t.Errorf("NormalizeMAC(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// TestBoundTo: a credential bound to an address is refused elsewhere,
// without being consumed.
func TestBoundTo(t *testing.T) {
	ctx := context.Background()
	m, cred := boundCredential(t)
	if _, err := m.Verify(ctx, Request{Credential: cred, MAC: macsA[0], RemoteAddr: addrB}); !errors.Is(err, ErrWrongAddress) {
		t.Fatalf("from another address: %v, want ErrWrongAddress", err)
	}
	if _, err := m.Verify(ctx, Request{Credential: cred, MAC: macsA[0], RemoteAddr: addrA}); err != nil {
		t.Fatalf("from the bound address after a refusal elsewhere: %v", err)
	}
}

// Check verifies without using the credential: an installer checks in
// (twice), and the installed OS still gets its one use after that.
func TestCheckDoesNotConsume(t *testing.T) {
	ctx := context.Background()
	m, cred := boundCredential(t)
	for _, tc := range []struct {
		name string
		req  Request
		want error
	}{
		{"other address", Request{Credential: cred, MAC: macsA[0], RemoteAddr: addrB, Now: t0.Add(minute)}, ErrWrongAddress},
		{"other MAC", Request{Credential: cred, MAC: "52:54:00:99:99:99", RemoteAddr: addrA, Now: t0.Add(minute)}, ErrWrongHost},
		{"malformed", Request{Credential: "abc", MAC: macsA[0], RemoteAddr: addrA, Now: t0.Add(minute)}, ErrInvalid},
		{"expired", Request{Credential: cred, MAC: macsA[0], RemoteAddr: addrA, Now: t0.Add(DefaultTTL)}, ErrExpired},
		{"installer checks in", Request{Credential: cred, MAC: macsA[0], RemoteAddr: addrA, Now: t0.Add(minute)}, nil},
		{"and reports", Request{Credential: cred, MAC: macsA[1], RemoteAddr: addrA, Now: t0.Add(5 * minute)}, nil},
	} {
		got, err := m.Check(ctx, tc.req)
		if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
			t.Fatalf("%s: err %v, want %v", tc.name, err, tc.want)
		}
		if err == nil && (got.ConsumedAt != nil || got.Host != hostA) {
			t.Fatalf("%s: record %+v", tc.name, got)
		}
	}
	// The OS's use, then Check refuses: the credential is spent.
	if _, err := m.Verify(ctx, Request{Credential: cred, MAC: macsA[0], RemoteAddr: addrA, Now: t0.Add(10 * minute)}); err != nil {
		t.Fatalf("first use after the checks: %v", err)
	}
	if _, err := m.Check(ctx, Request{Credential: cred, MAC: macsA[0], RemoteAddr: addrA, Now: t0.Add(10 * minute)}); !errors.Is(err, ErrReplayed) {
		t.Fatalf("check after use: %v, want ErrReplayed", err)
	}
}

// boundCredential issues hostA a credential bound to addrA.
func boundCredential(t *testing.T) (*Manager, string) {
	t.Helper()
	store := NewMemoryStore()
	m := New(Options{Store: store, Now: func() time.Time { return t0 }})
	cred, rec, err := m.Issue(context.Background(), hostA, macsA, IssueOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rec.BoundTo = addrA.String()
	if err := store.Put(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	return m, cred
}
