package inventory

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
)

// StatusPatch returns a JSON patch (RFC 6902) that turns before's status
// into after's one top-level status field at a time, each change preceded
// by a test that the field still holds before's value, and a test of each
// guard path (a JSON pointer into the Host, such as "/metadata/uid") for
// before's value there. The API server applies it to the Host as it stands:
// a concurrent write of any other field costs no conflict, no re-read and
// no second request, while a concurrent change of a field this write
// changes, or of a guard, fails the test with 422 Invalid. Many writers
// share a Host's status (DHCP leases, boot credentials, the controllers),
// and through a boot storm a resourceVersion precondition made most of
// their writes conflict.
//
// A test of null passes on a missing member in the API server's JSON patch
// (evanphx/json-patch v4), which is how a field that before did not have is
// tested. A Host with no status at all gets one whole, after a test of
// /status for null; a Host whose status is present but empty then fails
// that test. Callers fall back on 422 to a merge patch with the
// resourceVersion as precondition. ok is false when the statuses do not
// differ.
func StatusPatch(before, after *metalv1.Host, guards ...string) (p client.Patch, ok bool, err error) {
	old, _, err := fields(before.Status)
	if err != nil {
		return nil, false, err
	}
	cur, curRaw, err := fields(after.Status)
	if err != nil {
		return nil, false, err
	}
	var ops []patchOp
	if len(guards) > 0 {
		whole, err := json.Marshal(before)
		if err != nil {
			return nil, false, err
		}
		for _, g := range guards {
			v, err := pointerValue(whole, g)
			if err != nil {
				return nil, false, err
			}
			ops = append(ops, patchOp{Op: "test", Path: g, Value: v})
		}
	}
	if len(old) == 0 {
		if len(cur) == 0 {
			return nil, false, nil
		}
		ops = append(ops, patchOp{Op: "test", Path: "/status", Value: null}, patchOp{Op: "add", Path: "/status", Value: curRaw})
		return jsonPatch(ops)
	}
	keys := make([]string, 0, len(old)+len(cur))
	for k := range old {
		keys = append(keys, k)
	}
	for k := range cur {
		if _, dup := old[k]; !dup {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	changed := false
	for _, k := range keys {
		o, n := old[k], cur[k]
		if bytes.Equal(o, n) {
			continue
		}
		changed = true
		path := "/status/" + escapePointer.Replace(k)
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
	if !changed {
		return nil, false, nil
	}
	return jsonPatch(ops)
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

// fields is the status as its top-level members, each as the JSON that
// encoding/json writes for it (deterministic, so equal values are equal
// bytes).
func fields(s metalv1.HostStatus) (map[string]json.RawMessage, json.RawMessage, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, nil, err
	}
	m := map[string]json.RawMessage{}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, nil, err
	}
	return m, b, nil
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
