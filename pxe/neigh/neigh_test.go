package neigh

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A two-CPU /proc/net/stat/arp_cache as kernel 6.18 prints it.
const arpCache = `entries  allocs   destroys hash_grows lookups  hits     res_failed rcv_probes_mcast rcv_probes_ucast periodic_gc_runs forced_gc_runs unresolved_discards table_fulls
00000001 00002bd4 00003420 00000006   0000599b 00004e3e 00000561   00000000         00000000         00000f46         00005d15       00000000            00005815
00000001 00002f19 000026cc 00000002   00006028 000055cf 000004f2   00000000         00000000         00000000         00006127       00000000            00005b55
`

func TestParseTableFulls(t *testing.T) {
	tests := []struct {
		name, in string
		want     uint64
		err      string
	}{
		{"two CPUs", arpCache, 0x5815 + 0x5b55, ""},
		{"no CPU lines", strings.SplitN(arpCache, "\n", 2)[0] + "\n", 0, ""},
		{"no column", "entries allocs\n00000001 00000002\n", 0, "no table_fulls column"},
		{"short line", "entries table_fulls\n00000001\n", 0, "short line"},
		{"not hex", "entries table_fulls\n00000001 zz\n", 0, "table_fulls \"zz\""},
		{"empty", "", 0, "empty statistics"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseTableFulls(strings.NewReader(tt.in))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %d, %v; want %d", got, err, tt.want)
			}
		})
	}
}

func TestFitsAndAdvice(t *testing.T) {
	def := Thresh{GC1: 128, GC2: 512, GC3: 1024}
	tests := []struct {
		hosts int
		t     Thresh
		fits  bool
		want  Thresh
	}{
		{500, def, true, def},
		{768, def, true, def}, // exactly GC3 - Headroom
		{769, def, false, Thresh{GC1: 128, GC2: 513, GC3: 1025}},                                 // one more
		{2000, def, false, Thresh{GC1: 128, GC2: 1128, GC3: 2256}},                               // the storm that failed
		{2000, Thresh{GC1: 4096, GC2: 8192, GC3: 16384}, true, Thresh{4096, 8192, 16384}},        // raised: kept
		{100, Thresh{GC1: 900, GC2: 100, GC3: 200}, false, Thresh{GC1: 178, GC2: 178, GC3: 356}}, // GC1 never above GC2
	}
	for _, tt := range tests {
		if got := Fits(tt.hosts, tt.t); got != tt.fits {
			t.Errorf("Fits(%d, %+v) = %v, want %v", tt.hosts, tt.t, got, tt.fits)
		}
		got := Advice(tt.hosts, tt.t)
		if got != tt.want {
			t.Errorf("Advice(%d, %+v) = %+v, want %+v", tt.hosts, tt.t, got, tt.want)
		}
		if !Fits(tt.hosts, got) {
			t.Errorf("Advice(%d, %+v) = %+v does not fit", tt.hosts, tt.t, got)
		}
	}
}

func TestReadWriteThresh(t *testing.T) {
	dir := t.TempDir()
	write := func(name, v string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("gc_thresh1", "128\n")
	write("gc_thresh2", "512\n")
	write("gc_thresh3", "1024\n")
	got, err := ReadThresh(dir)
	if err != nil || got != (Thresh{128, 512, 1024}) {
		t.Fatalf("ReadThresh = %+v, %v", got, err)
	}
	for _, want := range []Thresh{{128, 4096, 8192}, {128, 512, 1024}} {
		if err := WriteThresh(dir, want); err != nil {
			t.Fatal(err)
		}
		if got, err := ReadThresh(dir); err != nil || got != want {
			t.Fatalf("after WriteThresh(%+v): %+v, %v", want, got, err)
		}
	}
	write("gc_thresh2", "many\n")
	if _, err := ReadThresh(dir); err == nil || !strings.Contains(err.Error(), "gc_thresh2") {
		t.Fatalf("ReadThresh of a bad value: %v, want an error naming gc_thresh2", err)
	}
	if _, err := ReadThresh(filepath.Join(dir, "missing")); err == nil {
		t.Fatal("ReadThresh of a missing directory: no error")
	}
}
