// Package renderbench measures per-host Ignition rendering from a Butane
// template with Anvil's render.Renderer, cold (every host new: template,
// Butane translation, Ignition validation) and cached (the same host asking
// again, as Ignition's fetch retries do), beside the butane CLI run once
// per host, which is what a script-driven provisioning stack does.
package renderbench

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"text/template"
	"time"

	"anvil.dev/anvil/bench/internal/results"
	"anvil.dev/anvil/bench/internal/stats"
	"anvil.dev/anvil/render"
)

// nodeTemplate is a copy of ignition/testdata/node.bu.tmpl: hostname, CA,
// bootstrap kubeconfig with the token, kubelet binary with its hash, agent
// environment, kubelet unit.
//
//go:embed node.bu.tmpl
var nodeTemplate string

// Options sizes the benchmark.
type Options struct {
	Hosts int
	// CLIHosts is the sample rendered with the butane CLI (a process per
	// host is slow; the rate does not depend on the sample size).
	CLIHosts int
	Runs     int
	// RepoRoot is where `go build github.com/coreos/butane/internal` runs
	// (the main module pins butane); ScratchDir receives the binary.
	RepoRoot, ScratchDir string
}

func DefaultOptions() Options { return Options{Hosts: 5000, CLIHosts: 300, Runs: 3} }
func SmokeOptions() Options   { return Options{Hosts: 200, CLIHosts: 10, Runs: 1} }

// Vars returns distinct per-host values: name, MACs, address, token and
// agent credential differ for every host, so no two renders share a
// cache key.
func Vars(i int) render.Vars {
	v := render.SampleVars()
	name := fmt.Sprintf("node-%05d", i)
	v.Hostname = name
	v.MACs = []string{fmt.Sprintf("0e:ab:00:%02x:%02x:%02x", byte(i>>16), byte(i>>8), byte(i))}
	v.Addresses = []string{fmt.Sprintf("198.18.%d.%d", 16+i/250, 1+i%250)}
	v.FailureDomain = fmt.Sprintf("rack-%02d", i%40)
	v.Join.NodeName = name
	v.Join.Token = fmt.Sprintf("%06x.%016x", i, uint64(i)*0x9e3779b97f4a7c15)
	v.Join.ProviderID = fmt.Sprintf("anvil://00000000-0000-0000-0000-%012x", i)
	v.Agent.Credential = fmt.Sprintf("cred-%016x", uint64(i)*0xbf58476d1ce4e5b9)
	v.Extra = map[string]string{"variant": "fcos", "butaneVersion": "1.6.0"}
	return v
}

// Run measures Anvil cold and cached, and the butane CLI.
func Run(ctx context.Context, o Options, logf func(string, ...any)) *results.Render {
	out := &results.Render{Hosts: o.Hosts, Template: "render/testdata/node.bu.tmpl (Butane fcos 1.6.0, 7 files and a unit, per-host token and credential)"}
	cold := results.RenderSubject{Name: "anvil cold", Hosts: o.Hosts}
	cached := results.RenderSubject{Name: "anvil cached", Hosts: o.Hosts}
	for run := range o.Runs {
		r := render.NewRenderer(render.Options{CacheEntries: o.Hosts * 2, CacheBytes: 1 << 30})
		c, err := pass(ctx, r, o.Hosts)
		if err != nil {
			cold.Error = err.Error()
			break
		}
		h, err := pass(ctx, r, o.Hosts)
		if err != nil {
			cached.Error = err.Error()
			break
		}
		if st := r.Stats(); st.Hits < uint64(o.Hosts) {
			cached.Error = fmt.Sprintf("cache answered %d of %d second requests", st.Hits, o.Hosts)
		}
		cold.Runs, cached.Runs = append(cold.Runs, c), append(cached.Runs, h)
		logf("render: run %d/%d: cold %.0f/s (p99 %.2f ms), cached %.0f/s (p99 %.3f ms)", run+1, o.Runs, c.PerSecond, c.P99, h.PerSecond, h.P99)
	}
	out.Subjects = append(out.Subjects, cold, cached, butaneCLI(ctx, o, logf))
	return out
}

func pass(ctx context.Context, r *render.Renderer, hosts int) (results.RenderMeasure, error) {
	lat := make([]float64, 0, hosts)
	start := time.Now()
	for i := range hosts {
		v := Vars(i)
		t0 := time.Now()
		if _, err := r.Ignition(ctx, nodeTemplate, render.VariantFCOS, v); err != nil {
			return results.RenderMeasure{}, fmt.Errorf("host %d: %w", i, err)
		}
		lat = append(lat, float64(time.Since(t0).Microseconds())/1000)
	}
	el := time.Since(start).Seconds()
	return results.RenderMeasure{PerSecond: float64(hosts) / el,
		P50: stats.Finite(stats.Percentile(lat, 50)), P99: stats.Finite(stats.Percentile(lat, 99))}, nil
}

// butaneCLI templates each host's Butane YAML in process (not timed: the
// peer gets its templating for free) and times `butane --strict` on it.
func butaneCLI(ctx context.Context, o Options, logf func(string, ...any)) results.RenderSubject {
	s := results.RenderSubject{Name: "butane CLI per host", Hosts: o.CLIHosts}
	bin := filepath.Join(o.ScratchDir, "butane")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/coreos/butane/internal")
	build.Dir = o.RepoRoot
	if out, err := build.CombinedOutput(); err != nil {
		s.Error = fmt.Sprintf("build butane CLI: %v: %s", err, out)
		return s
	}
	tmpl, err := template.New("node").Funcs(render.FuncMap()).Parse(nodeTemplate)
	if err != nil {
		s.Error = err.Error()
		return s
	}
	docs := make([][]byte, o.CLIHosts)
	for i := range docs {
		var b bytes.Buffer
		if err := tmpl.Execute(&b, Vars(i)); err != nil {
			s.Error = err.Error()
			return s
		}
		docs[i] = b.Bytes()
	}
	for run := range o.Runs {
		lat := make([]float64, 0, len(docs))
		start := time.Now()
		for i, d := range docs {
			t0 := time.Now()
			cmd := exec.CommandContext(ctx, bin, "--strict")
			cmd.Stdin = bytes.NewReader(d)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil || len(out) == 0 {
				s.Error = fmt.Sprintf("host %d: %v: %s", i, err, stderr.String())
				return s
			}
			lat = append(lat, float64(time.Since(t0).Microseconds())/1000)
		}
		m := results.RenderMeasure{PerSecond: float64(len(docs)) / time.Since(start).Seconds(),
			P50: stats.Finite(stats.Percentile(lat, 50)), P99: stats.Finite(stats.Percentile(lat, 99))}
		s.Runs = append(s.Runs, m)
		logf("render: butane CLI run %d/%d: %.0f/s (p99 %.1f ms)", run+1, o.Runs, m.PerSecond, m.P99)
	}
	_ = os.Remove(bin)
	return s
}
