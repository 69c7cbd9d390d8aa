package netns

import "testing"

func TestParseCounters(t *testing.T) {
	js := `[{"ifindex":2,"ifname":"abxs","stats64":{"rx":{"bytes":372330,"packets":1211,"errors":0},"tx":{"bytes":410666,"packets":1212,"errors":0}}}]`
	c, err := parseCounters([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	want := IfCounters{TxPackets: 1212, RxPackets: 1211, TxBytes: 410666, RxBytes: 372330}
	if c != want {
		t.Errorf("got %+v, want %+v", c, want)
	}
	for _, bad := range []string{"", "[]", "not json"} {
		if _, err := parseCounters([]byte(bad)); err == nil {
			t.Errorf("parseCounters(%q): no error", bad)
		}
	}
}
