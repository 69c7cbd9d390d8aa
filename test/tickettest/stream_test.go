package tickettest

import "testing"

func TestCheckStream(t *testing.T) {
	req := func(seq int, id string, accepted bool) Delivery {
		return Delivery{Seq: seq, ID: id, Type: "hardware.requested", Object: "Machine/m1", Accepted: accepted}
	}
	ev := func(seq int, id, typ string) Delivery {
		return Delivery{Seq: seq, ID: id, Type: typ, Object: "Machine/m1", Accepted: true}
	}
	for _, tc := range []struct {
		name     string
		got      []Delivery
		problems int
	}{
		{"retried with one id, then fulfilled", []Delivery{req(1, "a", false), req(2, "a", true), ev(3, "b", "hardware.fulfilled")}, 0},
		{"one event, two ids", []Delivery{req(1, "a", true), req(2, "c", true)}, 1},
		{"fulfilled before the request was filed", []Delivery{req(1, "a", false), ev(2, "b", "hardware.fulfilled")}, 1},
		{"request after its cancellation", []Delivery{ev(1, "x", "hardware.cancelled"), req(2, "a", true)}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if p := CheckStream(tc.got); len(p) != tc.problems {
				t.Errorf("problems %q, want %d", p, tc.problems)
			}
		})
	}
}
