package ticket

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/internal/netguard"
	"anvil.dev/anvil/test/tickettest"
)

// The Standard Webhooks test vector, as published with the specification's
// reference libraries.
const (
	vecSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	vecID     = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	vecTS     = 1614265330
	vecBody   = `{"test": 2432232314}`
	vecSig    = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

func TestSignMatchesSpecVector(t *testing.T) {
	sec, err := ParseSecret(vecSecret)
	if err != nil {
		t.Fatal(err)
	}
	if got := sec.Sign(vecID, time.Unix(vecTS, 0), []byte(vecBody)); got != vecSig {
		t.Fatalf("Sign = %s, want %s", got, vecSig)
	}
	// The test receiver's independent implementation agrees.
	if got, err := tickettest.SpecSign(vecSecret, vecID, vecTS, []byte(vecBody)); err != nil || got != vecSig {
		t.Fatalf("tickettest.SpecSign = %s, %v; want %s", got, err, vecSig)
	}
}

func TestVerify(t *testing.T) {
	sec, _ := ParseSecret(vecSecret)
	other, _ := ParseSecret(NewSecret())
	now := time.Unix(vecTS, 0)
	hdr := func(id, ts, sig string) http.Header {
		h := http.Header{}
		for k, v := range map[string]string{HeaderID: id, HeaderTimestamp: ts, HeaderSignature: sig} {
			if v != "" {
				h.Set(k, v)
			}
		}
		return h
	}
	otherSig := other.Sign(vecID, now, []byte(vecBody))
	tests := []struct {
		name string
		h    http.Header
		body string
		now  time.Time
		want error
	}{
		{"valid", hdr(vecID, "1614265330", vecSig), vecBody, now, nil},
		{"valid among several", hdr(vecID, "1614265330", "v1,bm9wZQ== "+vecSig), vecBody, now, nil},
		{"within tolerance", hdr(vecID, "1614265330", vecSig), vecBody, now.Add(4 * time.Minute), nil},
		{"unsigned", hdr(vecID, "1614265330", ""), vecBody, now, ErrUnsigned},
		{"no id", hdr("", "1614265330", vecSig), vecBody, now, ErrUnsigned},
		{"stale", hdr(vecID, "1614265330", vecSig), vecBody, now.Add(6 * time.Minute), ErrStale},
		{"from the future", hdr(vecID, "1614265330", vecSig), vecBody, now.Add(-6 * time.Minute), ErrStale},
		{"bad timestamp", hdr(vecID, "soon", vecSig), vecBody, now, ErrStale},
		{"body changed", hdr(vecID, "1614265330", vecSig), `{"test": 2432232315}`, now, ErrBadSignature},
		{"id changed", hdr("msg_other", "1614265330", vecSig), vecBody, now, ErrBadSignature},
		{"other secret", hdr(vecID, "1614265330", otherSig), vecBody, now, ErrBadSignature},
		{"wrong version", hdr(vecID, "1614265330", "v2,"+strings.TrimPrefix(vecSig, "v1,")), vecBody, now, ErrBadSignature},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := sec.Verify(tc.h, []byte(tc.body), tc.now, DefaultTolerance); !errors.Is(err, tc.want) {
				t.Fatalf("Verify = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestParseSecretNeverEchoes(t *testing.T) {
	for _, s := range []string{"MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_!!notbase64!!", "whsec_c2hvcnQ=", "whsec_" + strings.Repeat("QUFB", 30)} {
		_, err := ParseSecret(s)
		if err == nil {
			t.Fatalf("ParseSecret accepted %q", s)
		}
		if strings.Contains(err.Error(), strings.TrimPrefix(s, "whsec_")) {
			t.Fatalf("error repeats the secret: %v", err)
		}
	}
	sec, _ := ParseSecret(vecSecret)
	for _, f := range []string{"%v", "%+v", "%#v", "%s", "%x", "%q"} {
		if got := fmt.Sprintf(f, sec); strings.Contains(got, "MfKQ") || strings.Contains(got, "31f290") || (f != "%x" && !strings.Contains(got, "redacted")) {
			t.Fatalf("%s of a Secret = %q", f, got)
		}
	}
}

func TestGuard(t *testing.T) {
	deny, allow := Guard{}, Guard{netguard.Guard{AllowLoopback: true, AllowLinkLocal: true}}
	tests := []struct {
		url         string
		deny, allow bool // accepted by each
	}{
		{"https://tickets.example.com/hook", true, true},
		{"http://10.1.2.3:8080/hook", true, true},
		{"http://192.168.1.10/hook", true, true},
		{"http://127.0.0.1:9000/hook", false, true},
		{"http://[::1]:9000/hook", false, true},
		{"http://localhost/hook", false, true},
		{"http://169.254.169.254/latest/meta-data", false, false}, // metadata: only an explicit Allow opens it
		{"http://169.254.1.1/hook", false, true},
		{"http://[fe80::1]/hook", false, true},
		{"http://0.0.0.0/hook", false, false},
		{"http://224.0.0.1/hook", false, false},
		{"ftp://tickets.example.com/", false, false},
		{"file:///etc/passwd", false, false},
		{"gopher://x/", false, false},
		{"https://user:pw@tickets.example.com/", false, false},
		{"https:///nohost", false, false},
	}
	for _, tc := range tests {
		if _, err := deny.CheckURL(tc.url); (err == nil) != tc.deny {
			t.Errorf("default guard, %s: err=%v, want accepted=%t", tc.url, err, tc.deny)
		}
		if _, err := allow.CheckURL(tc.url); (err == nil) != tc.allow {
			t.Errorf("permissive guard, %s: err=%v, want accepted=%t", tc.url, err, tc.allow)
		}
	}
	// At dial time: a name resolving to loopback is refused too.
	for _, addr := range []string{"127.0.0.1:80", "[::1]:80", "169.254.169.254:80"} {
		if err := deny.Control("tcp", addr, nil); !errors.Is(err, netguard.ErrDenied) {
			t.Errorf("control(%s) = %v, want denied", addr, err)
		}
	}
	if err := deny.Control("tcp", "10.0.0.1:443", nil); err != nil {
		t.Errorf("control(10.0.0.1) = %v", err)
	}
}

// A real dial through the guarded client is refused before connecting.
func TestGuardedClientRefusesLoopback(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	// A name, not an IP literal: only the dial-time check can catch it.
	url := "http://localhost:" + strings.Split(ln.Addr().String(), ":")[1] + "/"
	resp, err := Guard{}.HTTPClient().Get(url)
	if err == nil {
		resp.Body.Close()
		t.Fatal("guarded client reached a loopback listener")
	}
	if !errors.Is(err, netguard.ErrDenied) {
		t.Fatalf("error = %v, want the guard's refusal", err)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"", 0}, {"0", 0}, {"-5", 0}, {"soon", 0},
		{"120", 2 * time.Minute},
		{"999999999", maxRetryAfter},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0},
	}
	for _, tc := range tests {
		if got := parseRetryAfter(tc.in, now); got != tc.want {
			t.Errorf("parseRetryAfter(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestBackoffBounds(t *testing.T) {
	b := Backoff{Base: time.Second, Max: time.Hour}
	for n := int32(1); n <= 40; n++ {
		full := min(time.Second<<min(n-1, 30), time.Hour)
		for range 20 {
			if d := b.after(n); d < full/2 || d > full {
				t.Fatalf("after(%d) = %s, want within [%s, %s]", n, d, full/2, full)
			}
		}
	}
}

func TestParseTicket(t *testing.T) {
	tests := []struct{ body, id, url string }{
		{`{"ticket":{"id":"OPS-12","url":"https://jira.example/OPS-12"}}`, "OPS-12", "https://jira.example/OPS-12"},
		{`{"ticket":{"id":4711}}`, "4711", ""},
		{`{"ticket":{"id":"x","url":"javascript:alert(1)"}}`, "x", ""},
		{`{"ok":true}`, "", ""},
		{`not json`, "", ""},
	}
	for _, tc := range tests {
		if id, u := parseTicket([]byte(tc.body)); id != tc.id || u != tc.url {
			t.Errorf("parseTicket(%s) = %q %q, want %q %q", tc.body, id, u, tc.id, tc.url)
		}
	}
}

func TestDeliveryNameStable(t *testing.T) {
	a := DeliveryName("m1", "uid-1", HardwareRequested, "", "ops")
	if a != DeliveryName("m1", "uid-1", HardwareRequested, "", "ops") {
		t.Fatal("DeliveryName is not deterministic")
	}
	for _, other := range []string{
		DeliveryName("m1", "uid-2", HardwareRequested, "", "ops"),
		DeliveryName("m1", "uid-1", HardwareFulfilled, "", "ops"),
		DeliveryName("m1", "uid-1", HardwareRequested, "2", "ops"),
		DeliveryName("m1", "uid-1", HardwareRequested, "", "ops2"),
	} {
		if other == a {
			t.Fatalf("two events share the name %s", a)
		}
	}
	long := DeliveryName(strings.Repeat("a-", 100), "u", HostFailed, "", "e")
	if len(long) > 80 || strings.Contains(long, "-.") {
		t.Fatalf("long name %q", long)
	}
	if id := WebhookID("u", HardwareRequested, ""); id != WebhookID("u", HardwareRequested, "") || id == WebhookID("u", HardwareCancelled, "") {
		t.Fatal("WebhookID not stable per event or not distinct across events")
	}
}

func td(name, typ, inst string, at int, st metalv1.TicketDeliveryState, attempts int32) metalv1.TicketDelivery {
	d := metalv1.TicketDelivery{}
	d.Name = name
	d.Spec.EventType, d.Spec.Instance = typ, inst
	d.Spec.EnqueuedAt = metav1.NewMicroTime(time.Unix(1000+int64(at), 0))
	d.Status.State, d.Status.Attempts = st, attempts
	return d
}

const P, D, F, S = metalv1.TicketPending, metalv1.TicketDelivered, metalv1.TicketFailed, metalv1.TicketSuperseded

func TestDecide(t *testing.T) {
	tests := []struct {
		name string
		me   metalv1.TicketDelivery
		sibs []metalv1.TicketDelivery
		want decision
	}{
		{"alone", td("req", HardwareRequested, "", 0, "", 0), nil, proceed},
		{"fulfilled waits for its request", td("ful", HardwareFulfilled, "", 1, "", 0), []metalv1.TicketDelivery{td("req", HardwareRequested, "", 0, P, 3)}, waitTurn},
		{"fulfilled waits even if filed first by the clock", td("ful", HardwareFulfilled, "", 0, "", 0), []metalv1.TicketDelivery{td("req", HardwareRequested, "", 5, P, 0)}, waitTurn},
		{"fulfilled after delivered request", td("ful", HardwareFulfilled, "", 1, "", 0), []metalv1.TicketDelivery{td("req", HardwareRequested, "", 0, D, 1)}, proceed},
		{"fulfilled after refused request", td("ful", HardwareFulfilled, "", 1, "", 0), []metalv1.TicketDelivery{td("req", HardwareRequested, "", 0, F, 1)}, proceed},
		{"request superseded by its cancellation", td("req", HardwareRequested, "", 0, P, 2), []metalv1.TicketDelivery{td("can", HardwareCancelled, "", 1, "", 0)}, supersede},
		{"cancellation waits for the request to stop", td("can", HardwareCancelled, "", 1, "", 0), []metalv1.TicketDelivery{td("req", HardwareRequested, "", 0, P, 2)}, waitTurn},
		{"cancellation sent when the request may have arrived", td("can", HardwareCancelled, "", 1, "", 0), []metalv1.TicketDelivery{td("req", HardwareRequested, "", 0, S, 2)}, proceed},
		{"cancellation dropped when the request never left", td("can", HardwareCancelled, "", 1, "", 0), []metalv1.TicketDelivery{td("req", HardwareRequested, "", 0, S, 0)}, supersede},
		{"another instance's cancellation is not ours", td("req", HardwareRequested, "2", 5, P, 0), []metalv1.TicketDelivery{td("can", HardwareCancelled, "1", 3, D, 1), td("req1", HardwareRequested, "1", 0, S, 1)}, proceed},
		{"earlier event of the object goes first", td("pw2", PowerActionRequested, "b", 5, "", 0), []metalv1.TicketDelivery{td("pw1", PowerActionRequested, "a", 1, P, 1)}, waitTurn},
		{"finished earlier events do not block", td("pw2", PowerActionRequested, "b", 5, "", 0), []metalv1.TicketDelivery{td("pw1", PowerActionRequested, "a", 1, D, 1)}, proceed},
		{"later events do not block", td("pw1", PowerActionRequested, "a", 1, "", 0), []metalv1.TicketDelivery{td("pw2", PowerActionRequested, "b", 5, P, 0)}, proceed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sibs := append([]metalv1.TicketDelivery{tc.me}, tc.sibs...)
			if got, why := decide(&tc.me, sibs); got != tc.want {
				t.Fatalf("decide = %d (%s), want %d", got, why, tc.want)
			}
		})
	}
}

// Waiting can never form a cycle, whatever the clocks: among any set of
// pending deliveries exactly one may proceed first.
func TestDecideNeverDeadlocks(t *testing.T) {
	set := []metalv1.TicketDelivery{
		td("a", HardwareRequested, "1", 3, P, 0),
		td("b", HardwareFulfilled, "1", 1, P, 0), // clock said earlier than its request
		td("c", HardwareRequested, "2", 2, P, 0),
		td("d", PowerActionRequested, "x", 2, P, 0),
	}
	free := 0
	for i := range set {
		if st, _ := decide(&set[i], set); st == proceed {
			free++
		}
	}
	if free != 1 {
		t.Fatalf("%d deliveries may proceed, want exactly 1", free)
	}
}

func TestHardwareRequestMovesForward(t *testing.T) {
	filed := &metalv1.HardwareRequest{ID: "T-1", URL: "http://t/1", State: metalv1.HardwareRequestFiled}
	rejected := &metalv1.HardwareRequest{ID: "T-1", State: metalv1.HardwareRequestRejected, LastError: "no budget"}
	tests := []struct {
		name string
		cur  *metalv1.HardwareRequest
		u    hwUpdate
		want *metalv1.HardwareRequest // nil: no change
	}{
		{"first filing", nil, hwUpdate{reset: true, state: metalv1.HardwareRequestPending}, &metalv1.HardwareRequest{State: metalv1.HardwareRequestPending}},
		{"filed", &metalv1.HardwareRequest{State: metalv1.HardwareRequestPending, LastError: "HTTP 503"}, hwUpdate{state: metalv1.HardwareRequestFiled, id: "T-1", url: "http://t/1"}, filed},
		{"late failure does not undo a filing", filed, hwUpdate{state: metalv1.HardwareRequestFailed, lastError: "HTTP 400"}, nil},
		{"second endpoint's ticket does not replace the first", filed, hwUpdate{state: metalv1.HardwareRequestFiled, id: "T-9"}, nil},
		{"rejected", filed, hwUpdate{state: metalv1.HardwareRequestRejected, lastError: "no budget"}, &metalv1.HardwareRequest{ID: "T-1", URL: "http://t/1", State: metalv1.HardwareRequestRejected, LastError: "no budget"}},
		{"late filing does not undo a rejection", rejected, hwUpdate{state: metalv1.HardwareRequestFiled, id: "T-1"}, nil},
		{"note while pending", &metalv1.HardwareRequest{State: metalv1.HardwareRequestPending}, hwUpdate{noteOnly: true, lastError: "connection refused"}, &metalv1.HardwareRequest{State: metalv1.HardwareRequestPending, LastError: "connection refused"}},
		{"no note once filed", filed, hwUpdate{noteOnly: true, lastError: "connection refused"}, nil},
		{"a new request resets", rejected, hwUpdate{reset: true, state: metalv1.HardwareRequestPending}, &metalv1.HardwareRequest{State: metalv1.HardwareRequestPending}},
		{"a filing synced after the fulfilment keeps the state, adds the ticket", &metalv1.HardwareRequest{State: metalv1.HardwareRequestFulfilled},
			hwUpdate{state: metalv1.HardwareRequestFiled, id: "T-1", url: "http://t/1"}, &metalv1.HardwareRequest{ID: "T-1", URL: "http://t/1", State: metalv1.HardwareRequestFulfilled}},
		{"nor does it replace a ticket already shown", &metalv1.HardwareRequest{ID: "T-1", URL: "http://t/1", State: metalv1.HardwareRequestFulfilled},
			hwUpdate{state: metalv1.HardwareRequestFiled, id: "T-9", url: "http://t/9"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.u.apply(tc.cur)
			if (got == nil) != (tc.want == nil) || (got != nil && !equalHW(got, tc.want)) {
				t.Fatalf("apply = %+v, want %+v", got, tc.want)
			}
		})
	}
}
