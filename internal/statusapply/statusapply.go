// Package statusapply writes one writer's share of an object's status with
// server-side apply: each writer sends only the fields it owns under its
// own field manager, and the API server merges them with everybody else's
// (per entry for listType=map lists such as conditions and leases). A
// field the writer owned and no longer sends is removed.
//
// Fields written before by a non-apply write (an older Anvil's merge
// patches, kubectl edit) stay owned by that manager too: an apply of the
// same value shares them, and leaving them out later does not remove them.
// Writes of a different value take them over (ForceOwnership).
package statusapply

import (
	"context"
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Field is one status field a writer owns: a path of member names below
// status ("leases", "agent/credentialHash"), or one condition.
type Field struct {
	path      []string
	condition string
}

// Path is the status field at these member names.
func Path(names ...string) Field { return Field{path: names} }

// Condition is the status.conditions entry of this type.
func Condition(typ string) Field { return Field{path: []string{"conditions"}, condition: typ} }

// Writer is one writer of status: its field manager and what it owns.
type Writer struct {
	// Manager is the field manager name, "anvil-<writer>".
	Manager string
	// Owns lists every status field the writer sends (when set).
	Owns []Field
}

// Request is one write.
type Request struct {
	// Live is the object as the writer read it (name and namespace are
	// used); it is not modified.
	Live client.Object
	// GVK of Live.
	GVK schema.GroupVersionKind
	// Status holds exactly the writer's fields with their wanted values
	// (JSON-marshalable). Fields of Owns left out are removed.
	Status map[string]any
	// ResourceVersion, if set, is a precondition: the apply fails with a
	// conflict when the object changed since (a compare-and-swap).
	ResourceVersion string
}

// Apply writes r for w and returns the object the API server returned.
func (w Writer) Apply(ctx context.Context, c client.Client, r Request) (*unstructured.Unstructured, error) {
	return w.apply(ctx, c, r, r.Status, r.ResourceVersion)
}

func (w Writer) apply(ctx context.Context, c client.Client, r Request, status map[string]any, rv string) (*unstructured.Unstructured, error) {
	// Through JSON, so typed values (metav1.Time, structs) become plain.
	b, err := json.Marshal(status)
	if err != nil {
		return nil, err
	}
	st := map[string]any{}
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, err
	}
	// An empty object would be applied as null, which the schema refuses
	// (status and its members are objects): leave empty ones out.
	pruneEmpty(st)
	u := &unstructured.Unstructured{Object: map[string]any{}}
	if len(st) > 0 {
		u.Object["status"] = st
	}
	u.SetGroupVersionKind(r.GVK)
	u.SetNamespace(r.Live.GetNamespace())
	u.SetName(r.Live.GetName())
	if rv != "" {
		u.SetResourceVersion(rv)
	}
	if err := c.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(w.Manager), client.ForceOwnership); err != nil {
		return nil, err
	}
	return u, nil
}

func (f Field) ownedIn(set map[string]any) bool {
	cur := set
	for _, n := range f.path {
		next, ok := cur["f:"+n].(map[string]any)
		if !ok {
			return false
		}
		cur = next
	}
	if f.condition == "" {
		return true
	}
	key, _ := json.Marshal(map[string]string{"type": f.condition})
	_, ok := cur["k:"+string(key)]
	return ok
}

// OwnedBy reports whether manager's apply entry in live owns f.
func OwnedBy(live client.Object, manager string, f Field) bool {
	for _, mf := range live.GetManagedFields() {
		if mf.Manager != manager || mf.Operation != metav1.ManagedFieldsOperationApply || mf.FieldsV1 == nil {
			continue
		}
		var set map[string]any
		if json.Unmarshal(mf.FieldsV1.GetRawBytes(), &set) != nil {
			continue
		}
		if st, _ := set["f:status"].(map[string]any); st != nil && f.ownedIn(st) {
			return true
		}
	}
	return false
}

// ToMap is v (a status struct) as the JSON object it marshals to, with the
// omitempty fields left out.
func ToMap(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	m := map[string]any{}
	return m, json.Unmarshal(b, &m)
}

func pruneEmpty(m map[string]any) {
	for k, v := range m {
		if sub, ok := v.(map[string]any); ok {
			pruneEmpty(sub)
			if len(sub) == 0 {
				delete(m, k)
			}
		}
	}
}
