package image

import (
	"debug/elf"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// The kernel .deb carries no modules.dep or modules.alias (depmod runs at
// install), so the load order comes from each module's own .modinfo:
// "depends=" (hard dependencies) and "softdep=pre:" (what modprobe loads
// first; ext4 and jbd2 name "crypto-crc32c", an alias, which their
// metadata checksums need and which no modprobe in the initramfs would
// load on request). An alias resolves to the module whose "alias=" it is.

var (
	indexMu sync.Mutex
	indexes = map[string]map[string]string{} // modules dir -> name -> path
)

func moduleIndex(dir string) (map[string]string, error) {
	indexMu.Lock()
	defer indexMu.Unlock()
	if idx, ok := indexes[dir]; ok {
		return idx, nil
	}
	idx := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if name, ok := strings.CutSuffix(d.Name(), ".ko"); ok && !d.IsDir() {
			idx[normModule(name)] = p
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("lab image: indexing kernel modules in %s: %w", dir, err)
	}
	indexes[dir] = idx
	return idx, nil
}

// normModule: module names use "_" and "-" interchangeably.
func normModule(n string) string { return strings.ReplaceAll(n, "-", "_") }

func modulePath(dir, name string) (string, error) {
	idx, err := moduleIndex(dir)
	if err != nil {
		return "", err
	}
	p, ok := idx[normModule(name)]
	if !ok {
		return "", fmt.Errorf("lab image: kernel module %s not found under %s (built in, or compressed?)", name, dir)
	}
	return p, nil
}

// modinfo returns the values of key in a module's .modinfo section.
func modinfo(path, key string) ([]string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("lab image: reading module %s: %w", path, err)
	}
	defer f.Close()
	sec := f.Section(".modinfo")
	if sec == nil {
		return nil, nil
	}
	data, err := sec.Data()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, kv := range strings.Split(string(data), "\x00") {
		if v, ok := strings.CutPrefix(kv, key+"="); ok {
			out = append(out, v)
		}
	}
	return out, nil
}

// moduleDepends reads a module's "depends=" entry.
func moduleDepends(path string) ([]string, error) {
	vals, err := modinfo(path, "depends")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, v := range vals {
		for _, d := range strings.Split(v, ",") {
			if d = strings.TrimSpace(d); d != "" {
				out = append(out, normModule(d))
			}
		}
	}
	return out, nil
}

// softdepsPre reads the names after "pre:" in a module's "softdep="
// entries ("pre: a b post: c"): modules or aliases.
func softdepsPre(path string) ([]string, error) {
	vals, err := modinfo(path, "softdep")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, v := range vals {
		pre := false
		for _, w := range strings.Fields(v) {
			switch w {
			case "pre:":
				pre = true
			case "post:":
				pre = false
			default:
				if pre {
					out = append(out, w)
				}
			}
		}
	}
	return out, nil
}

var (
	aliasMu      sync.Mutex
	aliasIndexes = map[string]map[string][]string{} // modules dir -> alias -> module names
)

// resolveAlias returns the module name for a module name or alias: for an
// alias several modules provide, the one outside kernel/arch (a generic
// implementation loads on any CPU; arch-specific ones, crc32c-intel say,
// refuse CPUs without their instructions), then the first by name. ok is
// false when nothing provides it (built in, or absent).
func resolveAlias(dir, name string) (string, bool, error) {
	idx, err := moduleIndex(dir)
	if err != nil {
		return "", false, err
	}
	if _, ok := idx[normModule(name)]; ok {
		return normModule(name), true, nil
	}
	aliasMu.Lock()
	defer aliasMu.Unlock()
	aliases, ok := aliasIndexes[dir]
	if !ok {
		aliases = map[string][]string{}
		names := make([]string, 0, len(idx))
		for n := range idx {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			vals, err := modinfo(idx[n], "alias")
			if err != nil {
				return "", false, err
			}
			for _, a := range vals {
				aliases[a] = append(aliases[a], n)
			}
		}
		aliasIndexes[dir] = aliases
	}
	cands := aliases[name]
	if len(cands) == 0 {
		return "", false, nil
	}
	for _, c := range cands {
		if !strings.Contains(filepath.ToSlash(idx[c]), "/kernel/arch/") {
			return c, true, nil
		}
	}
	return cands[0], true, nil
}

// moduleOrder returns wanted plus their dependencies, each after what it
// depends on, keeping wanted's order otherwise.
func moduleOrder(dir string, wanted []string) ([]string, error) {
	var out []string
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(n string, depth int) error
	visit = func(n string, depth int) error {
		n = normModule(n)
		switch state[n] {
		case 2:
			return nil
		case 1:
			return fmt.Errorf("lab image: kernel modules depend on each other in a cycle at %s", n)
		}
		if depth > 32 {
			return fmt.Errorf("lab image: kernel module dependencies too deep at %s", n)
		}
		state[n] = 1
		p, err := modulePath(dir, n)
		if err != nil {
			return err
		}
		deps, err := moduleDepends(p)
		if err != nil {
			return err
		}
		soft, err := softdepsPre(p)
		if err != nil {
			return err
		}
		for _, sd := range soft {
			// A soft dependency nothing provides is built in, or optional.
			if m, ok, err := resolveAlias(dir, sd); err != nil {
				return err
			} else if ok {
				deps = append(deps, m)
			}
		}
		for _, d := range deps {
			if err := visit(d, depth+1); err != nil {
				return err
			}
		}
		state[n] = 2
		out = append(out, n)
		return nil
	}
	for _, w := range wanted {
		if err := visit(w, 0); err != nil {
			return nil, err
		}
	}
	return out, nil
}
