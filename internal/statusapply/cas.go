package statusapply

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CASPatch returns a JSON patch (RFC 6902) for a writer whose writes are
// compare-and-swaps on the values it decided on, without conflicting with
// the other writers of the object: it turns before's status into after's,
// but only for the top-level status members named in members (the
// writer's own), one member at a time, each change preceded by a test that
// the member still holds before's value, and a test of each guard path (a
// JSON pointer into the object, such as "/metadata/uid") for before's
// value there. The API server applies it to the object as it stands: a
// concurrent write of any other field costs no conflict and no second
// request, while a concurrent change of a member this write changes, or
// of a guard, fails the test with 422 Invalid. Server-side apply has no
// such value test (its only precondition is the resourceVersion, which
// every other writer's write changes).
//
// A test of null passes on a missing member in the API server's JSON patch
// (evanphx/json-patch v4), which is how a member that before did not have
// is tested. An object with no status at all gets one, after a test of
// /status for null; an object whose status is present but empty then fails
// that test. Callers fall back on 422 to a merge patch with the
// resourceVersion as precondition. ok is false when the members do not
// differ.
func CASPatch(before, after client.Object, members []string, guards ...string) (p client.Patch, ok bool, err error) {
	return CASPatchOf(before, after, []Part{{Path: "/status", Members: members}}, guards...)
}

// Part names an object-valued member of an object (a JSON pointer such as
// "/status", "/spec" or "/metadata/annotations") and the members of it a
// CAS patch may change; nil Members means all of them.
type Part struct {
	Path    string
	Members []string
}

// CASPatchOf is CASPatch over any object-valued members of the object: a
// writer of a Host's spec and labels (spec.consumerRef, spec.bootRequest,
// a label) compares and swaps the values it decided on, and a concurrent
// status write by another process is no conflict. The guards are tested
// first, then each part in order, each changed member tested for before's
// value and set. ok is false when no part differs.
func CASPatchOf(before, after client.Object, parts []Part, guards ...string) (p client.Patch, ok bool, err error) {
	bdoc, err := json.Marshal(before)
	if err != nil {
		return nil, false, err
	}
	adoc, err := json.Marshal(after)
	if err != nil {
		return nil, false, err
	}
	var ops []patchOp
	for _, g := range guards {
		v, err := pointerValue(bdoc, g)
		if err != nil {
			return nil, false, err
		}
		ops = append(ops, patchOp{Op: "test", Path: g, Value: v})
	}
	changed := false
	for _, part := range parts {
		partOps, err := casOps(bdoc, adoc, part)
		if err != nil {
			return nil, false, err
		}
		changed = changed || len(partOps) > 0
		ops = append(ops, partOps...)
	}
	if !changed {
		return nil, false, nil
	}
	return jsonPatch(ops)
}

// casOps turns before's part into after's, member by member.
func casOps(bdoc, adoc []byte, part Part) ([]patchOp, error) {
	old, err := members(bdoc, part)
	if err != nil {
		return nil, err
	}
	cur, err := members(adoc, part)
	if err != nil {
		return nil, err
	}
	all, err := members(bdoc, Part{Path: part.Path})
	if err != nil {
		return nil, err
	}
	var ops []patchOp
	if len(all) == 0 {
		if len(cur) == 0 {
			return nil, nil
		}
		raw, err := json.Marshal(cur)
		if err != nil {
			return nil, err
		}
		return append(ops, patchOp{Op: "test", Path: part.Path, Value: null}, patchOp{Op: "add", Path: part.Path, Value: raw}), nil
	}
	keys := make([]string, 0, len(old)+len(cur))
	for k := range old {
		keys = append(keys, k)
	}
	for k := range cur {
		if _, ok := old[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		o, n := old[k], cur[k]
		if bytes.Equal(o, n) {
			continue
		}
		path := part.Path + "/" + escapePointer.Replace(k)
		if o == nil {
			o = null
		}
		ops = append(ops, patchOp{Op: "test", Path: path, Value: o})
		if n == nil {
			ops = append(ops, patchOp{Op: "remove", Path: path})
		} else {
			ops = append(ops, patchOp{Op: "add", Path: path, Value: n})
		}
	}
	return ops, nil
}

var null = json.RawMessage("null")

type patchOp struct {
	Op    string          `json:"op"`
	Path  string          `json:"path"`
	Value json.RawMessage `json:"value,omitempty"`
}

func jsonPatch(ops []patchOp) (client.Patch, bool, error) {
	b, err := json.Marshal(ops)
	if err != nil {
		return nil, false, err
	}
	return client.RawPatch(types.JSONPatchType, b), true, nil
}

// members is the part of doc at part.Path as its members (only those in
// part.Members, if set), each as the JSON that encoding/json writes for it
// (deterministic, so equal values are equal bytes).
func members(doc []byte, part Part) (map[string]json.RawMessage, error) {
	raw, err := pointerValue(doc, part.Path)
	if err != nil {
		return nil, err
	}
	m := map[string]json.RawMessage{}
	if !bytes.Equal(raw, null) {
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, fmt.Errorf("%s is not an object: %w", part.Path, err)
		}
	}
	if part.Members != nil {
		for k := range m {
			if !slices.Contains(part.Members, k) {
				delete(m, k)
			}
		}
	}
	return m, nil
}

// pointerValue resolves a JSON pointer of object members (no array
// indices) in doc; a missing member is null.
func pointerValue(doc []byte, ptr string) (json.RawMessage, error) {
	if !strings.HasPrefix(ptr, "/") {
		return nil, fmt.Errorf("status patch guard %q is not a JSON pointer", ptr)
	}
	cur := json.RawMessage(doc)
	for _, part := range strings.Split(ptr[1:], "/") {
		part = unescapePointer.Replace(part)
		var m map[string]json.RawMessage
		if err := json.Unmarshal(cur, &m); err != nil || m[part] == nil {
			return null, nil
		}
		cur = m[part]
	}
	return cur, nil
}

// RFC 6901 escaping of one reference token.
var (
	escapePointer   = strings.NewReplacer("~", "~0", "/", "~1")
	unescapePointer = strings.NewReplacer("~1", "/", "~0", "~")
)
