package statusapply

import (
	"context"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TakeOver hands the fields of writers that a non-apply write still owns
// in obj (an older Anvil's merge patches, kubectl edit) to those writers'
// apply entries, by rewriting obj's managedFields (a patch of the object
// itself, with its resourceVersion as precondition). Without it such a
// field stays co-owned: an apply of the same value shares it, and a writer
// that later leaves it out does not remove it (an issued power action
// that never goes). It reports whether it wrote. The moved fields keep
// their values; the writers' next applies decide them.
func TakeOver(ctx context.Context, c client.Client, obj client.Object, gvk schema.GroupVersionKind, writers ...Writer) (bool, error) {
	mfs := obj.GetManagedFields()
	moved := map[string]map[string]any{} // manager -> its added status set
	out := make([]metav1.ManagedFieldsEntry, 0, len(mfs)+len(writers))
	changed := false
	for _, mf := range mfs {
		if mf.Operation == metav1.ManagedFieldsOperationApply || mf.FieldsV1 == nil {
			out = append(out, mf)
			continue
		}
		var set map[string]any
		if json.Unmarshal(mf.FieldsV1.GetRawBytes(), &set) != nil {
			out = append(out, mf)
			continue
		}
		st, _ := set["f:status"].(map[string]any)
		took := false
		for _, w := range writers {
			for _, f := range w.Owns {
				sub, ok := f.take(st)
				if !ok {
					continue
				}
				took = true
				if moved[w.Manager] == nil {
					moved[w.Manager] = map[string]any{}
				}
				f.put(moved[w.Manager], sub)
			}
		}
		if !took {
			out = append(out, mf)
			continue
		}
		changed = true
		for _, w := range writers { // shared fields: every writer that lists them
			for _, f := range w.Owns {
				f.drop(st)
			}
		}
		dropMarkers(st) // a parent it still marks would be left null
		if len(st) == 0 {
			delete(set, "f:status")
		}
		b, err := json.Marshal(set)
		if err != nil {
			return false, err
		}
		mf.FieldsV1 = metav1.NewFieldsV1(string(b))
		out = append(out, mf)
	}
	if !changed {
		return false, nil
	}
	for _, w := range writers {
		add := moved[w.Manager]
		if add == nil {
			continue
		}
		i := -1
		for j, mf := range out {
			if mf.Manager == w.Manager && mf.Operation == metav1.ManagedFieldsOperationApply && mf.Subresource == "status" {
				i = j
			}
		}
		set := map[string]any{}
		if i >= 0 && out[i].FieldsV1 != nil {
			if err := json.Unmarshal(out[i].FieldsV1.GetRawBytes(), &set); err != nil {
				return false, err
			}
		} else {
			out = append(out, metav1.ManagedFieldsEntry{Manager: w.Manager, Operation: metav1.ManagedFieldsOperationApply,
				APIVersion: gvk.GroupVersion().String(), FieldsType: "FieldsV1", Subresource: "status", Time: ptrNow()})
			i = len(out) - 1
		}
		st, _ := set["f:status"].(map[string]any)
		if st == nil {
			st = map[string]any{}
			set["f:status"] = st
		}
		merge(st, add)
		b, err := json.Marshal(set)
		if err != nil {
			return false, err
		}
		out[i].FieldsV1 = metav1.NewFieldsV1(string(b))
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"managedFields": out, "resourceVersion": obj.GetResourceVersion()}})
	if err != nil {
		return false, err
	}
	cp, ok := obj.DeepCopyObject().(client.Object)
	if !ok {
		return false, fmt.Errorf("%T is not an object", obj)
	}
	if err := c.Patch(ctx, cp, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return false, fmt.Errorf("handing status fields of %s to their writers: %w", obj.GetName(), err)
	}
	return true, nil
}

func ptrNow() *metav1.Time { t := metav1.Now(); return &t }

// key is f's last element in a FieldsV1 set.
func (f Field) key() string {
	if f.condition != "" {
		k, _ := json.Marshal(map[string]string{"type": f.condition})
		return "k:" + string(k)
	}
	return "f:" + f.path[len(f.path)-1]
}

// parents are the FieldsV1 names above f's key, below f:status.
func (f Field) parents() []string {
	names := f.path
	if f.condition == "" {
		names = names[:len(names)-1]
	}
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = "f:" + n
	}
	return out
}

// take returns f's subtree in set, if set owns it.
func (f Field) take(set map[string]any) (any, bool) {
	cur := set
	for _, p := range f.parents() {
		next, ok := cur[p].(map[string]any)
		if !ok {
			return nil, false
		}
		cur = next
	}
	v, ok := cur[f.key()]
	return v, ok
}

func (f Field) drop(set map[string]any) {
	cur := set
	for _, p := range f.parents() {
		next, ok := cur[p].(map[string]any)
		if !ok {
			return
		}
		cur = next
	}
	delete(cur, f.key())
}

func (f Field) put(set map[string]any, v any) {
	cur := set
	for _, p := range f.parents() {
		next, ok := cur[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			cur[p] = next
		}
		cur = next
	}
	cur[f.key()] = v
}

// dropMarkers removes the "." entries (ownership of a map or list
// itself) under set, and members left empty.
func dropMarkers(set map[string]any) {
	delete(set, ".")
	for k, v := range set {
		if sub, ok := v.(map[string]any); ok && k != "." {
			hadChildren := len(sub) > 0
			dropMarkers(sub)
			if hadChildren && len(sub) == 0 {
				delete(set, k)
			}
		}
	}
}

func merge(dst, src map[string]any) {
	for k, v := range src {
		if sv, ok := v.(map[string]any); ok {
			if dv, ok := dst[k].(map[string]any); ok {
				merge(dv, sv)
				continue
			}
		}
		dst[k] = v
	}
}
