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
func Policies() ([]*unstructured.Unstructured, error) {
	names, err := fs.Glob(policyFS, "policy/*.yaml")
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for _, n := range names {
		b, err := policyFS.ReadFile(n)
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

// InstallPolicies applies the admission policies with server-side apply.
// The API server enforces a new policy a moment after it is stored.
func InstallPolicies(ctx context.Context, c client.Client) error {
	ps, err := Policies()
	if err != nil {
		return err
	}
	for _, p := range ps {
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(p), client.FieldOwner("anvil"), client.ForceOwnership); err != nil {
			return fmt.Errorf("applying %s %s: %w", p.GetKind(), p.GetName(), err)
		}
	}
	return nil
}
