package tickettest

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

const (
	vecSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	vecSig    = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

func TestSpecVerifyVector(t *testing.T) {
	h := http.Header{}
	h.Set("webhook-id", "msg_p5jXN8AQM9LWM0D4loKWxJek")
	h.Set("webhook-timestamp", "1614265330")
	h.Set("webhook-signature", "v1,bm9wZQ== "+vecSig)
	now := time.Unix(1614265330, 0)
	if err := SpecVerify(vecSecret, h, []byte(`{"test": 2432232314}`), now, 5*time.Minute); err != nil {
		t.Fatalf("vector rejected: %v", err)
	}
	for _, tc := range []struct {
		name string
		body string
		now  time.Time
	}{
		{"other body", `{"test": 1}`, now},
		{"stale", `{"test": 2432232314}`, now.Add(6 * time.Minute)},
	} {
		if err := SpecVerify(vecSecret, h, []byte(tc.body), tc.now, 5*time.Minute); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
}

func TestReceiverFaults(t *testing.T) {
	r, err := Start(Options{Secret: vecSecret})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	send := func(id string) (int, string, error) {
		body := []byte(`{"type":"hardware.requested","data":{"object":{"kind":"Machine","name":"m"}}}`)
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, r.URL, bytes.NewReader(body))
		if err := SignRequest(req, vecSecret, id, time.Now(), body); err != nil {
			t.Fatal(err)
		}
		res, err := Do(req)
		return res.Status, res.Body, err
	}
	code, body, err := send("msg_1")
	if err != nil || code != 200 || !strings.Contains(body, `"id":"T-1"`) {
		t.Fatalf("first: %d %s %v", code, body, err)
	}
	if _, body, _ := send("msg_1"); !strings.Contains(body, `"id":"T-1"`) {
		t.Fatalf("a retry got another ticket: %s", body)
	}
	r.SetFaults(Faults{Status: 410})
	if code, _, _ := send("msg_2"); code != 410 {
		t.Fatalf("Status fault: %d", code)
	}
	r.SetFaults(Faults{FailRate: 1, RetryAfter: "7"})
	if code, _, _ := send("msg_3"); code != 503 {
		t.Fatalf("FailRate fault: %d", code)
	}
	r.SetFaults(Faults{})
	if err := r.SetDown(true); err != nil {
		t.Fatal(err)
	}
	if _, _, err := send("msg_4"); err == nil {
		t.Fatal("a down receiver answered")
	}
	if err := r.SetDown(false); err != nil {
		t.Fatal(err)
	}
	if code, _, err := send("msg_4"); err != nil || code != 200 {
		t.Fatalf("back up: %d %v", code, err)
	}
	got := r.Received()
	if len(got) != 5 || len(r.Accepted()) != 3 || got[0].Object != "Machine/m" || got[0].Type != "hardware.requested" {
		t.Fatalf("recorded %+v", got)
	}
	// Unsigned requests are refused and counted.
	resp, err := http.Post(r.URL, "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 || len(r.Invalid()) != 1 {
		t.Fatalf("unsigned: %d, invalid %v", resp.StatusCode, r.Invalid())
	}
}
