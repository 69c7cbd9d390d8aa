package proc

import (
	"os"
	"testing"
)

func TestParseStat(t *testing.T) {
	// comm with a space and a parenthesis, as the kernel may report it.
	line := []byte("1234 (my (odd) prog) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 50 30 20 20 0 1 0 100 123456789 2048 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n")
	cpu, rss, err := parseStat(line, false)
	if err != nil {
		t.Fatal(err)
	}
	if cpu != 3.0 { // (250+50) ticks at 100 Hz
		t.Errorf("cpu = %v, want 3", cpu)
	}
	if want := int64(2048 * os.Getpagesize()); rss != want {
		t.Errorf("rss = %d, want %d", rss, want)
	}
	cpu, _, _ = parseStat(line, true)
	if cpu != 3.5 { // plus reaped children 30+20
		t.Errorf("cpu with children = %v, want 3.5", cpu)
	}
	if _, _, err := parseStat([]byte("1 (x) S 1 2"), false); err == nil {
		t.Error("short stat: no error")
	}
}

func TestSampleSelf(t *testing.T) {
	u, err := Sample(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if u.RSS <= 0 || u.CPU < 0 {
		t.Errorf("Sample(self) = %+v", u)
	}
	if _, err := Sample(1 << 30); err == nil {
		t.Error("Sample of a PID that cannot exist: no error")
	}
}
