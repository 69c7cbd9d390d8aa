package netboot

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/go-logr/logr/funcr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"anvil.dev/anvil/pxe/neigh"
)

func TestNeighbourCheck(t *testing.T) {
	dir := t.TempDir()
	set := func(th neigh.Thresh) {
		t.Helper()
		for name, v := range map[string]int{"gc_thresh1": th.GC1, "gc_thresh2": th.GC2, "gc_thresh3": th.GC3} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(strconv.Itoa(v)+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	var logged []string
	log := funcr.New(func(_, args string) { logged = append(logged, args) }, funcr.Options{})
	hosts := 500
	c := &neighbourCheck{dir: dir, hosts: func() int { return hosts }, log: log}

	set(neigh.Thresh{GC1: 128, GC2: 512, GC3: 1024})
	steps := []struct {
		hosts int
		th    *neigh.Thresh
		want  string // a new log line containing this, or "" for none
	}{
		{500, nil, ""},
		{2000, nil, `"set"="net.ipv4.neigh.default.gc_thresh3=2256 net.ipv4.neigh.default.gc_thresh2=1128"`},
		{2100, nil, ""}, // still over: said once
		{2100, &neigh.Thresh{GC1: 128, GC2: 8192, GC3: 16384}, "now holds every Host"},
		{2100, nil, ""},
		{900, &neigh.Thresh{GC1: 128, GC2: 512, GC3: 1024}, "more Hosts boot from this server"},
	}
	for i, s := range steps {
		hosts = s.hosts
		if s.th != nil {
			set(*s.th)
		}
		before := len(logged)
		if !c.check() {
			t.Fatalf("step %d: check reported unreadable limits", i)
		}
		switch got := logged[before:]; {
		case s.want == "" && len(got) != 0:
			t.Errorf("step %d (%d hosts): logged %q, want nothing", i, s.hosts, got)
		case s.want != "" && (len(got) != 1 || !strings.Contains(got[0], s.want)):
			t.Errorf("step %d (%d hosts): logged %q, want one line with %q", i, s.hosts, got, s.want)
		}
	}

	gone := &neighbourCheck{dir: filepath.Join(dir, "absent"), hosts: func() int { return 5000 }, log: log}
	if gone.check() {
		t.Error("check with unreadable limits reported true")
	}
}

func TestNeighbourOverflowsMetric(t *testing.T) {
	path := filepath.Join(t.TempDir(), "arp_cache")
	write := func(a, b string) {
		t.Helper()
		text := "entries table_fulls\n00000001 " + a + "\n00000001 " + b + "\n"
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("0000000a", "00000005")
	reg := prometheus.NewPedanticRegistry()
	registerNeighbourOverflows(reg, path)
	for _, step := range []struct{ a, b, want string }{{"0000000a", "00000005", "15"}, {"00000010", "00000005", "21"}} {
		write(step.a, step.b) // read again at every scrape
		mfs, err := reg.Gather()
		if err != nil || len(mfs) != 1 || len(mfs[0].GetMetric()) != 1 {
			t.Fatalf("gather: %v, %d families", err, len(mfs))
		}
		if got := mfs[0].GetMetric()[0].GetCounter().GetValue(); strconv.FormatFloat(got, 'f', -1, 64) != step.want {
			t.Fatalf("anvil_kernel_arp_table_overflows_total = %v, want %s", got, step.want)
		}
	}

	none := prometheus.NewPedanticRegistry()
	registerNeighbourOverflows(none, filepath.Join(t.TempDir(), "absent"))
	if n, err := testutil.GatherAndCount(none); err != nil || n != 0 {
		t.Fatalf("unreadable statistics: %d metrics registered (%v), want none", n, err)
	}
}
