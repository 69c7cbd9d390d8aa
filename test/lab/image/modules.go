package image

import (
	"debug/elf"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"
)

// The kernel .deb carries no modules.dep (depmod runs at install), so the
// load order comes from each module's own .modinfo "depends=" entry.

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

// moduleDepends reads the "depends=" entry of a module's .modinfo section.
func moduleDepends(path string) ([]string, error) {
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
	for _, kv := range strings.Split(string(data), "\x00") {
		if v, ok := strings.CutPrefix(kv, "depends="); ok {
			var out []string
			for _, d := range strings.Split(v, ",") {
				if d = strings.TrimSpace(d); d != "" {
					out = append(out, normModule(d))
				}
			}
			return out, nil
		}
	}
	return nil, nil
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
