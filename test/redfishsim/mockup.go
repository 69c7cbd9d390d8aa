package redfishsim

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
)

const rootPath = "/redfish/v1"

// mockup is a DMTF mockup loaded into memory: JSON resources by @odata.id
// (without trailing slash) plus raw files (the CSDL $metadata, registry files).
type mockup struct {
	docs  map[string]map[string]any
	files map[string]rawFile
}

type rawFile struct {
	contentType string
	body        []byte
}

// embedded holds DMTF's public-rackmount1 mockup (BSD-3-Clause, LICENSE.md
// beside it, which lists Anvil's changes: the UefiHttp boot target), so the
// emulator needs nothing outside the repository.
//
//go:embed mockups/LICENSE.md mockups/public-rackmount1
var embedded embed.FS

// PublicRackmount1 is the embedded copy of DMTF's public-rackmount1 mockup,
// the default when Options.MockupDir is empty.
func PublicRackmount1() fs.FS {
	sub, err := fs.Sub(embedded, "mockups/public-rackmount1")
	if err != nil {
		panic(err) // the embed pattern above guarantees the directory
	}
	return sub
}

// loadMockup reads a mockup tree: every dir/index.json is the resource at
// /redfish/v1/dir, index.xml is CSDL, and other *.json files (message
// registries) are served at their own path. name is for errors.
func loadMockup(fsys fs.FS, name string) (*mockup, error) {
	if _, err := fs.Stat(fsys, "index.json"); err != nil {
		return nil, fmt.Errorf("redfishsim: %s has no service root (index.json): %w", name, err)
	}
	m := &mockup{docs: map[string]map[string]any{}, files: map[string]rawFile{}}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		relDir := path.Dir(p)
		urlPath := rootPath
		if relDir != "." {
			urlPath = rootPath + "/" + relDir
		}
		base := d.Name()
		var ctype, at string
		switch {
		case base == "index.json":
			b, err := fs.ReadFile(fsys, p)
			if err != nil {
				return err
			}
			doc, err := decodeJSONObject(b)
			if err != nil {
				return fmt.Errorf("redfishsim: %s: %w", p, err)
			}
			m.docs[urlPath] = doc
			return nil
		case base == "index.xml":
			ctype, at = "application/xml", urlPath
		case strings.HasSuffix(base, ".json") && relDir != ".":
			// Message registries and schema files, served as they are.
			ctype, at = "application/json", urlPath+"/"+base
		default:
			return nil
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		m.files[at] = rawFile{contentType: ctype, body: b}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("redfishsim: mockup %s: %w", name, err)
	}
	return m, nil
}

// decodeJSONObject decodes a JSON object keeping numbers exact.
func decodeJSONObject(b []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	return doc, nil
}

// memberIDs returns the @odata.id of each member of a collection document.
func memberIDs(doc map[string]any) []string {
	var out []string
	members, _ := doc["Members"].([]any)
	for _, m := range members {
		if mm, ok := m.(map[string]any); ok {
			if id, ok := mm["@odata.id"].(string); ok {
				out = append(out, strings.TrimRight(id, "/"))
			}
		}
	}
	return out
}

// deepCopy copies decoded JSON, applying rewrite to every string.
func deepCopy(v any, rewrite func(string) string) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, vv := range t {
			out[k] = deepCopy(vv, rewrite)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, vv := range t {
			out[i] = deepCopy(vv, rewrite)
		}
		return out
	case string:
		if rewrite != nil {
			return rewrite(t)
		}
		return t
	default:
		return v
	}
}

func copyDoc(doc map[string]any) map[string]any {
	return deepCopy(doc, nil).(map[string]any)
}

// subtree lists the resource paths at or below base, sorted.
func (m *mockup) subtree(base string) []string {
	var out []string
	for p := range m.docs {
		if p == base || strings.HasPrefix(p, base+"/") {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// removeSubtree deletes the resources under base.
func (m *mockup) removeSubtree(base string) {
	for _, p := range m.subtree(base) {
		delete(m.docs, p)
	}
}

// systemsPath returns the path of the Systems collection from the root.
func (m *mockup) linkFromRoot(name string) string {
	if l, ok := m.docs[rootPath][name].(map[string]any); ok {
		if id, ok := l["@odata.id"].(string); ok {
			return strings.TrimRight(id, "/")
		}
	}
	return path.Join(rootPath, name)
}
