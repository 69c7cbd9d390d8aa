package ticket_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/test/tickettest"
	"anvil.dev/anvil/ticket"
)

// secretReads counts the Secret GETs that reach the API server through
// the handler's APIReader.
type secretReads struct {
	client.Reader
	n atomic.Int32
}

func (c *secretReads) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*corev1.Secret); ok {
		c.n.Add(1)
	}
	return c.Reader.Get(ctx, key, obj, opts...)
}

type guardedEnv struct {
	*callbackEnv
	base   string // srv.URL + PathPrefix + ns
	reads  *secretReads
	cached client.Client
}

func newGuardedEnv(t *testing.T, burst int, every time.Duration) *guardedEnv {
	t.Helper()
	ns := env.Namespace(t)
	rcv := endpointWithReceiver(t, ns, "ops", nil)
	m := startManager(t, ns, ticket.SetupOptions{Delivery: testDelivery()}, nil)
	reads := &secretReads{Reader: m.mgr.GetAPIReader()}
	h := ticket.NewHandler(ticket.HandlerOptions{Client: m.mgr.GetClient(), APIReader: reads, Logger: m.mgr.GetLogger().WithName("callbacks"),
		FailureBurst: burst, FailureEvery: every})
	mux := http.NewServeMux()
	mux.Handle(ticket.PathPrefix, h)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	waitReady(t, ns, "ops")
	base := srv.URL + ticket.PathPrefix + ns
	return &guardedEnv{callbackEnv: &callbackEnv{ns: ns, url: base + "/ops", rcv: rcv}, base: base, reads: reads, cached: m.mgr.GetClient()}
}

// answer is everything a prober sees of a response but its Date.
type answer struct {
	status int
	header http.Header
	body   string
}

// forged posts a callback signed with a secret that is not the
// endpoint's, from the local address from (nil: any).
func forged(t *testing.T, url string, from net.IP) answer {
	t.Helper()
	body := []byte(`{"type":"hardware.rejected","timestamp":"2026-01-01T00:00:00Z","data":{"machine":"m","reason":"x"}}`)
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	must(t, err)
	must(t, tickettest.SignRequest(req, "whsec_"+strings.Repeat("QUFB", 8), tickettest.NewMessageID(), time.Now(), body))
	c := http.DefaultClient
	if from != nil {
		c = &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: from}}).DialContext}}
	}
	resp, err := c.Do(req)
	must(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	resp.Header.Del("Date")
	return answer{resp.StatusCode, resp.Header, string(b)}
}

// Forged callbacks cost no API request: the signing Secret comes from a
// memo checked against the metadata cache, read once, and again only when
// the Secret changed (a rotation works without a restart).
func TestForgedCallbacksDoNotReadTheSecret(t *testing.T) {
	ctx := context.Background()
	ge := newGuardedEnv(t, 1000, time.Second)
	m := newMachine(t, ge.ns, "m", nil)
	m.Status.HardwareRequest = &metalv1.HardwareRequest{State: metalv1.HardwareRequestFiled, ID: "T-1"}
	must(t, env.Client.Status().Update(ctx, m))
	for i := range 20 {
		if a := forged(t, ge.url, nil); a.status != http.StatusUnauthorized {
			t.Fatalf("forged callback %d: %d %s", i, a.status, a.body)
		}
	}
	if n := ge.reads.n.Load(); n > 1 {
		t.Fatalf("20 forged callbacks read the Secret %d times from the API server, want at most 1", n)
	}
	res, err := ge.rcv.Callback(ctx, ge.url, ticket.CallbackHardwareRejected, map[string]any{"machine": "m", "reason": "no budget"})
	must(t, err)
	if res.Status != http.StatusOK {
		t.Fatalf("signed callback: %d %s", res.Status, res.Body)
	}
	before := ge.reads.n.Load()

	// Rotate: the new secret is used once the watch has seen the change.
	sec := &corev1.Secret{}
	must(t, env.Client.Get(ctx, client.ObjectKey{Namespace: ge.ns, Name: "ops-key"}, sec))
	rotated := newSecretValue()
	sec.Data["secret"] = []byte(rotated)
	must(t, env.Client.Update(ctx, sec))
	waitFor(t, "the cache saw the rotation", 30*time.Second, func() bool {
		pom := &metav1.PartialObjectMetadata{}
		pom.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
		return ge.cached.Get(ctx, client.ObjectKeyFromObject(sec), pom) == nil && pom.ResourceVersion == sec.ResourceVersion
	})
	signer, err := tickettest.Start(tickettest.Options{Secret: rotated})
	must(t, err)
	defer signer.Close()
	res, err = signer.Callback(ctx, ge.url, ticket.CallbackHardwareRejected, map[string]any{"machine": "m", "reason": "still no budget"})
	must(t, err)
	if res.Status == http.StatusUnauthorized {
		t.Fatalf("callback signed with the rotated secret: %d %s", res.Status, res.Body)
	}
	if n := ge.reads.n.Load() - before; n != 1 {
		t.Fatalf("the rotation cost %d Secret reads, want 1", n)
	}
}

// A source that keeps sending refused callbacks is answered 429 before
// any lookup, valid ones included, until its budget refills; other
// sources are not affected.
func TestRefusedCallbacksAreRateLimited(t *testing.T) {
	ctx := context.Background()
	ge := newGuardedEnv(t, 3, time.Hour)
	for i := range 3 {
		if a := forged(t, ge.url, nil); a.status != http.StatusUnauthorized {
			t.Fatalf("forged callback %d: %d %s", i, a.status, a.body)
		}
	}
	before := ge.reads.n.Load()
	for _, url := range []string{ge.url, ge.base + "/nope"} {
		if a := forged(t, url, nil); a.status != http.StatusTooManyRequests || a.header.Get("Retry-After") == "" {
			t.Fatalf("forged callback over the budget to %s: %d %v %s, want 429 with Retry-After", url, a.status, a.header, a.body)
		}
	}
	res, err := ge.rcv.Callback(ctx, ge.url, ticket.CallbackHardwareRejected, map[string]any{"machine": "m", "reason": "x"})
	must(t, err)
	if res.Status != http.StatusTooManyRequests {
		t.Fatalf("signed callback from the limited source: %d %s, want 429", res.Status, res.Body)
	}
	if n := ge.reads.n.Load(); n != before {
		t.Fatalf("limited requests read the Secret %d times", n-before)
	}
	if a := forged(t, ge.url, net.IPv4(127, 0, 0, 2)); a.status != http.StatusUnauthorized {
		t.Fatalf("another source: %d %s, want 401", a.status, a.body)
	}
}

// A wrong signature for an endpoint that exists and any callback for one
// that does not get the same answer, for the same work: neither reads
// anything from the API server.
func TestMissingEndpointAnswersLikeBadSignature(t *testing.T) {
	ge := newGuardedEnv(t, 1000, time.Second)
	forged(t, ge.url, nil) // the first lookup fills the memo
	before := ge.reads.n.Load()
	exists := forged(t, ge.url, nil)
	missing := forged(t, ge.base+"/nope", nil)
	if exists.status != http.StatusUnauthorized || exists.status != missing.status || exists.body != missing.body || !equalHeaders(exists.header, missing.header) {
		t.Fatalf("answers differ:\n existing endpoint %d %v %q\n missing endpoint  %d %v %q", exists.status, exists.header, exists.body, missing.status, missing.header, missing.body)
	}
	for range 5 {
		forged(t, ge.url, nil)
		forged(t, ge.base+"/nope", nil)
	}
	if n := ge.reads.n.Load() - before; n != 0 {
		t.Fatalf("refused callbacks read the Secret %d times from the API server (existing endpoint costs more than a missing one)", n)
	}
}

func equalHeaders(a, b http.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if strings.Join(v, ",") != strings.Join(b[k], ",") {
			return false
		}
	}
	return true
}
