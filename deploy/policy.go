package deploy

import (
	"bytes"
	"context"
	"embed"
	"fmt"
	"io"
	"io/fs"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

//go:embed policy/*.yaml
var policyFS embed.FS

// Policies returns the admission policies in deploy/policy (the refusal to
// delete a claimed Host), in file order.
func Policies() ([]*unstructured.Unstructured, error) { return objects(policyFS, "policy/*.yaml") }

// objects decodes every YAML document in the files of fsys matching glob,
// in file order, as unstructured objects: applied as the YAML says, since
// typed objects would also send (and own) their zero values.
func objects(fsys embed.FS, glob string) ([]*unstructured.Unstructured, error) {
	names, err := fs.Glob(fsys, glob)
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for _, n := range names {
		b, err := fsys.ReadFile(n)
		if err != nil {
			return nil, err
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
		for {
			u := &unstructured.Unstructured{}
			if err := dec.Decode(&u.Object); err == io.EOF {
				break
			} else if err != nil {
				return nil, fmt.Errorf("%s: %w", n, err)
			}
			if len(u.Object) > 0 {
				out = append(out, u)
			}
		}
	}
	return out, nil
}

// apply server-side applies objs as field manager "anvil".
func apply(ctx context.Context, c client.Client, objs []*unstructured.Unstructured) error {
	for _, o := range objs {
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(o), client.FieldOwner("anvil"), client.ForceOwnership); err != nil {
			return fmt.Errorf("applying %s %s: %w", o.GetKind(), o.GetName(), err)
		}
	}
	return nil
}

// InstallPolicies applies the admission policies with server-side apply.
// The API server enforces a new policy a moment after it is stored.
func InstallPolicies(ctx context.Context, c client.Client) error {
	ps, err := Policies()
	if err != nil {
		return err
	}
	return apply(ctx, c, ps)
}
