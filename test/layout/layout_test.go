// Package layout checks the shape of the tree: imports point one way between
// top-level folders, the production binaries link no test code, and the
// renderer stays pure. It reads the import graph from `go list`.
package layout

import (
	"encoding/json"
	"io"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"testing"

	"anvil.dev/anvil/test/need"
)

const module = "anvil.dev/anvil"

type pkg struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

// list runs `go list -json` in the repository with args and decodes every
// package it prints.
func list(t *testing.T, args ...string) []pkg {
	t.Helper()
	root, err := need.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", append([]string{"list", "-json=ImportPath,Imports,Deps"}, args...)...)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("go list %v: %v\n%s", args, err, stderr)
	}
	var pkgs []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) == 0 {
		t.Fatalf("go list %v printed no packages", args)
	}
	return pkgs
}

// folder is the top-level folder of one of our packages ("" for others).
func folder(path string) string {
	rest, ok := strings.CutPrefix(path, module+"/")
	if !ok {
		return ""
	}
	top, _, _ := strings.Cut(rest, "/")
	return top
}

// The production binaries link no test code (emulators, the lab, test
// helpers) and no benchmark code; anvil links none of the agent's on-host
// side and anvil-agent none of the controllers.
func TestBinariesLinkNoTestCode(t *testing.T) {
	for _, c := range []struct {
		main      string
		forbidden []string
	}{
		{"./cmd/anvil", []string{module + "/test/", module + "/bench/", module + "/agent/onhost/"}},
		{"./cmd/anvil-agent", []string{module + "/test/", module + "/bench/", module + "/agent/server", module + "/boot/",
			module + "/machine", module + "/inventory", module + "/pxe", "sigs.k8s.io/controller-runtime"}},
	} {
		p := list(t, c.main)[0]
		for _, d := range p.Deps {
			for _, f := range c.forbidden {
				if strings.HasPrefix(d, f) {
					t.Errorf("%s links %s (nothing under %s may be in it)", c.main, d, f)
				}
			}
		}
	}
}

// Imports between top-level folders form no cycle, counting only the
// packages' own imports (a _test.go file may import anything).
func TestTopLevelImportsHaveNoCycle(t *testing.T) {
	edges := map[string]map[string][]string{} // from -> to -> example imports
	for _, p := range list(t, "./...") {
		from := folder(p.ImportPath)
		for _, imp := range p.Imports {
			to := folder(imp)
			if to == "" || to == from {
				continue
			}
			if edges[from] == nil {
				edges[from] = map[string][]string{}
			}
			edges[from][to] = append(edges[from][to], p.ImportPath+" -> "+imp)
		}
	}
	if cycle := findCycle(edges); cycle != nil {
		var why []string
		for i := 0; i+1 < len(cycle); i++ {
			why = append(why, edges[cycle[i]][cycle[i+1]][0])
		}
		t.Fatalf("top-level folders import each other in a cycle %s:\n  %s", strings.Join(cycle, " -> "), strings.Join(why, "\n  "))
	}
	if len(edges) < 5 {
		t.Fatalf("only %d folders import others: is go list seeing the tree?", len(edges))
	}
}

// findCycle returns a cycle in the graph as a path whose last node is its
// first, or nil.
func findCycle(edges map[string]map[string][]string) []string {
	const (
		unseen = iota
		onPath
		done
	)
	state := map[string]int{}
	var path []string
	var visit func(n string) []string
	visit = func(n string) []string {
		state[n] = onPath
		path = append(path, n)
		tos := make([]string, 0, len(edges[n]))
		for to := range edges[n] {
			tos = append(tos, to)
		}
		sort.Strings(tos)
		for _, to := range tos {
			switch state[to] {
			case onPath:
				i := slices.Index(path, to)
				return append(slices.Clone(path[i:]), to)
			case unseen:
				if c := visit(to); c != nil {
					return c
				}
			}
		}
		path = path[:len(path)-1]
		state[n] = done
		return nil
	}
	froms := make([]string, 0, len(edges))
	for n := range edges {
		froms = append(froms, n)
	}
	sort.Strings(froms)
	for _, n := range froms {
		if state[n] == unseen {
			if c := visit(n); c != nil {
				return c
			}
		}
	}
	return nil
}

func TestFindCycle(t *testing.T) {
	g := func(pairs ...string) map[string]map[string][]string {
		m := map[string]map[string][]string{}
		for i := 0; i < len(pairs); i += 2 {
			if m[pairs[i]] == nil {
				m[pairs[i]] = map[string][]string{}
			}
			m[pairs[i]][pairs[i+1]] = []string{pairs[i] + "->" + pairs[i+1]}
		}
		return m
	}
	for _, c := range []struct {
		name  string
		graph map[string]map[string][]string
		want  string
	}{
		{"empty", g(), ""},
		{"chain", g("cmd", "machine", "machine", "api", "cmd", "api"), ""},
		{"diamond", g("a", "b", "a", "c", "b", "d", "c", "d"), ""},
		{"two", g("agent", "boot", "boot", "agent"), "agent boot agent"},
		{"three", g("a", "b", "b", "c", "c", "a", "x", "a"), "a b c a"},
	} {
		got := strings.Join(findCycle(c.graph), " ")
		if got != c.want {
			t.Errorf("%s: cycle %q, want %q", c.name, got, c.want)
		}
	}
}

// The renderer is pure: no Kubernetes client, no API types, no I/O beyond
// what it is given.
func TestRenderImportsNoKubernetes(t *testing.T) {
	p := list(t, "./render")[0]
	for _, d := range p.Deps {
		for _, f := range []string{"k8s.io/", "sigs.k8s.io/", module + "/"} {
			if strings.HasPrefix(d, f) {
				t.Errorf("render links %s", d)
			}
		}
	}
}
